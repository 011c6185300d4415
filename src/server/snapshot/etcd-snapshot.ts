/**
 * The stream Maintenance.Snapshot sends, as etcd 3.5 sends it: a bbolt database with etcd's
 * buckets and encodings (etcd-buckets.ts), followed by the SHA-256 of its bytes, which
 * `etcdctl snapshot save` checks and `snapshot restore` verifies.
 *
 * It is read straight from the backend in one synchronous pass — each bucket's range once, the
 * revision beside them — so it is one consistent view (no batch is staged and no LMDB commit lands
 * in between: backend.ts), built once: no copy of the store in another format on the way.
 */
import { createHash } from "node:crypto"
import type { BackendShape } from "../../backend/backend.js"
import { writeBoltPages } from "../../backend/bbolt/index.js"
import { type SnapshotMember, toEtcdBuckets } from "./etcd-buckets.js"

const EVERYTHING = new Uint8Array(0)

/** etcd's snapshot bytes in order, as pieces: the bolt file's pages, then the sha256 of them all. */
export const etcdSnapshot = (
  backend: Pick<BackendShape, "range">,
  member: SnapshotMember,
  revision: number,
  apiVersion: string
): Array<Uint8Array> => {
  const pages = writeBoltPages(
    toEtcdBuckets((bucket) => backend.range(bucket, EVERYTHING, undefined), member, revision, apiVersion)
  )
  const hash = createHash("sha256")
  for (const p of pages) hash.update(p)
  return [...pages, hash.digest()]
}

/**
 * The pieces as consecutive messages of `size` bytes (the last one shorter): a view where one piece
 * holds the whole message, else a copy of the pieces it spans.
 */
export function* messagesOf(pieces: ReadonlyArray<Uint8Array>, size: number): Generator<Uint8Array> {
  let i = 0
  let at = 0
  while (i < pieces.length) {
    const piece = pieces[i]!
    if (piece.byteLength - at >= size) {
      yield piece.subarray(at, at + size)
      at += size
    } else {
      const parts: Array<Uint8Array> = []
      let n = 0
      while (n < size && i < pieces.length) {
        const p = pieces[i]!
        const take = Math.min(size - n, p.byteLength - at)
        parts.push(p.subarray(at, at + take))
        n += take
        at += take
        if (at === p.byteLength) {
          i++
          at = 0
        }
      }
      if (n > 0) yield Buffer.concat(parts, n)
    }
    if (i < pieces.length && at === pieces[i]!.byteLength) {
      i++
      at = 0
    }
  }
}
