/**
 * This member's identity: cluster id, member id and raft term, kept in the backend's meta bucket
 * so they are stable per data dir (etcd keeps them in its WAL and "members" bucket).
 *
 * - Ids are random non-zero 64-bit numbers drawn when the data dir is new (etcd derives its ids
 *   from peer URLs, cluster token and time; only their stability matters to clients).
 * - The raft term starts at 2, as a fresh one-member etcd's does after its first election, and
 *   grows by one on every start, as a restarted one-member etcd's does: clients can tell restarts
 *   apart. The updated term is durable before the server accepts calls.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { Backend, type BackendError } from "../backend/backend.js"

export interface MemberIdentity {
  readonly clusterId: bigint
  readonly memberId: bigint
  readonly raftTerm: bigint
}

/** The meta bucket key of the identity record (24 bytes: cluster id, member id, term; big endian). */
export const MEMBER_KEY = new Uint8Array(Buffer.from("etcd-effect/member", "latin1"))

const FIRST_TERM = 2n

const randomId = (): bigint => {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE(0)
    if (id !== 0n) return id
  }
}

export const encodeIdentity = (m: MemberIdentity): Uint8Array => {
  const b = Buffer.alloc(24)
  b.writeBigUInt64BE(m.clusterId, 0)
  b.writeBigUInt64BE(m.memberId, 8)
  b.writeBigUInt64BE(m.raftTerm, 16)
  return new Uint8Array(b)
}

export const decodeIdentity = (bytes: Uint8Array): MemberIdentity | undefined => {
  if (bytes.byteLength !== 24) return undefined
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { clusterId: b.readBigUInt64BE(0), memberId: b.readBigUInt64BE(8), raftTerm: b.readBigUInt64BE(16) }
}

/** Reads (or creates) the identity, advances the term, and waits until that is durable. */
export const startMember: Effect.Effect<MemberIdentity, BackendError, Backend> = Effect.gen(function* () {
  const backend = yield* Backend
  const stored = backend.get("meta", MEMBER_KEY)
  const previous = stored === undefined ? undefined : decodeIdentity(stored)
  const identity: MemberIdentity =
    previous === undefined
      ? { clusterId: randomId(), memberId: randomId(), raftTerm: FIRST_TERM }
      : { ...previous, raftTerm: previous.raftTerm + 1n }
  yield* backend.write([{ bucket: "meta", key: MEMBER_KEY, value: encodeIdentity(identity) }])
  return identity
})
