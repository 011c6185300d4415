/**
 * kvstore.go: the MvccStore service over a Backend.
 *
 * Concurrency and durability: every mutation runs synchronously in one step — validate, evaluate
 * against the head state (staged revisions included), update the index, stage the backend batch —
 * then waits for that batch to be durable, then commits: `rev()` advances and the commit listener
 * sees the revision's events, always in revision order (batches become durable in staging order, so
 * durability of revision r implies every earlier one). The wait is the backend ticket's callback
 * (`writeNow`), not a fiber: `putNow`/`deleteRangeNow`/`txnNow` return the outcome as an Exit or a
 * PendingWrite (pending-write.ts) completed by that callback after the commit; the Effect methods
 * wrap those. Plain reads (Range, getAt, eventsBetween)
 * read at `rev()`, the newest committed revision: a multi-version index makes that a consistent
 * view while later revisions are still in flight. A backend write failure stops the store: that
 * request and every later one fail with "etcdserver: server stopped" instead of serving diverged
 * state.
 */
import { Context, Deferred, Effect, Exit, FiberId, Layer, Queue, Runtime, type Scope } from "effect"
import { Backend, BackendError, type BackendShape, type WriteOp, type WriteTicket } from "../backend/backend.js"
import { EtcdError, Errors } from "../errors.js"
import { applyDeleteRange, applyPut, applyRange, applyTxnOps, isTxnReadonly, prepareTxn } from "./apply.js"
import { KeyIndex } from "./key-index.js"
import { type Event, EventType, type KeyValue, tombstoneKv } from "./key-value.js"
import {
  type CommitListener,
  type DeleteRangeRequest,
  type DeleteRangeResponse,
  type LeaseAttachments,
  MvccStore,
  type MvccStoreShape,
  type PutRequest,
  type PutResponse,
  type RangeRequest,
  type RangeResponse,
  type TxnRequest,
  type TxnResponse
} from "./kv.js"
import { supervised } from "./fatal.js"
import { PendingWrite, toEffect, type WriteResult } from "./pending-write.js"
import { RecoveryError } from "./recovery-error.js"
import { bytesToMain, bytesToSub, decodeKeyValue, isTombstoneKey, revToBytes } from "./kv-codec.js"
import {
  decodeCompactRev,
  encodeCompactRev,
  FINISHED_COMPACT_KEY,
  runCompaction,
  SCHEDULED_COMPACT_KEY
} from "./kvstore-compaction.js"
import { type StoreCore, TxnRead, TxnWrite } from "./kvstore-txn.js"
import { checkDeleteRequest, checkPutRequest, checkRangeRequest, checkTxn } from "./request-checks.js"
import { deleteRangeRequestSize, internalRaftRequestSize, putRequestSize, txnRequestSize } from "./request-size.js"
import { DEFAULT_COMPACTION_BATCH_LIMIT, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS } from "./limits.js"
import { keyString } from "./key-string.js"
import { TreeIndex } from "./tree-index.js"
import { TRACE_PUT_EVENT, traceStaged, traceStamp } from "../debug/put-event-trace.js"

// ---------------------------------------------------------------------------------------------
// configuration

export interface KvStoreConfigShape {
  /** etcd's --max-request-bytes (default 1.5 MiB) */
  readonly maxRequestBytes: number
  /** etcd's --max-txn-ops (default 128) */
  readonly maxTxnOps?: number | undefined
  /** revisions examined per physical-compaction batch (etcd's CompactionBatchLimit, default 1000) */
  readonly compactionBatchLimit?: number | undefined
}

export class KvStoreConfig extends Context.Tag("etcd-effect/KvStoreConfig")<KvStoreConfig, KvStoreConfigShape>() {}

export { DEFAULT_COMPACTION_BATCH_LIMIT, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS }

export const defaultConfig: KvStoreConfigShape = {
  maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
  maxTxnOps: DEFAULT_MAX_TXN_OPS,
  compactionBatchLimit: DEFAULT_COMPACTION_BATCH_LIMIT
}

export const layerConfig = (config: Partial<KvStoreConfigShape> = {}): Layer.Layer<KvStoreConfig> =>
  Layer.succeed(KvStoreConfig, { ...defaultConfig, ...config })

// ---------------------------------------------------------------------------------------------
// restore

const RESTORE_CHUNK = 10000

/** Reads the key bucket in revision order and rebuilds the index and the live keys' leases. */
const restore = (core: StoreCore): { lastRev: number; finished: number; scheduled: number } => {
  const { backend, index, leases } = core
  const finishedBytes = backend.get("meta", FINISHED_COMPACT_KEY)
  const scheduledBytes = backend.get("meta", SCHEDULED_COMPACT_KEY)
  const finished = finishedBytes === undefined ? -1 : decodeCompactRev(finishedBytes)
  const scheduled = scheduledBytes === undefined ? -1 : decodeCompactRev(scheduledBytes)
  let lastRev = 1
  let start: Uint8Array = revToBytes(1, 0)
  for (;;) {
    const entries = backend.range("key", start, undefined, RESTORE_CHUNK)
    for (const [rk, v] of entries) {
      const main = bytesToMain(rk)
      const sub = bytesToSub(rk)
      const kv = decodeKeyValue(v)
      const k = keyString(kv.key)
      const ki = index.keyIndex(k)
      lastRev = main
      if (isTombstoneKey(rk)) {
        leases.delete(k)
        if (ki !== undefined) ki.tombstone(main, sub)
        else {
          // the only revision left of this key: its creation was compacted
          const nki = new KeyIndex(kv.key, k)
          nki.restoreTombstone(main, sub)
          index.insert(nki)
        }
        continue
      }
      if (kv.lease !== 0n) leases.set(k, kv.lease)
      else leases.delete(k)
      if (ki !== undefined) ki.put(main, sub)
      else {
        const nki = new KeyIndex(kv.key, k)
        nki.restore({ main: kv.createRevision, sub: 0 }, { main, sub }, kv.version)
        index.insert(nki)
      }
    }
    if (entries.length < RESTORE_CHUNK) break
    const lastKey = entries[entries.length - 1]![0]
    start = revToBytes(bytesToMain(lastKey), bytesToSub(lastKey) + 1)
  }
  return { lastRev, finished, scheduled }
}

// ---------------------------------------------------------------------------------------------
// the store

interface PendingRevision {
  readonly rev: number
  readonly events: ReadonlyArray<Event>
}

interface CompactionJob {
  readonly rev: number
  readonly done: Deferred.Deferred<void, EtcdError>
}

const EVENTS_CHUNK = 1000

/**
 * Builds the store over the Backend in context; the scope owns its compaction fiber. A backend whose
 * records cannot be read back fails with a RecoveryError (reason "IndexRebuild").
 */
export const make: Effect.Effect<MvccStoreShape, RecoveryError, Backend | KvStoreConfig | Scope.Scope> = Effect.gen(
  function* () {
    const backend: BackendShape = yield* Backend
    const config = yield* KvStoreConfig
    const maxRequestBytes = config.maxRequestBytes
    const maxTxnOps = config.maxTxnOps ?? DEFAULT_MAX_TXN_OPS
    const batchLimit = Math.max(1, config.compactionBatchLimit ?? DEFAULT_COMPACTION_BATCH_LIMIT)

    const core: StoreCore = {
      backend,
      index: new TreeIndex(),
      headRev: 1,
      committedRev: 1,
      compactMainRev: -1,
      leases: new Map(),
      lessor: undefined
    }
    const restored = yield* Effect.try({
      try: () => restore(core),
      catch: (e) =>
        new RecoveryError({
          reason: "IndexRebuild",
          message: `mvcc: cannot rebuild the index from the backend: ${e instanceof Error ? e.message : String(e)}`
        })
    })
    core.compactMainRev = restored.finished
    let currentRev = restored.lastRev
    // revisions up to the watermark may all be compacted away: never report less than it
    if (currentRev < core.compactMainRev) currentRev = core.compactMainRev
    if (restored.scheduled > currentRev) currentRev = restored.scheduled
    core.headRev = currentRev
    core.committedRev = currentRev

    const listeners = new Set<CommitListener>()
    const pending: Array<PendingRevision> = []
    /** set once the store can no longer serve: backend failure or closed scope */
    let stopped: EtcdError | undefined

    const compactions = yield* Queue.unbounded<CompactionJob>()

    /** Commits every staged revision up to r (all durable), in order, telling the listener. */
    const commitThrough = (r: number): void => {
      let errors: Array<unknown> | undefined
      while (pending.length > 0 && pending[0]!.rev <= r) {
        const p = pending.shift()!
        core.committedRev = p.rev
        if (TRACE_PUT_EVENT) traceStamp("committed", p.rev)
        for (const listener of listeners) {
          try {
            listener(p.rev, p.events)
          } catch (e) {
            ;(errors ??= []).push(e)
          }
        }
      }
      if (errors !== undefined) throw new AggregateError(errors, "commit listener failed")
    }

    /** A backend failure is fatal: later requests fail rather than serve state the disk lacks. */
    const fail = (): EtcdError => {
      if (stopped === undefined) {
        stopped = Errors.stopped()
        // staged revisions may never become durable: drop them unannounced
        pending.length = 0
      }
      return stopped
    }

    /** Waits for a staged batch, then commits through `rev` (0: commits nothing new). For compact. */
    const awaitDurable = (durable: Effect.Effect<void, BackendError>, rev: number): Effect.Effect<void, EtcdError> =>
      Effect.uninterruptible(
        Effect.matchEffect(durable, {
          onFailure: (e) =>
            Effect.zipRight(Effect.logError("mvcc: backend write failed; store stopped", e), Effect.fail(fail())),
          onSuccess: () => (rev > 0 ? commitSafely(rev) : Effect.void)
        })
      )

    const commitSafely = (rev: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        const e = commitNow(rev)
        return e === undefined ? Effect.void : Effect.die(e.defect)
      })

    // The write fast path logs on the store's runtime: it has no fiber of its own.
    // eslint-disable-next-line no-restricted-properties -- a log line on the store layer's runtime (its logger), nothing to own
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const logError = (message: string, cause: unknown): void => {
      runFork(Effect.logError(message, cause))
    }

    /** commitThrough(rev); a throwing listener stops the store (logged), its error is returned. */
    const commitNow = (rev: number): { readonly defect: unknown } | undefined => {
      try {
        commitThrough(rev)
        return undefined
      } catch (e) {
        // a watcher may have missed this acknowledged revision: serving on would break the watch
        // guarantee, so the store stops and the failure is a defect, not a log line
        fail()
        logError("mvcc: commit listener threw; store stopped", e)
        return { defect: e }
      }
    }

    /**
     * The outcome of `result` once the staged batch's ticket settles: committed through `rev` (0:
     * nothing new) on success, the store stopped on failure. Runs in the backend's settle callback,
     * which comes in staging order: commits, and so watchers, stay in revision order.
     */
    const afterDurable = <A>(ticket: WriteTicket, rev: number, result: A): WriteResult<A, EtcdError> => {
      let sync: Exit.Exit<A, EtcdError> | undefined
      let pending: PendingWrite<A, EtcdError> | undefined
      ticket.onDone((error) => {
        let exit: Exit.Exit<A, EtcdError>
        if (error !== undefined) {
          logError("mvcc: backend write failed; store stopped", error)
          exit = Exit.fail(fail())
        } else {
          const e = rev > 0 ? commitNow(rev) : undefined
          exit = e === undefined ? Exit.succeed(result) : Exit.die(e.defect)
        }
        if (pending === undefined) sync = exit
        else pending.complete(exit)
      })
      if (sync !== undefined) return sync
      pending = new PendingWrite<A, EtcdError>()
      return pending
    }

    /** backend.writeNow, a throw being a failure that stops the store (logged as `what`). */
    const writeBatch = (ops: ReadonlyArray<WriteOp>, what: string): WriteTicket | EtcdError => {
      let ticket: WriteTicket | BackendError
      try {
        ticket = backend.writeNow(ops)
      } catch (e) {
        logError(what, e)
        return fail()
      }
      if (ticket instanceof BackendError) {
        logError("mvcc: backend write failed; store stopped", ticket)
        return fail()
      }
      return ticket
    }

    /** Stages the txn's batch (plus `extra`) as revision beginRev + 1; done once it commits. */
    const stage = <A>(txn: TxnWrite, result: A, extra?: ReadonlyArray<WriteOp>): WriteResult<A, EtcdError> => {
      const rev = txn.beginRev + 1
      const ops = extra !== undefined && extra.length > 0 ? [...txn.ops, ...extra] : txn.ops
      let ticket: WriteTicket | BackendError
      try {
        ticket = backend.writeNow(ops)
      } catch (e) {
        txn.abort()
        logError("mvcc: backend write threw; store stopped", e)
        return Exit.fail(fail())
      }
      if (ticket instanceof BackendError) {
        // refused before staging (closed, failed): nothing of this txn is in the backend
        txn.abort()
        logError("mvcc: backend write failed; store stopped", ticket)
        return Exit.fail(fail())
      }
      core.headRev = rev
      const events = txn.events()
      if (TRACE_PUT_EVENT) traceStaged(rev, events[0]?.kv.value)
      pending.push({ rev, events })
      try {
        txn.applyLessorOps()
      } catch (e) {
        // the revision is staged and stands; a misbehaving lessor must not undo it
        logError("mvcc: lessor attach/detach threw", e)
      }
      return afterDurable(ticket, rev, result)
    }

    /**
     * Runs `f` on a fresh write txn, synchronously; on success stages it (or waits for head), on
     * error rolls back. The outcome is known now (a refused request, a backend durable at once) or
     * once the batch is durable and committed.
     */
    const writeNow = <A>(f: (txn: TxnWrite) => A, extra?: ReadonlyArray<WriteOp>): WriteResult<A, EtcdError> => {
      if (stopped !== undefined) return Exit.fail(stopped)
      const txn = new TxnWrite(core)
      let result: A
      try {
        result = f(txn)
      } catch (e) {
        txn.abort()
        if (e instanceof EtcdError) return Exit.fail(e)
        return Exit.die(e)
      }
      if (txn.changeCount() > 0) return stage(txn, result, extra)
      if (extra !== undefined && extra.length > 0) {
        const ticket = writeBatch(extra, "mvcc: backend write threw")
        return ticket instanceof EtcdError ? Exit.fail(ticket) : afterDurable(ticket, txn.beginRev, result)
      }
      // A result read at head revision h must not be returned before h is durable.
      if (txn.beginRev <= core.committedRev) return Exit.succeed(result)
      const flushed = writeBatch([], "mvcc: backend write threw")
      return flushed instanceof EtcdError ? Exit.fail(flushed) : afterDurable(flushed, txn.beginRev, result)
    }

    const write = <A>(f: (txn: TxnWrite) => A, extra?: ReadonlyArray<WriteOp>): Effect.Effect<A, EtcdError> =>
      Effect.suspend(() => toEffect(writeNow(f, extra)))

    const tooLarge = (size: number): boolean => internalRaftRequestSize(size) > maxRequestBytes

    const rangeNow = (req: RangeRequest): Exit.Exit<RangeResponse, EtcdError> => {
      const e = checkRangeRequest(req)
      if (e !== undefined) return Exit.fail(e)
      if (stopped !== undefined) return Exit.fail(stopped)
      try {
        return Exit.succeed(applyRange(new TxnRead(core, core.committedRev, core.compactMainRev), req))
      } catch (e) {
        if (e instanceof EtcdError) return Exit.fail(e)
        return Exit.die(e)
      }
    }

    const range = (req: RangeRequest): Effect.Effect<RangeResponse, EtcdError> => Effect.suspend(() => rangeNow(req))

    const putNow = (req: PutRequest): WriteResult<PutResponse, EtcdError> => {
      const e = checkPutRequest(req)
      if (e !== undefined) return Exit.fail(e)
      if (tooLarge(putRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
      return writeNow((txn) => applyPut(txn, req, true))
    }

    const deleteRangeNow = (req: DeleteRangeRequest): WriteResult<DeleteRangeResponse, EtcdError> => {
      const e = checkDeleteRequest(req)
      if (e !== undefined) return Exit.fail(e)
      if (tooLarge(deleteRangeRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
      return writeNow((txn) => applyDeleteRange(txn, req))
    }

    const txnNow = (req: TxnRequest): WriteResult<TxnResponse, EtcdError> => {
      const e = checkTxn(req, maxTxnOps)
      if (e !== undefined) return Exit.fail(e)
      if (isTxnReadonly(req)) {
        // served from the committed state, like etcd's read-only txns (no raft, no size check)
        if (stopped !== undefined) return Exit.fail(stopped)
        try {
          const view = new TxnRead(core, core.committedRev, core.compactMainRev)
          const path = prepareTxn(view, req, false)
          const { succeeded, responses } = applyTxnOps(view, req, path)
          return Exit.succeed({ header: { revision: view.rev() }, succeeded, responses })
        } catch (e) {
          if (e instanceof EtcdError) return Exit.fail(e)
          return Exit.die(e)
        }
      }
      if (tooLarge(txnRequestSize(req))) return Exit.fail(Errors.requestTooLarge())
      return writeNow<TxnResponse>((w) => {
        const path = prepareTxn(new TxnRead(core, core.headRev, core.compactMainRev), req, true)
        const { succeeded, responses } = applyTxnOps(w, req, path)
        const revision = w.changeCount() > 0 ? w.beginRev + 1 : w.beginRev
        return { header: { revision }, succeeded, responses }
      })
    }

    const put = (req: PutRequest): Effect.Effect<PutResponse, EtcdError> => Effect.suspend(() => toEffect(putNow(req)))

    const deleteRange = (req: DeleteRangeRequest): Effect.Effect<DeleteRangeResponse, EtcdError> =>
      Effect.suspend(() => toEffect(deleteRangeNow(req)))

    const txn = (req: TxnRequest): Effect.Effect<TxnResponse, EtcdError> => Effect.suspend(() => toEffect(txnNow(req)))

    const compact = (revision: number, physical = false): Effect.Effect<{ header: { revision: number } }, EtcdError> =>
      Effect.suspend(() => {
        if (stopped !== undefined) return Effect.fail(stopped)
        // never let a malformed number become the persisted watermark
        if (!Number.isSafeInteger(revision)) return Effect.fail(revision > 0 ? Errors.futureRev() : Errors.compacted())
        if (revision <= core.compactMainRev) return Effect.fail(Errors.compacted())
        if (revision > core.committedRev) return Effect.fail(Errors.futureRev())
        core.compactMainRev = revision
        let durable: Effect.Effect<void, BackendError>
        try {
          durable = backend.write([{ bucket: "meta", key: SCHEDULED_COMPACT_KEY, value: encodeCompactRev(revision) }])
        } catch (e) {
          return Effect.zipRight(Effect.logError("mvcc: backend write threw", e), Effect.fail(fail()))
        }
        const done = Deferred.unsafeMake<void, EtcdError>(FiberId.none)
        compactions.unsafeOffer({ rev: revision, done })
        const header = { revision: core.committedRev }
        const persisted = awaitDurable(durable, 0)
        const response = { header }
        return physical
          ? Effect.as(Effect.zipRight(persisted, Deferred.await(done)), response)
          : Effect.as(persisted, response)
      })

    // the FIFO compaction scheduler
    const compactionWrite = (ops: ReadonlyArray<WriteOp>): Effect.Effect<void, BackendError> =>
      Effect.suspend(() => {
        if (stopped !== undefined) return Effect.void
        return backend.write(ops)
      })
    let currentJob: CompactionJob | undefined
    const runJob = (job: CompactionJob): Effect.Effect<void> =>
      Effect.suspend(() => {
        currentJob = job
        if (stopped !== undefined) return Deferred.fail(job.done, stopped)
        return runCompaction(core.index, backend, compactionWrite, job.rev, batchLimit).pipe(
          Effect.matchEffect({
            onFailure: (e) =>
              Effect.zipRight(
                Effect.logError("mvcc: compaction write failed; store stopped", e),
                Deferred.fail(job.done, fail())
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
    if (restored.scheduled > restored.finished) {
      core.compactMainRev = restored.scheduled
      compactions.unsafeOffer({
        rev: restored.scheduled,
        done: Deferred.unsafeMake<void, EtcdError>(FiberId.none)
      })
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        stopped ??= Errors.stopped()
        const left = yield* Queue.takeAll(compactions)
        if (currentJob !== undefined) yield* Deferred.fail(currentJob.done, stopped)
        for (const job of left) yield* Deferred.fail(job.done, stopped)
        yield* Queue.shutdown(compactions)
      })
    )

    const getAt = (key: Uint8Array, rev: number): KeyValue | undefined => {
      if (rev < core.compactMainRev || rev > core.committedRev || rev <= 0) return undefined
      const ki = core.index.keyIndex(keyString(key))
      if (ki === undefined) return undefined
      const r = ki.revisionAt(rev)
      if (r === undefined) return undefined
      const v = backend.get("key", revToBytes(r.main, r.sub))
      return v === undefined ? undefined : decodeKeyValue(v)
    }

    const eventsBetween = (from: number, to: number, maxRevisions?: number): ReadonlyArray<Event> => {
      const last = Math.min(to, core.committedRev)
      const out: Array<Event> = []
      if (from > last) return out
      const limit = maxRevisions === undefined || maxRevisions <= 0 ? Infinity : maxRevisions
      const end = revToBytes(last + 1, 0)
      let start: Uint8Array = revToBytes(Math.max(from, 0), 0)
      let revisions = 0
      let prevMain = -1
      for (;;) {
        const entries = backend.range("key", start, end, EVENTS_CHUNK)
        for (const [rk, v] of entries) {
          const main = bytesToMain(rk)
          if (main !== prevMain) {
            if (revisions >= limit) return out
            revisions++
            prevMain = main
          }
          const kv = decodeKeyValue(v)
          out.push(
            isTombstoneKey(rk) ? { type: EventType.DELETE, kv: tombstoneKv(kv.key, main) } : { type: EventType.PUT, kv }
          )
        }
        if (entries.length < EVENTS_CHUNK) return out
        const lastKey = entries[entries.length - 1]![0]
        start = revToBytes(bytesToMain(lastKey), bytesToSub(lastKey) + 1)
      }
    }

    const deleteKeys = (
      keys: ReadonlyArray<Uint8Array>,
      extra?: ReadonlyArray<WriteOp>
    ): Effect.Effect<DeleteRangeResponse, EtcdError> =>
      write((txn) => {
        const ks = Array.from(new Set(keys.map(keyString))).sort()
        const rev = txn.beginRev
        let deleted = 0
        for (const k of ks) {
          const ki = core.index.keyIndex(k)
          if (ki !== undefined && ki.revisionAt(rev + 1) !== undefined) {
            txn.delete(ki)
            deleted++
          }
        }
        return { header: { revision: deleted > 0 ? rev + 1 : rev }, deleted, prevKvs: [] }
      }, extra)

    const keysWithLease = (): ReadonlyArray<{ readonly key: Uint8Array; readonly lease: bigint }> => {
      const out: Array<{ key: Uint8Array; lease: bigint }> = []
      for (const [k, lease] of core.leases) {
        const ki = core.index.keyIndex(k)
        if (ki !== undefined) out.push({ key: ki.key, lease })
      }
      return out
    }

    const shape: MvccStoreShape = {
      rev: () => core.committedRev,
      compactRevision: () => core.compactMainRev,
      range,
      rangeNow,
      put,
      putNow,
      deleteRange,
      deleteRangeNow,
      txn,
      txnNow,
      compact,
      subscribeCommits: (l) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            listeners.add(l)
          }),
          () =>
            Effect.sync(() => {
              listeners.delete(l)
            })
        ),
      addCommitListener: (l) => {
        listeners.add(l)
        return () => {
          listeners.delete(l)
        }
      },
      eventsBetween,
      getAt,
      deleteKeys,
      attachLessor: <A>(setup: () => { readonly lessor: LeaseAttachments; readonly value: A }) =>
        Effect.map(
          Effect.acquireRelease(
            Effect.suspend(() => {
              if (core.lessor !== undefined)
                return Effect.dieMessage("mvcc: a lessor is already attached to this store")
              const r = setup()
              core.lessor = r.lessor
              return Effect.succeed(r)
            }),
            (r) =>
              Effect.sync(() => {
                if (core.lessor === r.lessor) core.lessor = undefined
              })
          ),
          (r) => r.value
        ),
      keysWithLease
    }
    return shape
  }
)

/** The MvccStore over the Backend in context, configured by KvStoreConfig. */
export const layer: Layer.Layer<MvccStore, RecoveryError, Backend | KvStoreConfig> = Layer.scoped(MvccStore, make)

/** The MvccStore with etcd's default limits (1.5 MiB requests, 128 txn ops). */
export const layerDefault: Layer.Layer<MvccStore, RecoveryError, Backend> = layer.pipe(Layer.provide(layerConfig()))
