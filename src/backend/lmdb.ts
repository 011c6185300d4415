/**
 * The LMDB Backend (default), etcd's backend.go: one LMDB environment at <data-dir>/member/snap/db
 * (lmdb-env.ts) with a write-ahead log in front of it (<data-dir>/member/wal, wal.ts): etcd's
 * design, where a write is acknowledged once its WAL record is fdatasync'ed and the B+tree is
 * committed in the background.
 *
 * A batch's life, like etcd's raft log + backend batchTx + txReadBuffer:
 * 1. `write(ops)` copies the batch once, into its WAL record, and stages it in an in-memory overlay
 *    (per bucket, sorted; overlay.ts) at once, so every later get/range sees it; reads merge the
 *    overlay over LMDB (read-tx.ts).
 * 2. WAL group commit (group-commit.ts): one group is in flight at a time (one write of all its
 *    records, then ONE fdatasync, both on libuv's threadpool); batches staged meanwhile make up the
 *    next group. When the fdatasync returns, the group's write Effects complete and its tickets'
 *    callbacks run (`writeNow`: the batch is its own ticket, staged-batch.ts), in staging order:
 *    the batches are durable.
 * 3. LMDB apply (lmdb-apply.ts): every `commitIntervalMs` (100 ms, etcd's backend batch interval),
 *    or sooner once `commitLimitOps` ops wait (10000, etcd's batch limit), all WAL-durable batches
 *    go into ONE LMDB transaction, together with the seq of the last one (the "applied" mark, in
 *    LMDB's "wal" database). LMDB keeps its full-sync settings, so LMDB alone is crash-safe as
 *    before. Once that transaction is durable the overlay entries it covers are dropped (unless a
 *    later batch rewrote the key) and WAL segments wholly at or below the mark are deleted.
 * Open replays every WAL record above the applied mark into LMDB in one synced transaction, then
 * starts a new segment (wal-replay.ts). Close waits for the WAL group in flight, applies everything
 * to LMDB and deletes the log.
 *
 * A failed WAL write or fdatasync, or a failed LMDB transaction, is fail-stop (etcd panics on
 * both): every batch not yet acknowledged fails with WriteFailed, the overlay keeps only
 * acknowledged batches, and every later write fails at once (lmdb-core.ts, which holds the state
 * these parts share).
 */
import { Effect, Layer, type Scope } from "effect"
import { Backend, BackendError, type BackendShape, CorruptRecord, type WriteOp } from "./backend.js"
import { fsyncDir, type LockMode, openDataDir } from "./data-dir.js"
import { lmdbCommitCause } from "./disk-full.js"
import { enqueue, stage, startWal } from "./group-commit.js"
import { awaitApplied, startApply } from "./lmdb-apply.js"
import { LmdbCore, type LmdbStats } from "./lmdb-core.js"
import { countInUseBytes, ensureSealed, fileSizeBytes, type LmdbEnv, openEnv, unreadable } from "./lmdb-env.js"
import { readKey, readRange } from "./read-tx.js"
import { BUCKETS, SnapshotWriter } from "./snapshot-format.js"
import { awaitBatch } from "./staged-batch.js"
import { verifyAll } from "./verify.js"
import { nodeWalIo, noFsyncWalIo, type WalIo } from "./wal.js"
import { replayWal } from "./wal-replay.js"

export type { LmdbStats } from "./lmdb-core.js"

/** Options of the LMDB backend: the data dir, the WAL before LMDB, its batching and fsync. */
export interface LmdbOptions {
  /** the data dir (etcd's --data-dir); created when missing */
  readonly dataDir: string
  /** LMDB page size for a new environment (default: the OS page size) */
  readonly pageSize?: number | undefined
  /** WAL segment size (default 64 MiB, etcd's) */
  readonly walSegmentBytes?: number | undefined
  /** longest wait of a WAL-durable batch for its LMDB transaction (default 100 ms, etcd's batch interval) */
  readonly commitIntervalMs?: number | undefined
  /** an LMDB transaction starts at once when this many ops wait (default 10000, etcd's batch limit) */
  readonly commitLimitOps?: number | undefined
  /** etcd's --unsafe-no-fsync: neither the WAL nor LMDB syncs (a crash may lose acknowledged writes) */
  readonly unsafeNoFsync?: boolean | undefined
  /** internal: force the lock mechanism (tests) */
  readonly lockMode?: LockMode | undefined
  /** internal: the WAL's write and fdatasync (tests make them fail, or skip the sync to prove it matters) */
  readonly walIo?: WalIo | undefined
}

const EMPTY = new Uint8Array(0)

/**
 * Opens the data dir and the LMDB environment for this scope, replays the WAL, and returns the
 * backend and its counters. Scope close applies pending batches to LMDB, closes LMDB and releases
 * the data dir lock.
 */
export const makeLmdbBackend = (
  options: LmdbOptions
): Effect.Effect<
  {
    readonly backend: BackendShape
    readonly stats: LmdbStats
    /** internal, for tests that break the environment underneath */
    readonly env: LmdbEnv["root"]
  },
  BackendError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const layout = yield* openDataDir(options.dataDir, { lockMode: options.lockMode })
    const env = yield* Effect.acquireRelease(
      Effect.try({
        try: () => openEnv(layout.dbPath, options.pageSize, options.unsafeNoFsync === true),
        catch: (e) => unreadable(layout.dir, `cannot open ${layout.dbPath}`, e)
      }),
      ({ root }) => Effect.tryPromise(() => root.close()).pipe(Effect.ignore)
    )
    if (layout.fresh) {
      // LMDB fsyncs its file on commit, not the directory entries of the files it created.
      yield* Effect.try({ try: () => fsyncDir(layout.snapDir), catch: (e) => e }).pipe(Effect.ignore)
    }
    // An environment from before checksums (layout 2) has its values sealed now, in one transaction.
    yield* Effect.tryPromise({
      try: () => ensureSealed(env).catch(async (e: unknown) => Promise.reject(await lmdbCommitCause(e, layout.dbPath))),
      catch: (e) => unreadable(layout.dir, "cannot add checksums to the stored values", e)
    })
    const stats: LmdbStats = { commits: 0, batches: 0, walSyncs: 0, replayed: 0 }
    const { applied, writer } = yield* replayWal(env, layout, stats, {
      segmentBytes: options.walSegmentBytes,
      io: options.walIo ?? (options.unsafeNoFsync === true ? noFsyncWalIo : nodeWalIo)
    })
    const core = new LmdbCore(
      {
        env,
        dbPath: layout.dbPath,
        writer,
        applied,
        stats,
        commitIntervalMs: options.commitIntervalMs ?? 100,
        commitLimitOps: options.commitLimitOps ?? 10_000
      },
      { startWal, startApply }
    )
    yield* Effect.addFinalizer(() => close(core))
    return { backend: backendOf(core), stats, env: env.root }
  })

/** The Backend contract over a core: reads, staging, sizes, snapshot and defragment. */
const backendOf = (core: LmdbCore): BackendShape => {
  const overlay = core.overlay.buckets
  const dbs = core.dbs
  const write = (ops: ReadonlyArray<WriteOp>): Effect.Effect<void, BackendError> => {
    const b = stage(core, ops)
    return b instanceof BackendError ? Effect.fail(b) : awaitBatch(b)
  }
  const flush: Effect.Effect<void, BackendError> = Effect.suspend(() => write([]))
  // every corrupt record found, once each (by bucket and key)
  const found = new Map<string, CorruptRecord>()
  const note = (c: CorruptRecord): void => {
    const id = `${c.bucket}/${Buffer.from(c.key).toString("hex")}`
    if (!found.has(id)) found.set(id, c)
  }
  const noted = (e: unknown): unknown => {
    if (e instanceof CorruptRecord) note(e)
    return e
  }
  return {
    get: (bucket, key) => {
      try {
        return readKey(overlay, dbs, bucket, key)
      } catch (e) {
        throw noted(e)
      }
    },
    range: (bucket, start, end, limit) => {
      try {
        return readRange(overlay, dbs, bucket, start, end, limit)
      } catch (e) {
        throw noted(e)
      }
    },
    write,
    writeNow: (ops) => stage(core, ops),
    flush,
    sizeBytes: () => fileSizeBytes(core.env, core.dbPath),
    sizeInUseBytes: () => {
      // LMDB's pages change only when an apply lands (lmdb-apply.ts clears the count)
      core.lmdbInUseBytes ??= countInUseBytes(core.env)
      // plus what is acknowledged (in the WAL) but not yet in LMDB, which commits every 100 ms:
      // without it the quota would let in up to 100 ms of writes past the limit
      return core.lmdbInUseBytes + core.pendingBytes
    },
    snapshot: Effect.suspend(() => {
      if (core.closed) return Effect.fail(new BackendError({ reason: "Closed", message: "backend is closed" }))
      // One synchronous pass: no commit can land in between, so LMDB's read view and the overlay agree.
      return Effect.sync(() => {
        const w = new SnapshotWriter()
        for (const name of BUCKETS) {
          for (const [k, v] of readRange(overlay, dbs, name, EMPTY, undefined)) w.add(name, k, v)
        }
        return w.finish()
      })
    }),
    // LMDB reuses freed pages itself and cannot shrink its file in place; defragment waits for
    // pending writes, in LMDB too, so that sizes read afterwards are settled (see docs/decisions.md).
    defragment: Effect.zipRight(flush, awaitApplied(core)),
    verify: Effect.suspend(() => {
      if (core.closed) return Effect.fail(new BackendError({ reason: "Closed", message: "backend is closed" }))
      return Effect.tap(verifyAll(dbs), (bad) => bad.forEach(note))
    }),
    corruptions: () => [...found.values()],
    onFailure: (f) => {
      if (core.failure !== undefined) f(core.failure)
      else core.failureListeners.push(f)
    }
  }
}

/** Resolves once no WAL group and no LMDB transaction is in flight. */
const quiet = (core: LmdbCore): Effect.Effect<void> =>
  Effect.suspend(() =>
    core.walGroup === undefined && core.applying === undefined
      ? Effect.void
      : Effect.zipRight(
          Effect.async<void>((resume) => void core.quietWaiters.push(() => resume(Effect.void))),
          quiet(core)
        )
  )

/**
 * Refuses further writes at once, waits until what is staged is in the WAL and everything in the
 * WAL is in LMDB, then closes the log (deleting it when LMDB holds it all). After a failure the
 * log is kept as it is: the next open replays it.
 */
const close = (core: LmdbCore): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (core.closed) return Effect.void
    core.closed = true
    return Effect.gen(function* () {
      if (core.failure === undefined) {
        yield* Effect.ignore(awaitBatch(enqueue(core, [])))
        yield* Effect.ignore(awaitApplied(core))
      }
      // Nothing may still be writing to a file we close.
      yield* quiet(core)
      core.clearApplyTimer()
      try {
        core.writer.close(core.failure === undefined ? core.appliedSeq : undefined)
      } catch {
        // the files are closed or gone either way; nothing to report to at scope close
      }
    })
  })

/** The LMDB Backend in `options.dataDir`, open for the Layer's lifetime. */
export const layerLmdb = (options: LmdbOptions): Layer.Layer<Backend, BackendError> =>
  Layer.scoped(
    Backend,
    Effect.map(makeLmdbBackend(options), (m) => m.backend)
  )
