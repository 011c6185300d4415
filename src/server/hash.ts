/**
 * etcd's Hash and HashKV over our backend. The "key" bucket is byte-compatible with etcd's bolt
 * layout (src/mvcc/kv-codec.ts), so HashKV is etcd's exact algorithm (mvcc store.HashByRev) and
 * gives the same hash as an etcd that applied the same writes. Hash covers our whole backend and
 * is only comparable between etcd-effect members.
 */
import type { BackendShape, BucketName } from "../backend/backend.js"
import { type EtcdError, Errors } from "../errors.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import { bytesToMain, decodeKeyValue, isTombstoneKey } from "../mvcc/kv-codec.js"
import { keyString } from "../mvcc/key-string.js"
import { crc32cUpdate } from "../backend/crc32c.js"
import { MEMBER_KEY } from "./member.js"

const CHUNK = 10000
const EMPTY = new Uint8Array(0)

/** Every entry of a bucket in key order, read in chunks. */
function* entries(backend: BackendShape, bucket: BucketName): Generator<readonly [Uint8Array, Uint8Array]> {
  let start: Uint8Array = EMPTY
  for (;;) {
    const chunk = backend.range(bucket, start, undefined, CHUNK)
    for (const e of chunk) yield e
    if (chunk.length < CHUNK) return
    const last = chunk[chunk.length - 1]![0]
    const next = new Uint8Array(last.length + 1)
    next.set(last)
    start = next
  }
}

export interface HashKVResult {
  readonly hash: number
  /** the store revision when hashed (the response header's revision) */
  readonly currentRevision: number
  /** the compaction watermark (-1 when never compacted) */
  readonly compactRevision: number
  /** the revision hashed up to */
  readonly hashRevision: number
}

/**
 * HashByRev: crc32c of "key" then, for every key-bucket entry with main revision <= rev, its key
 * and value — except, at or below the compaction watermark, entries a compaction at `rev` would
 * not keep (per key: the latest revision <= rev, unless it is a tombstone; when nothing is kept,
 * every entry counts), and the tombstones at exactly the watermark. One synchronous pass, so the
 * view is consistent, as etcd's read transaction is.
 *
 * Revisions: 0 is the head; at or below the compact revision ErrCompacted (etcd 3.4's `rev <=
 * compactRev`; 3.5+ answers at exactly the compact revision, and 3.6 at any of its last ten
 * compactions from a cache filled when it compacted — docs/operating.md, "HashKV"); past the head
 * ErrFutureRev.
 */
export const hashKV = (store: MvccStoreShape, backend: BackendShape, revision: number): HashKVResult | EtcdError => {
  const compactRev = store.compactRevision()
  const currentRev = store.rev()
  if (revision > 0 && revision <= compactRev) return Errors.compacted()
  if (revision > 0 && revision > currentRev) return Errors.futureRev()
  const rev = revision === 0 ? currentRev : revision

  // keep: per key, the latest revision <= rev (as its bucket key), dropped when a tombstone
  const latest = new Map<string, { rk: Uint8Array; tomb: boolean }>()
  for (const [rk, v] of entries(backend, "key")) {
    if (bytesToMain(rk) > rev) break
    latest.set(keyString(decodeKeyValue(v).key), { rk, tomb: isTombstoneKey(rk) })
  }
  const keep = new Set<string>()
  for (const { rk, tomb } of latest.values()) if (!tomb) keep.add(keyString(rk.subarray(0, 17)))

  let h = crc32cUpdate(0, KEY_BUCKET)
  for (const [rk, v] of entries(backend, "key")) {
    const main = bytesToMain(rk)
    if (main > rev) break
    if (main <= compactRev && keep.size > 0 && !keep.has(keyString(rk.subarray(0, 17)))) continue
    // a tombstone at the compact revision: the compaction keeps it (a watch from there sees the
    // DELETE), etcd 3.4 <= 3.4.33 and 3.5 <= 3.5.15 drop it, so etcd 3.6 leaves it out (hash.go)
    if (main === compactRev && isTombstoneKey(rk)) continue
    h = crc32cUpdate(h, rk)
    h = crc32cUpdate(h, v)
  }
  return { hash: h, currentRevision: currentRev, compactRevision: compactRev, hashRevision: rev }
}

const KEY_BUCKET = new Uint8Array(Buffer.from("key", "latin1"))

/** crc32c over every bucket (name, then keys and values) in name order, leaving out our member record. */
export const hashBackend = (backend: BackendShape): number => {
  let h = 0
  for (const bucket of ["auth", "authRoles", "authUsers", "key", "lease", "meta"] as const) {
    h = crc32cUpdate(h, Buffer.from(bucket, "latin1"))
    for (const [k, v] of entries(backend, bucket)) {
      if (bucket === "meta" && Buffer.compare(k, MEMBER_KEY) === 0) continue
      h = crc32cUpdate(h, k)
      h = crc32cUpdate(h, v)
    }
  }
  return h
}
