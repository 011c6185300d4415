/**
 * Staging and the WAL group commit (etcd: the raft log's append and fsync before a proposal is
 * applied). `stage` copies a batch once, into its WAL record, and shows it in the overlay at once.
 * One WAL group is in flight at a time: one write of all its records, then ONE fdatasync, both on
 * libuv's threadpool; batches staged meanwhile make up the next group. When the fdatasync returns,
 * the group's batches settle in staging order (they are durable and acknowledged) and go on to the
 * LMDB apply (lmdb-apply.ts). A failed write or fdatasync is fail-stop (lmdb-core.ts).
 */
import { errorText } from "../errors.js"
import { BackendError, type WriteOp } from "./backend.js"
import { scheduleApply } from "./lmdb-apply.js"
import type { LmdbCore } from "./lmdb-core.js"
import { StagedBatch } from "./staged-batch.js"
import { validateOps } from "./validate.js"
import { encodeRecord } from "./wal-record.js"
import { TRACE_PUT_EVENT, traceDurable, traceNow } from "../debug/put-event-trace.js"

/** Stages one batch (`writeNow`): its ticket, or the error that refused it without staging anything. */
export const stage = (c: LmdbCore, ops: ReadonlyArray<WriteOp>): StagedBatch | BackendError => {
  if (c.closed) return new BackendError({ reason: "Closed", message: "backend is closed" })
  if (c.failure !== undefined) return c.failure
  const invalid = validateOps(ops)
  return invalid ?? enqueue(c, ops)
}

/** Stages valid ops; no ops: a flush marker, settled once everything staged before it is durable. */
export const enqueue = (c: LmdbCore, ops: ReadonlyArray<WriteOp>): StagedBatch => {
  const s = ++c.seq
  let b: StagedBatch
  if (ops.length === 0) {
    b = new StagedBatch(s, 0, ops, undefined)
  } else {
    // The one copy: the WAL record; the overlay and the LMDB transaction use views into it.
    const ws = ++c.walSeq
    const encoded = encodeRecord(ws, ops)
    b = new StagedBatch(s, ws, encoded.ops, encoded.record)
    c.pendingBytes += encoded.record.length
    c.overlay.stage(b)
    c.stats.batches++
  }
  c.staged.push(b)
  scheduleWal(c)
  return b
}

const scheduleWal = (c: LmdbCore): void => {
  if (!c.walScheduled && c.walGroup === undefined) {
    c.walScheduled = true
    // Let every writer of this macrotask stage first, so they share the fdatasync.
    setImmediate(c.startWal)
  }
}

/** Hands everything staged to the WAL as one group (the core's `startWal` task). */
export const startWal = (c: LmdbCore): void => {
  c.walScheduled = false
  if (c.walGroup !== undefined || c.staged.length === 0 || c.failure !== undefined) return
  const group = c.staged
  c.staged = []
  const records: Array<Buffer> = []
  let bytes = 0
  let first = 0
  let last = 0
  for (const b of group) {
    if (b.record === undefined) continue
    records.push(b.record)
    bytes += b.record.length
    if (first === 0) first = b.walSeq
    last = b.walSeq
  }
  if (records.length === 0) {
    // Only flush markers: durable as soon as everything before them is, which it is.
    for (const b of group) b.settle(undefined)
    return
  }
  c.walGroup = group
  const startedAt = TRACE_PUT_EVENT ? traceNow() : 0
  try {
    c.writer.append(records, bytes, first, last, (err) => {
      if (TRACE_PUT_EVENT && err === undefined) traceDurable(startedAt)
      return err === undefined ? onWalDurable(c, group, last) : onWalFailed(c, group, err)
    })
  } catch (e) {
    onWalFailed(c, group, e)
  }
}

const walDone = (c: LmdbCore): void => {
  c.walGroup = undefined
  c.checkQuiet()
}

const onWalDurable = (c: LmdbCore, group: Array<StagedBatch>, last: number): void => {
  walDone(c)
  if (c.failure !== undefined) {
    // Failed meanwhile (LMDB): these were never acknowledged, and stay so.
    for (const b of group) b.settle(c.failure)
    return
  }
  c.stats.walSyncs++
  c.durableSeq = last
  for (const b of group) {
    if (b.record === undefined) continue
    c.unapplied.push(b)
    c.unappliedOps += b.ops.length
  }
  for (const b of group) b.settle(undefined)
  // Whatever was staged during that sync goes into the next group, now.
  if (c.staged.length > 0) startWal(c)
  scheduleApply(c)
}

const onWalFailed = (c: LmdbCore, group: Array<StagedBatch>, cause: unknown): void => {
  walDone(c)
  if (c.failure !== undefined) return
  c.fail(
    new BackendError({ reason: "WriteFailed", message: `backend: WAL write failed: ${errorText(cause)}`, cause }),
    group
  )
}
