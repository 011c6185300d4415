/**
 * Compact(R): kvstore.go's compact and its FIFO scheduler, and kvstore_compaction.go's physical
 * half. A request sets the watermark at once and persists it as scheduledCompactRev; a scoped
 * worker fiber then runs the compactions in request order. Physically, the index is compacted first
 * (it says which revision of every key survives: the latest <= R, a tombstone at exactly R
 * included); then the backend "key" bucket is swept over revisions <= R in batches, deleting what
 * the index no longer keeps. Each batch is its own backend write; the last one also records
 * finishedCompactRev in meta, so an interrupted compaction resumes on the next open.
 */
import { Deferred, Effect, FiberId, Queue, type Scope } from "effect"
import type { BackendError, BackendShape, WriteOp } from "../backend/backend.js"
import { type EtcdError, Errors } from "../errors.js"
import { supervised } from "../supervision/fatal.js"
import { revisionKey } from "./key-index.js"
import type { CompactResponse } from "./kv.js"
import { bytesToMain, bytesToSub, revToBytes } from "./kv-codec.js"
import type { KvStore } from "./kvstore-state.js"
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

interface CompactionJob {
  readonly rev: number
  readonly done: Deferred.Deferred<void, EtcdError>
}

/**
 * Starts the store's compaction worker in the current scope (resuming a compaction scheduled but
 * not finished before the last shutdown, when `marks` say so) and returns Compact. Scope close
 * stops the store and fails the compactions still waiting.
 */
export const makeCompactor = (
  s: KvStore,
  marks: { readonly finished: number; readonly scheduled: number }
): Effect.Effect<
  (revision: number, physical?: boolean) => Effect.Effect<CompactResponse, EtcdError>,
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const compactions = yield* Queue.unbounded<CompactionJob>()

    const compact = (revision: number, physical = false): Effect.Effect<CompactResponse, EtcdError> =>
      Effect.suspend(() => {
        if (s.stopped !== undefined) return Effect.fail(s.stopped)
        // never let a malformed number become the persisted watermark
        if (!Number.isSafeInteger(revision)) return Effect.fail(revision > 0 ? Errors.futureRev() : Errors.compacted())
        if (revision <= s.compactMainRev) return Effect.fail(Errors.compacted())
        if (revision > s.committedRev) return Effect.fail(Errors.futureRev())
        s.compactMainRev = revision
        let durable: Effect.Effect<void, BackendError>
        try {
          durable = s.backend.write([{ bucket: "meta", key: SCHEDULED_COMPACT_KEY, value: encodeCompactRev(revision) }])
        } catch (e) {
          return Effect.zipRight(Effect.logError("mvcc: backend write threw", e), Effect.fail(s.fail()))
        }
        const done = Deferred.unsafeMake<void, EtcdError>(FiberId.none)
        compactions.unsafeOffer({ rev: revision, done })
        const response = { header: { revision: s.committedRev } }
        // the watermark's batch is durable, or the store stopped
        const persisted = Effect.uninterruptible(
          Effect.matchEffect(durable, {
            onFailure: (e) =>
              Effect.zipRight(Effect.logError("mvcc: backend write failed; store stopped", e), Effect.fail(s.fail())),
            onSuccess: () => Effect.void
          })
        )
        return physical
          ? Effect.as(Effect.zipRight(persisted, Deferred.await(done)), response)
          : Effect.as(persisted, response)
      })

    // the FIFO compaction scheduler
    const compactionWrite = (ops: ReadonlyArray<WriteOp>): Effect.Effect<void, BackendError> =>
      Effect.suspend(() => {
        if (s.stopped !== undefined) return Effect.void
        return s.backend.write(ops)
      })
    let currentJob: CompactionJob | undefined
    const runJob = (job: CompactionJob): Effect.Effect<void> =>
      Effect.suspend(() => {
        currentJob = job
        if (s.stopped !== undefined) return Deferred.fail(job.done, s.stopped)
        return runCompaction(s.index, s.backend, compactionWrite, job.rev, s.limits.compactionBatchLimit).pipe(
          Effect.matchEffect({
            onFailure: (e) =>
              Effect.zipRight(
                Effect.logError("mvcc: compaction write failed; store stopped", e),
                Deferred.fail(job.done, s.fail())
              ),
            onSuccess: () => Deferred.succeed(job.done, undefined)
          }),
          Effect.asVoid
        )
      })
    // supervised: a dead worker would leave every later compaction waiting (the member fails instead)
    yield* Effect.forkScoped(
      supervised("mvcc compaction loop", Effect.forever(Effect.flatMap(Queue.take(compactions), runJob)))
    )

    // resume a compaction that was scheduled but not finished before the last shutdown
    if (marks.scheduled > marks.finished) {
      s.compactMainRev = marks.scheduled
      compactions.unsafeOffer({
        rev: marks.scheduled,
        done: Deferred.unsafeMake<void, EtcdError>(FiberId.none)
      })
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        s.stopped ??= Errors.stopped()
        const stopped = s.stopped
        const left = yield* Queue.takeAll(compactions)
        if (currentJob !== undefined) yield* Deferred.fail(currentJob.done, stopped)
        for (const job of left) yield* Deferred.fail(job.done, stopped)
        yield* Queue.shutdown(compactions)
      })
    )
    return compact
  })
