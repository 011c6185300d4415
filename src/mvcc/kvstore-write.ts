/**
 * The write path (kvstore_txn.go's storeTxnWrite, as the store runs it): every mutation runs
 * synchronously in one step — check, evaluate against the head state (staged revisions included),
 * update the index, stage the backend batch — then commits once that batch is durable
 * (kvstore-commit.ts). `putNow`/`deleteRangeNow`/`txnNow` return the outcome as an Exit or a
 * PendingWrite; the Effect methods wrap those. A request that fails half-way rolls its txn back
 * and leaves no trace; a backend that refuses or throws stops the store.
 */
import { Effect, Exit } from "effect"
import { BackendError, type WriteOp, type WriteTicket } from "../backend/backend.js"
import { EtcdError, Errors } from "../errors.js"
import { applyDeleteRange, applyPut, applyTxnOps, isTxnReadonly, prepareTxn } from "./apply.js"
import type { DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, TxnRequest, TxnResponse } from "./kv.js"
import { readError } from "./corrupt-read.js"
import { afterDurable } from "./kvstore-commit.js"
import { readonlyTxnNow } from "./kvstore-read.js"
import type { KvStore } from "./kvstore-state.js"
import { TxnRead, TxnWrite } from "./kvstore-txn.js"
import { toEffect, type WriteResult } from "./pending-write.js"
import { checkDeleteRequest, checkPutRequest, checkTxn } from "./request-checks.js"
import { deleteRangeRequestSize, internalRaftRequestSize, putRequestSize, txnRequestSize } from "./request-size.js"
import { TRACE_PUT_EVENT, traceStaged } from "../debug/put-event-trace.js"

/** backend.writeNow, a throw being a failure that stops the store (logged as `what`). */
const writeBatch = (s: KvStore, ops: ReadonlyArray<WriteOp>, what: string): WriteTicket | EtcdError => {
  let ticket: WriteTicket | BackendError
  try {
    ticket = s.backend.writeNow(ops)
  } catch (e) {
    s.logError(what, e)
    return s.fail()
  }
  if (ticket instanceof BackendError) {
    s.logError("mvcc: backend write failed; store stopped", ticket)
    return s.fail()
  }
  return ticket
}

/** Stages the txn's batch (plus `extra`) as revision beginRev + 1; done once it commits. */
const stage = <A>(s: KvStore, txn: TxnWrite, result: A, extra?: ReadonlyArray<WriteOp>): WriteResult<A, EtcdError> => {
  const rev = txn.beginRev + 1
  const ops = extra !== undefined && extra.length > 0 ? [...txn.ops, ...extra] : txn.ops
  let ticket: WriteTicket | BackendError
  try {
    ticket = s.backend.writeNow(ops)
  } catch (e) {
    txn.abort()
    s.logError("mvcc: backend write threw; store stopped", e)
    return Exit.fail(s.fail())
  }
  if (ticket instanceof BackendError) {
    // refused before staging (closed, failed): nothing of this txn is in the backend
    txn.abort()
    s.logError("mvcc: backend write failed; store stopped", ticket)
    return Exit.fail(s.fail())
  }
  s.headRev = rev
  const events = txn.events()
  if (TRACE_PUT_EVENT) traceStaged(rev, events[0]?.kv.value)
  s.pending.push({ rev, events })
  try {
    txn.applyLessorOps()
  } catch (e) {
    // the revision is staged and stands; a misbehaving lessor must not undo it
    s.logError("mvcc: lessor attach/detach threw", e)
  }
  return afterDurable(s, ticket, rev, result)
}

/**
 * Runs `f` on a fresh write txn, synchronously; on success stages it (or waits for head), on
 * error rolls back. The outcome is known now (a refused request, a backend durable at once) or
 * once the batch is durable and committed.
 */
export const writeNow = <A>(
  s: KvStore,
  f: (txn: TxnWrite) => A,
  extra?: ReadonlyArray<WriteOp>
): WriteResult<A, EtcdError> => {
  if (s.stopped !== undefined) return Exit.fail(s.stopped)
  const txn = new TxnWrite(s)
  let result: A
  try {
    result = f(txn)
  } catch (e) {
    txn.abort()
    const error = readError(e, s.logError)
    return error === undefined ? Exit.die(e) : Exit.fail(error)
  }
  if (txn.changeCount() > 0) return stage(s, txn, result, extra)
  if (extra !== undefined && extra.length > 0) {
    const ticket = writeBatch(s, extra, "mvcc: backend write threw")
    return ticket instanceof EtcdError ? Exit.fail(ticket) : afterDurable(s, ticket, txn.beginRev, result)
  }
  // A result read at head revision h must not be returned before h is durable.
  if (txn.beginRev <= s.committedRev) return Exit.succeed(result)
  const flushed = writeBatch(s, [], "mvcc: backend write threw")
  return flushed instanceof EtcdError ? Exit.fail(flushed) : afterDurable(s, flushed, txn.beginRev, result)
}

/** writeNow as an Effect. */
export const write = <A>(
  s: KvStore,
  f: (txn: TxnWrite) => A,
  extra?: ReadonlyArray<WriteOp>
): Effect.Effect<A, EtcdError> => Effect.suspend(() => toEffect(writeNow(s, f, extra)))

const tooLarge = (s: KvStore, size: number): boolean => internalRaftRequestSize(size) > s.limits.maxRequestBytes

export const putNow = (s: KvStore, req: PutRequest): WriteResult<PutResponse, EtcdError> => {
  const e = checkPutRequest(req)
  if (e !== undefined) return Exit.fail(e)
  if (tooLarge(s, putRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
  return writeNow(s, (txn) => applyPut(txn, req, true))
}

export const deleteRangeNow = (s: KvStore, req: DeleteRangeRequest): WriteResult<DeleteRangeResponse, EtcdError> => {
  const e = checkDeleteRequest(req)
  if (e !== undefined) return Exit.fail(e)
  if (tooLarge(s, deleteRangeRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
  return writeNow(s, (txn) => applyDeleteRange(txn, req))
}

/** A Txn: a read-only one is served from the committed state (kvstore-read.ts), the rest as one write. */
export const txnNow = (s: KvStore, req: TxnRequest): WriteResult<TxnResponse, EtcdError> => {
  const e = checkTxn(req, s.limits.maxTxnOps)
  if (e !== undefined) return Exit.fail(e)
  if (isTxnReadonly(req)) return readonlyTxnNow(s, req)
  if (tooLarge(s, txnRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
  return writeNow<TxnResponse>(s, (w) => {
    const path = prepareTxn(new TxnRead(s, s.headRev, s.compactMainRev), req, true)
    const { succeeded, responses } = applyTxnOps(w, req, path)
    const revision = w.changeCount() > 0 ? w.beginRev + 1 : w.beginRev
    return { header: { revision }, succeeded, responses }
  })
}
