/**
 * The stream Maintenance.Snapshot sends, as etcd 3.5 sends it: a bbolt database with etcd's
 * buckets and encodings (etcd-buckets.ts), followed by the SHA-256 of its bytes, which
 * `etcdctl snapshot save` checks and `snapshot restore` verifies.
 */
import { createHash } from "node:crypto"
import { writeBolt } from "../../backend/bbolt/index.js"
import { decodeSnapshot } from "../../backend/snapshot-format.js"
import { type SnapshotMember, toEtcdBuckets } from "./etcd-buckets.js"

/** etcd's snapshot bytes from the backend's consistent copy (our own format). */
export const etcdSnapshot = (
  ours: Uint8Array,
  member: SnapshotMember,
  revision: number,
  apiVersion: string
): Uint8Array => {
  const db = writeBolt(toEtcdBuckets(decodeSnapshot(ours), member, revision, apiVersion))
  return new Uint8Array(Buffer.concat([db, createHash("sha256").update(db).digest()]))
}
