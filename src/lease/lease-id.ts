/**
 * Lease ids: int64 on the wire, bigint here. 0 is etcd's NoLease ("no lease attached").
 * The "lease" bucket is keyed by the id's 8 big-endian bytes (two's complement, as etcd's
 * schema.leaseIdToBytes writes it).
 */

/** etcd's NoLease: the absence of a lease. */
export const NoLease = 0n

const INT64_MIN = -(1n << 63n)
const INT64_MAX = (1n << 63n) - 1n

/** True when `id` fits etcd's int64 LeaseID. */
export const isInt64 = (id: bigint): boolean => id >= INT64_MIN && id <= INT64_MAX

/** The lease bucket key of `id`: 8 bytes, big-endian, two's complement. */
export const leaseIdToBytes = (id: bigint): Uint8Array => {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, id))
  return out
}

/** The id a lease bucket key names (undefined if the key is not 8 bytes). */
export const bytesToLeaseId = (key: Uint8Array): bigint | undefined =>
  key.length === 8 ? new DataView(key.buffer, key.byteOffset, 8).getBigInt64(0) : undefined

/**
 * Builds a positive, non-zero 63-bit id from two random draws: `high53` uniform in
 * [0, 2^53) and `low10` uniform in [0, 2^10). etcd masks its generated ids to 63 bits so they
 * stay positive; we do the same with random bits instead of its member-prefixed counter.
 */
export const composeAutoId = (high53: number, low10: number): bigint => (BigInt(high53) << 10n) | BigInt(low10 & 0x3ff)
