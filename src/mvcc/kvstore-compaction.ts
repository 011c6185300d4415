/**
 * kvstore_compaction.go: the physical half of Compact(R). The index is compacted first (it says
 * which revision of every key survives: the latest <= R, a tombstone at exactly R included); then
 * the backend "key" bucket is swept over revisions <= R in batches, deleting what the index no
 * longer keeps. Each batch is its own backend write; the last one also records
 * finishedCompactRev in meta, so an interrupted compaction resumes on the next open.
 */
import { Effect } from "effect"
import type { BackendError, BackendShape, WriteOp } from "../backend/backend.js"
import { revisionKey } from "./key-index.js"
import { bytesToMain, bytesToSub, revToBytes } from "./kv-codec.js"
import type { TreeIndex } from "./tree-index.js"

/** etcd's meta bucket keys (schema.ScheduledCompactKeyName / FinishedCompactKeyName). */
export const SCHEDULED_COMPACT_KEY = new Uint8Array(Buffer.from("scheduledCompactRev", "latin1"))
export const FINISHED_COMPACT_KEY = new Uint8Array(Buffer.from("finishedCompactRev", "latin1"))

/** etcd stores compaction marks as a 17-byte revision {main: R, sub: 0}. */
export const encodeCompactRev = (rev: number): Uint8Array => revToBytes(rev, 0)
export const decodeCompactRev = (b: Uint8Array): number => bytesToMain(b)

/** The smallest key greater than `k`. */
const keyAfter = (k: Uint8Array): Uint8Array => {
  const next = new Uint8Array(k.length + 1)
  next.set(k)
  return next
}

/**
 * Removes superseded revisions <= rev. `write` stages a batch and waits for it to be durable
 * (the store routes it so a failure stops the store). Yields between batches so writers interleave.
 */
export const runCompaction = (
  index: TreeIndex,
  backend: BackendShape,
  write: (ops: ReadonlyArray<WriteOp>) => Effect.Effect<void, BackendError>,
  rev: number,
  batchLimit: number
): Effect.Effect<void, BackendError> =>
  Effect.suspend(() => {
    const keep = index.compact(rev)
    const end = revToBytes(rev + 1, 0)
    let start: Uint8Array = revToBytes(0, 0)
    const step: Effect.Effect<boolean, BackendError> = Effect.suspend(() => {
      const entries = backend.range("key", start, end, batchLimit)
      const ops: Array<WriteOp> = []
      for (const [k] of entries) {
        if (!keep.has(revisionKey(bytesToMain(k), bytesToSub(k)))) ops.push({ bucket: "key", key: k, value: undefined })
      }
      const last = entries.length < batchLimit
      if (last) ops.push({ bucket: "meta", key: FINISHED_COMPACT_KEY, value: encodeCompactRev(rev) })
      else start = keyAfter(entries[entries.length - 1]![0])
      const w = ops.length > 0 ? write(ops) : Effect.void
      return Effect.as(w, last)
    })
    const loop = (): Effect.Effect<void, BackendError> =>
      Effect.flatMap(step, (last) => (last ? Effect.void : Effect.zipRight(Effect.yieldNow(), Effect.suspend(loop))))
    return loop()
  })
