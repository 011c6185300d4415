/**
 * The LMDB apply (etcd's batchTx commit, batch_tx.go, on backend.go's batch interval and limit):
 * every `commitIntervalMs` (100 ms, etcd's batch interval), or sooner once `commitLimitOps` ops
 * wait (10000, etcd's batch limit) or someone waits for it (close, defragment), all WAL-durable
 * batches go into ONE LMDB transaction, together with the applied mark (lmdb-env.ts). Once that
 * transaction is durable the overlay entries it covers are dropped (unless a later batch rewrote
 * the key) and WAL segments wholly at or below the mark are deleted. One transaction is in flight
 * at a time. A failed one is fail-stop (lmdb-core.ts); its batches stay acknowledged, in the WAL.
 */
import { Effect } from "effect"
import { errorText } from "../errors.js"
import { BackendError } from "./backend.js"
import { lmdbCommitCause } from "./disk-full.js"
import type { LmdbCore } from "./lmdb-core.js"
import { putAppliedMark, putOps } from "./lmdb-env.js"
import type { StagedBatch } from "./staged-batch.js"
import { TRACE_PUT_EVENT, traceApply, traceNow } from "../debug/put-event-trace.js"

/** Starts the transaction now when it is due, else arms the interval's timer. */
export const scheduleApply = (c: LmdbCore): void => {
  if (c.applying !== undefined || c.unapplied.length === 0 || c.failure !== undefined) return
  if (c.unappliedOps >= c.commitLimitOps || c.applyWaiters.length > 0) return startApply(c)
  if (c.applyTimer === undefined) {
    c.applyTimer = setTimeout(c.startApply, c.commitIntervalMs)
    // The WAL holds these batches: an idle process may exit, the next open replays them.
    c.applyTimer.unref()
  }
}

/** Puts every WAL-durable batch into one LMDB transaction (the core's `startApply` task). */
export const startApply = (c: LmdbCore): void => {
  c.clearApplyTimer()
  if (c.applying !== undefined || c.unapplied.length === 0 || c.failure !== undefined) return
  const group = c.unapplied
  c.unapplied = []
  c.unappliedOps = 0
  c.applying = group
  const mark = group[group.length - 1]!.walSeq
  c.stats.commits++
  let done: Promise<boolean>
  try {
    done = c.env.root.batch(() => {
      for (const b of group) putOps(c.dbs, b.ops)
      putAppliedMark(c.env, mark)
    })
  } catch (e) {
    applyFailed(c, group, e)
    return
  }
  const startedAt = TRACE_PUT_EVENT ? traceNow() : 0
  done.then(
    () => {
      if (TRACE_PUT_EVENT) traceApply(startedAt)
      onApplied(c, group, mark)
    },
    (e: unknown) => applyFailed(c, group, e)
  )
}

/** The transaction failed: its real cause first (lmdb-js hands it over later; a full disk is told apart). */
const applyFailed = (c: LmdbCore, group: Array<StagedBatch>, e: unknown): void =>
  void lmdbCommitCause(e, c.dbPath).then((cause) => onApplyFailed(c, group, cause))

const onApplied = (c: LmdbCore, group: Array<StagedBatch>, mark: number): void => {
  c.applying = undefined
  c.lmdbInUseBytes = undefined
  for (const b of group) c.pendingBytes -= b.record?.length ?? 0
  c.checkQuiet()
  c.appliedSeq = mark
  // lmdb-js has reset its read transaction before resolving: LMDB reads already show the group.
  c.overlay.dropThrough(group[group.length - 1]!.seq)
  c.writer.release(mark)
  if (c.applyWaiters.length > 0) {
    const keep: typeof c.applyWaiters = []
    const ready: typeof c.applyWaiters = []
    for (const w of c.applyWaiters) (w.target <= mark ? ready : keep).push(w)
    c.applyWaiters = keep
    for (const w of ready) w.resume(undefined)
  }
  scheduleApply(c)
}

const onApplyFailed = (c: LmdbCore, group: Array<StagedBatch>, cause: unknown): void => {
  c.applying = undefined
  c.checkQuiet()
  // Acknowledged batches: back in the queue so the overlay rebuilt by fail keeps them.
  c.unapplied = group.concat(c.unapplied)
  if (c.failure !== undefined) return
  const message = `backend: commit failed: ${errorText(cause)}`
  // The WAL group in flight may still become durable: its outcome is unknown, never "no space".
  c.fail(
    new BackendError({ reason: "WriteFailed", message, cause }),
    c.walGroup ?? [],
    new BackendError({ reason: "WriteFailed", message })
  )
}

/** Waits until every batch acknowledged so far is in LMDB, applying at once instead of at the next tick. */
export const awaitApplied = (c: LmdbCore): Effect.Effect<void, BackendError> =>
  Effect.suspend(() => {
    if (c.failure !== undefined) return Effect.fail(c.failure)
    const target = c.durableSeq
    if (c.appliedSeq >= target) return Effect.void
    return Effect.async<void, BackendError>((resume) => {
      c.applyWaiters.push({ target, resume: (error) => resume(error === undefined ? Effect.void : Effect.fail(error)) })
      scheduleApply(c)
    })
  })
