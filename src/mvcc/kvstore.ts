/**
 * kvstore.go: the MvccStore service over a Backend, put together from its parts, which share one
 * plain state object (kvstore-state.ts): restore at open (kvstore-restore.ts), reads
 * (kvstore-read.ts), the write path (kvstore-write.ts) and its commits (kvstore-commit.ts),
 * compaction (kvstore-compaction.ts), the lessor's hooks (kvstore-lease.ts); the txns themselves
 * are kvstore-txn.ts.
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
import { Context, Effect, Layer, Runtime, type Scope } from "effect"
import { Backend, type BackendShape } from "../backend/backend.js"
import { MvccStore, type MvccStoreShape } from "./kv.js"
import { describeCorrupt } from "./corrupt-read.js"
import { Fatal, LoopDied } from "../supervision/fatal.js"
import { makeCompactor } from "./kvstore-compaction.js"
import { attachLessor, deleteKeys, keysWithLease } from "./kvstore-lease.js"
import { eventsBetween, getAt, rangeNow } from "./kvstore-read.js"
import { restore } from "./kvstore-restore.js"
import { KvStore } from "./kvstore-state.js"
import { deleteRangeNow, putNow, txnNow } from "./kvstore-write.js"
import { toEffect } from "./pending-write.js"
import { RecoveryError } from "./recovery-error.js"
import { DEFAULT_COMPACTION_BATCH_LIMIT, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS } from "./limits.js"

// ---------------------------------------------------------------------------------------------
// configuration

/** The store's limits: --max-request-bytes, --max-txn-ops and the physical compaction's batch size. */
export interface KvStoreConfigShape {
  /** etcd's --max-request-bytes (default 1.5 MiB) */
  readonly maxRequestBytes: number
  /** etcd's --max-txn-ops (default 128) */
  readonly maxTxnOps?: number | undefined
  /** revisions examined per physical-compaction batch (etcd's CompactionBatchLimit, default 1000) */
  readonly compactionBatchLimit?: number | undefined
}

/** The store's limits as a service, read by `Mvcc.layer` (`layerConfig` provides it). */
export class KvStoreConfig extends Context.Tag("etcd-effect/KvStoreConfig")<KvStoreConfig, KvStoreConfigShape>() {}

export { DEFAULT_COMPACTION_BATCH_LIMIT, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS }

/** etcd's defaults: 1.5 MiB requests, 128 ops per txn, 1000 revisions per compaction batch. */
export const defaultConfig: KvStoreConfigShape = {
  maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
  maxTxnOps: DEFAULT_MAX_TXN_OPS,
  compactionBatchLimit: DEFAULT_COMPACTION_BATCH_LIMIT
}

/** The store's limits: etcd's defaults with `config` over them. */
export const layerConfig = (config: Partial<KvStoreConfigShape> = {}): Layer.Layer<KvStoreConfig> =>
  Layer.succeed(KvStoreConfig, { ...defaultConfig, ...config })

// ---------------------------------------------------------------------------------------------
// the store

/**
 * Builds the store over the Backend in context; the scope owns its compaction fiber. A backend whose
 * records cannot be read back fails with a RecoveryError (reason "IndexRebuild").
 */
export const make: Effect.Effect<MvccStoreShape, RecoveryError, Backend | KvStoreConfig | Scope.Scope> = Effect.gen(
  function* () {
    const backend: BackendShape = yield* Backend
    const config = yield* KvStoreConfig
    // The write fast path logs on the store's runtime: it has no fiber of its own.
    // eslint-disable-next-line no-restricted-properties -- a log line on the store layer's runtime (its logger), nothing to own
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const s = new KvStore(
      backend,
      {
        maxRequestBytes: config.maxRequestBytes,
        maxTxnOps: config.maxTxnOps ?? DEFAULT_MAX_TXN_OPS,
        compactionBatchLimit: Math.max(1, config.compactionBatchLimit ?? DEFAULT_COMPACTION_BATCH_LIMIT)
      },
      (message, cause) => {
        runFork(Effect.logError(message, cause))
      }
    )
    const fatal = yield* Fatal
    s.onBackendFailure = (message) => {
      runFork(fatal.loopDied(new LoopDied({ loop: "backend", message })))
    }
    // a failure no write waits on (an LMDB commit in the background) stops the member too, at once
    backend.onFailure?.((error) => {
      s.backendFailed(error)
    })
    const marks = yield* Effect.try({
      try: () =>
        restore(s, (e) =>
          s.logError(`mvcc: restore: ${describeCorrupt(e)}; reads of it fail, nothing is served`, e.message)
        ),
      catch: (e) =>
        new RecoveryError({
          reason: "IndexRebuild",
          message: `mvcc: cannot rebuild the index from the backend: ${e instanceof Error ? e.message : String(e)}`
        })
    })
    const compact = yield* makeCompactor(s, marks)
    return shapeOf(s, compact)
  }
)

/** The MvccStoreShape over a store's state: each method its part's function, with the state. */
const shapeOf = (s: KvStore, compact: MvccStoreShape["compact"]): MvccStoreShape => ({
  rev: () => s.committedRev,
  compactRevision: () => s.compactMainRev,
  range: (req) => Effect.suspend(() => rangeNow(s, req)),
  rangeNow: (req) => rangeNow(s, req),
  put: (req) => Effect.suspend(() => toEffect(putNow(s, req))),
  putNow: (req) => putNow(s, req),
  deleteRange: (req) => Effect.suspend(() => toEffect(deleteRangeNow(s, req))),
  deleteRangeNow: (req) => deleteRangeNow(s, req),
  txn: (req) => Effect.suspend(() => toEffect(txnNow(s, req))),
  txnNow: (req) => txnNow(s, req),
  compact,
  subscribeCommits: (l) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        s.listeners.add(l)
      }),
      () =>
        Effect.sync(() => {
          s.listeners.delete(l)
        })
    ),
  addCommitListener: (l) => {
    s.listeners.add(l)
    return () => {
      s.listeners.delete(l)
    }
  },
  eventsBetween: (from, to, maxRevisions) => eventsBetween(s, from, to, maxRevisions),
  getAt: (key, rev) => getAt(s, key, rev),
  deleteKeys: (keys, extra) => deleteKeys(s, keys, extra),
  attachLessor: (setup) => attachLessor(s, setup),
  keysWithLease: () => keysWithLease(s)
})

/** The MvccStore over the Backend in context, configured by KvStoreConfig. */
export const layer: Layer.Layer<MvccStore, RecoveryError, Backend | KvStoreConfig> = Layer.scoped(MvccStore, make)

/** The MvccStore with etcd's default limits (1.5 MiB requests, 128 txn ops). */
export const layerDefault: Layer.Layer<MvccStore, RecoveryError, Backend> = layer.pipe(Layer.provide(layerConfig()))
