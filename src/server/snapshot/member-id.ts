/**
 * etcd's member and cluster ids as `etcdutl snapshot restore` derives them (membership/member.go
 * computeMemberID, cluster.go genID): a member's id is the first 8 bytes (big endian) of
 * sha1(sorted peer URLs joined · cluster token); the cluster's, of sha1(the sorted member ids, 8
 * bytes each). The same flags give the same ids as etcd's, so a member restored here and one
 * restored by etcdutl agree.
 */
import { createHash } from "node:crypto"

const first8 = (data: Buffer): bigint => createHash("sha1").update(data).digest().readBigUInt64BE(0)

export const computeMemberId = (peerUrls: ReadonlyArray<string>, token: string): bigint =>
  first8(Buffer.from([...peerUrls].sort().join("") + token, "utf8"))

export const computeClusterId = (memberIds: ReadonlyArray<bigint>): bigint => {
  const sorted = [...memberIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const b = Buffer.alloc(8 * sorted.length)
  sorted.forEach((id, i) => b.writeBigUInt64BE(id, 8 * i))
  return first8(b)
}
