/**
 * The LMDB Backend (default): one LMDB environment at <data-dir>/member/snap/db with a named
 * database per bucket, binary keys in LMDB's bytewise order, and a write-ahead log in front of it
 * (<data-dir>/member/wal, wal.ts): etcd's design, where a write is acknowledged once its WAL
 * record is fdatasync'ed and the B+tree is committed in the background.
 *
 * A batch's life, like etcd's raft log + backend batchTx + txReadBuffer:
 * 1. `write(ops)` copies the batch once, into its WAL record, and stages it in an in-memory overlay
 *    (per bucket, sorted) at once, so every later get/range sees it; reads merge the overlay over
 *    LMDB.
 * 2. WAL group commit: one group is in flight at a time (one write of all its records, then ONE
 *    fdatasync, both on libuv's threadpool); batches staged meanwhile make up the next group. When
 *    the fdatasync returns, the group's write Effects complete and its tickets' callbacks run
 *    (`writeNow`: the batch is its own ticket), in staging order: the batches are durable.
 * 3. LMDB apply: every `commitIntervalMs` (100 ms, etcd's backend batch interval), or sooner once
 *    `commitLimitOps` ops wait (10000, etcd's batch limit), all WAL-durable batches go into ONE LMDB
 *    transaction, together with the seq of the last one (the "applied" mark, in LMDB's "wal"
 *    database). LMDB keeps its full-sync settings, so LMDB alone is crash-safe as before. Once that
 *    transaction is durable the overlay entries it covers are dropped (unless a later batch
 *    rewrote the key) and WAL segments wholly at or below the mark are deleted.
 * Open replays every WAL record above the applied mark into LMDB in one synced transaction, then
 * starts a new segment. Close waits for the WAL group in flight, applies everything to LMDB and
 * deletes the log.
 *
 * LMDB's durability settings: lmdb-js runs with overlappingSync off (see docs/decisions.md): its
 * write promise then resolves after mdb_txn_commit returned, i.e. after fdatasync of the data pages
 * and the O_DSYNC write of the meta page.
 *
 * A failed WAL write or fdatasync, or a failed LMDB transaction, is fail-stop (etcd panics on
 * both): every batch not yet acknowledged fails with WriteFailed, the overlay keeps only
 * acknowledged batches, and every later write fails at once.
 */
import * as fs from "node:fs"
import { Effect, Layer, type Scope } from "effect"
import { open, type Database, type RootDatabase } from "lmdb"
import { errorText } from "../errors.js"
import { Backend, BackendError, type BackendShape, type BucketName, type WriteOp, type WriteTicket } from "./backend.js"
import { fsyncDir, type LockMode, openDataDir } from "./data-dir.js"
import { BUCKETS, SnapshotWriter } from "./snapshot-format.js"
import { compareBytes, SortedBucket } from "./sorted-bucket.js"
import { MAX_KEY_BYTES, validateOps } from "./validate.js"
import { DEFAULT_SEGMENT_BYTES, nodeWalIo, readWal, WalCorrupt, type WalIo, WalWriter } from "./wal.js"
import { encodeRecord } from "./wal-record.js"
import { TRACE_PUT_EVENT, traceApply, traceDurable, traceNow } from "../debug/put-event-trace.js"

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
  /** internal: force the lock mechanism (tests) */
  readonly lockMode?: LockMode | undefined
  /** internal: the WAL's write and fdatasync (tests make them fail, or skip the sync to prove it matters) */
  readonly walIo?: WalIo | undefined
}

/** Counters for tests and benchmarks; not part of the Backend contract. */
export interface LmdbStats {
  /** LMDB write transactions committed (WAL replay at open included) */
  commits: number
  /** non-empty batches staged */
  batches: number
  /** WAL groups made durable (one fdatasync each) */
  walSyncs: number
  /** batches replayed from the WAL at open (acknowledged before a crash, not yet in LMDB) */
  replayed: number
}

/** One staged batch; it is its own WriteTicket (`onDone`). */
class Batch implements WriteTicket {
  state: "pending" | "done" | "failed" = "pending"
  error: BackendError | undefined = undefined
  waiters: Array<(error: BackendError | undefined) => void> | undefined = undefined
  constructor(
    /** staging order, over every batch (flush markers too) */
    readonly seq: number,
    /** WAL sequence number; 0 for an empty batch (a flush marker), which is not logged */
    readonly walSeq: number,
    /** the batch's ops, keys and values being views into `record` */
    readonly ops: ReadonlyArray<WriteOp>,
    readonly record: Buffer | undefined
  ) {}

  onDone(f: (error: BackendError | undefined) => void): void {
    if (this.state === "pending") (this.waiters ??= []).push(f)
    else f(this.error)
  }
}

interface OverlayEntry {
  readonly seq: number
  /** undefined: deleted by a staged batch */
  readonly value: Uint8Array | undefined
}

const EMPTY = new Uint8Array(0)
/** In LMDB's "wal" database: the seq of the last WAL batch whose ops are in LMDB. */
const APPLIED_KEY = Buffer.from("applied")

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength))

const seqBytes = (n: number): Buffer => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(n), 0)
  return b
}

type Dbs = Record<BucketName, Database<Buffer, Uint8Array>>

/**
 * Writes ops into the current lmdb-js batch (inside `root.batch`). Each put/remove's own promise is
 * the batch's: its caller awaits `root.batch(…)`, so the per-op promises are dropped (`void`).
 */
const putOps = (dbs: Dbs, ops: ReadonlyArray<WriteOp>) => {
  for (const op of ops) {
    const db = dbs[op.bucket]
    if (op.value === undefined) void db.remove(asBuffer(op.key))
    else void db.put(asBuffer(op.key), op.value as Buffer)
  }
}

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
    readonly env: RootDatabase<Buffer, Uint8Array>
  },
  BackendError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const layout = yield* openDataDir(options.dataDir, { lockMode: options.lockMode })
    const unreadable = (what: string, e: unknown) =>
      new BackendError({ reason: "Unreadable", message: `data dir ${layout.dir}: ${what}: ${errorText(e)}`, cause: e })
    const env = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const root: RootDatabase<Buffer, Uint8Array> = open({
            path: layout.dbPath,
            noSubdir: true,
            maxDbs: 8,
            // Durability: see the module comment and docs/decisions.md.
            overlappingSync: false,
            noSync: false,
            noMetaSync: false,
            useWritemap: false,
            keyEncoding: "binary",
            encoding: "binary",
            ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {})
          })
          const dbs = {} as Dbs
          for (const name of BUCKETS)
            dbs[name] = root.openDB<Buffer, Uint8Array>(name, { keyEncoding: "binary", encoding: "binary" })
          const walDb = root.openDB<Buffer, Uint8Array>("wal", { keyEncoding: "binary", encoding: "binary" })
          return { root, dbs, walDb }
        },
        catch: (e) => unreadable(`cannot open ${layout.dbPath}`, e)
      }),
      ({ root }) => Effect.tryPromise(() => root.close()).pipe(Effect.ignore)
    )
    if (layout.fresh) {
      // LMDB fsyncs its file on commit, not the directory entries of the files it created.
      yield* Effect.try({ try: () => fsyncDir(layout.snapDir), catch: (e) => e }).pipe(Effect.ignore)
    }
    const stats: LmdbStats = { commits: 0, batches: 0, walSyncs: 0, replayed: 0 }

    // Recovery: batches acknowledged from the WAL but not yet in LMDB when the last process ended.
    const stored = env.walDb.get(APPLIED_KEY)
    let applied = stored === undefined ? 0 : Number(Buffer.from(stored).readBigUInt64BE(0))
    const wal = yield* Effect.try({
      try: () => readWal(layout.walDir, applied),
      catch: (e) =>
        unreadable(e instanceof WalCorrupt ? "corrupt write-ahead log" : "cannot read the write-ahead log", e)
    })
    if (wal.records.length > 0) {
      const last = wal.records[wal.records.length - 1]!.seq
      yield* Effect.tryPromise({
        try: () =>
          env.root.batch(() => {
            for (const r of wal.records) putOps(env.dbs, r.ops)
            void env.walDb.put(APPLIED_KEY, seqBytes(last)) // settled with the batch
          }),
        catch: (e) => unreadable("cannot replay the write-ahead log into LMDB", e)
      })
      stats.commits++
      stats.replayed = wal.records.length
      applied = last
    }
    // Everything in the old segments is in LMDB now; the log starts over in a new segment.
    const writer = yield* Effect.try({
      try: () => {
        for (const seg of wal.segments) fs.rmSync(seg.path, { force: true })
        return new WalWriter({
          dir: layout.walDir,
          segmentBytes: options.walSegmentBytes ?? DEFAULT_SEGMENT_BYTES,
          io: options.walIo ?? nodeWalIo,
          nextIndex: wal.segments.length === 0 ? 0 : wal.segments[wal.segments.length - 1]!.index + 1
        })
      },
      catch: (e) => unreadable("cannot open the write-ahead log", e)
    })
    const core = makeCore({
      root: env.root,
      dbs: env.dbs,
      walDb: env.walDb,
      dbPath: layout.dbPath,
      writer,
      applied,
      stats,
      commitIntervalMs: options.commitIntervalMs ?? 100,
      commitLimitOps: options.commitLimitOps ?? 10_000
    })
    yield* Effect.addFinalizer(() => core.close)
    return { backend: core.backend, stats, env: env.root }
  })

interface CoreOptions {
  readonly root: RootDatabase<Buffer, Uint8Array>
  readonly dbs: Dbs
  readonly walDb: Database<Buffer, Uint8Array>
  readonly dbPath: string
  readonly writer: WalWriter
  /** the applied mark after recovery: WAL seqs continue above it */
  readonly applied: number
  readonly stats: LmdbStats
  readonly commitIntervalMs: number
  readonly commitLimitOps: number
}

const makeCore = (options: CoreOptions) => {
  const { root, dbs, walDb, dbPath, writer, stats } = options
  const overlay = Object.fromEntries(BUCKETS.map((b) => [b, new SortedBucket<OverlayEntry>()])) as Record<
    BucketName,
    SortedBucket<OverlayEntry>
  >
  let seq = 0
  /** last WAL seq handed out */
  let walSeq = options.applied
  /** last WAL seq that is durable (acknowledged) */
  let durableSeq = options.applied
  /** last WAL seq whose ops are in LMDB */
  let appliedSeq = options.applied
  /** staged, not yet handed to the WAL */
  let staged: Array<Batch> = []
  let walScheduled = false
  /** the WAL group being written and synced */
  let walGroup: Array<Batch> | undefined
  /** WAL-durable, not yet in LMDB, in staging order */
  let unapplied: Array<Batch> = []
  let unappliedOps = 0
  /** WAL record bytes of batches staged but not yet in LMDB: counted in the size in use */
  let pendingBytes = 0
  /** the LMDB transaction in flight */
  let applying: Array<Batch> | undefined
  let applyTimer: ReturnType<typeof setTimeout> | undefined
  /** waiting until appliedSeq >= target (close, defragment) */
  let applyWaiters: Array<{ readonly target: number; readonly resume: (error: BackendError | undefined) => void }> = []
  /** called when neither a WAL group nor an LMDB transaction is in flight any more (close) */
  let quietWaiters: Array<() => void> = []
  let failure: BackendError | undefined
  let closed = false

  const checkQuiet = () => {
    if (walGroup !== undefined || applying !== undefined || quietWaiters.length === 0) return
    const ws = quietWaiters
    quietWaiters = []
    for (const w of ws) w()
  }

  const settle = (b: Batch, error: BackendError | undefined) => {
    if (b.state !== "pending") return
    b.state = error === undefined ? "done" : "failed"
    b.error = error
    const ws = b.waiters
    b.waiters = undefined
    if (ws !== undefined) for (const w of ws) w(error)
  }

  const stageInOverlay = (b: Batch) => {
    if (b.ops.length < 64) {
      for (const op of b.ops) overlay[op.bucket].set(op.key, { seq: b.seq, value: op.value })
      return
    }
    // Long batches (compaction's deletes) are merged per bucket in one pass.
    const per: Partial<Record<BucketName, Array<readonly [Uint8Array, OverlayEntry]>>> = {}
    for (const op of b.ops) (per[op.bucket] ??= []).push([op.key, { seq: b.seq, value: op.value }])
    for (const name of BUCKETS) {
      const changes = per[name]
      if (changes !== undefined) overlay[name].applyBatch(changes, false)
    }
  }

  // ---- fail-stop -------------------------------------------------------------------------------

  /**
   * Every batch not yet acknowledged fails; the overlay is rebuilt from the acknowledged batches
   * LMDB does not hold yet (durable in the WAL, replayed at the next open), so reads go on showing
   * exactly what was acknowledged.
   */
  const fail = (error: BackendError, inFlight: ReadonlyArray<Batch>) => {
    failure = error
    if (applyTimer !== undefined) clearTimeout(applyTimer)
    applyTimer = undefined
    const doomed = inFlight.concat(staged)
    staged = []
    for (const name of BUCKETS) overlay[name].clear()
    for (const b of applying ?? []) stageInOverlay(b)
    for (const b of unapplied) stageInOverlay(b)
    for (const b of doomed) settle(b, error)
    const ws = applyWaiters
    applyWaiters = []
    for (const w of ws) w.resume(error)
  }

  // ---- WAL group commit ------------------------------------------------------------------------

  const startWal = () => {
    walScheduled = false
    if (walGroup !== undefined || staged.length === 0 || failure !== undefined) return
    const group = staged
    staged = []
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
      for (const b of group) settle(b, undefined)
      return
    }
    walGroup = group
    const startedAt = TRACE_PUT_EVENT ? traceNow() : 0
    try {
      writer.append(records, bytes, first, last, (err) => {
        if (TRACE_PUT_EVENT && err === undefined) traceDurable(startedAt)
        return err === undefined ? onWalDurable(group, last) : onWalFailed(group, err)
      })
    } catch (e) {
      onWalFailed(group, e)
    }
  }

  const walDone = () => {
    walGroup = undefined
    checkQuiet()
  }

  const onWalDurable = (group: Array<Batch>, last: number) => {
    walDone()
    if (failure !== undefined) {
      // Failed meanwhile (LMDB): these were never acknowledged, and stay so.
      for (const b of group) settle(b, failure)
      return
    }
    stats.walSyncs++
    durableSeq = last
    for (const b of group) {
      if (b.record === undefined) continue
      unapplied.push(b)
      unappliedOps += b.ops.length
    }
    for (const b of group) settle(b, undefined)
    // Whatever was staged during that sync goes into the next group, now.
    if (staged.length > 0) startWal()
    scheduleApply()
  }

  const onWalFailed = (group: Array<Batch>, cause: unknown) => {
    walDone()
    if (failure !== undefined) return
    fail(
      new BackendError({ reason: "WriteFailed", message: `backend: WAL write failed: ${errorText(cause)}`, cause }),
      group
    )
  }

  const scheduleWal = () => {
    if (!walScheduled && walGroup === undefined) {
      walScheduled = true
      // Let every writer of this macrotask stage first, so they share the fdatasync.
      setImmediate(startWal)
    }
  }

  // ---- LMDB apply ------------------------------------------------------------------------------

  const scheduleApply = () => {
    if (applying !== undefined || unapplied.length === 0 || failure !== undefined) return
    if (unappliedOps >= options.commitLimitOps || applyWaiters.length > 0) return startApply()
    if (applyTimer === undefined) {
      applyTimer = setTimeout(startApply, options.commitIntervalMs)
      // The WAL holds these batches: an idle process may exit, the next open replays them.
      applyTimer.unref()
    }
  }

  const startApply = () => {
    if (applyTimer !== undefined) clearTimeout(applyTimer)
    applyTimer = undefined
    if (applying !== undefined || unapplied.length === 0 || failure !== undefined) return
    const group = unapplied
    unapplied = []
    unappliedOps = 0
    applying = group
    const mark = group[group.length - 1]!.walSeq
    stats.commits++
    let done: Promise<boolean>
    try {
      done = root.batch(() => {
        for (const b of group) putOps(dbs, b.ops)
        void walDb.put(APPLIED_KEY, seqBytes(mark)) // settled with the batch
      })
    } catch (e) {
      onApplyFailed(group, e)
      return
    }
    const startedAt = TRACE_PUT_EVENT ? traceNow() : 0
    done.then(
      () => {
        if (TRACE_PUT_EVENT) traceApply(startedAt)
        onApplied(group, mark)
      },
      (e: unknown) => onApplyFailed(group, e)
    )
  }

  const onApplied = (group: Array<Batch>, mark: number) => {
    applying = undefined
    lmdbInUseBytes = undefined
    for (const b of group) pendingBytes -= b.record?.length ?? 0
    checkQuiet()
    appliedSeq = mark
    // lmdb-js has reset its read transaction before resolving: LMDB reads already show the group.
    const upTo = group[group.length - 1]!.seq
    for (const name of BUCKETS) if (overlay[name].size > 0) overlay[name].retain((e) => e.seq > upTo)
    writer.release(mark)
    if (applyWaiters.length > 0) {
      const keep: typeof applyWaiters = []
      const ready: typeof applyWaiters = []
      for (const w of applyWaiters) (w.target <= mark ? ready : keep).push(w)
      applyWaiters = keep
      for (const w of ready) w.resume(undefined)
    }
    scheduleApply()
  }

  const onApplyFailed = (group: Array<Batch>, cause: unknown) => {
    applying = undefined
    checkQuiet()
    // Acknowledged batches: back in the queue so the overlay rebuilt by fail keeps them.
    unapplied = group.concat(unapplied)
    if (failure !== undefined) return
    fail(
      new BackendError({ reason: "WriteFailed", message: `backend: commit failed: ${errorText(cause)}`, cause }),
      walGroup ?? []
    )
  }

  /** Waits until every batch acknowledged so far is in LMDB, applying at once instead of at the next tick. */
  const awaitApplied: Effect.Effect<void, BackendError> = Effect.suspend(() => {
    if (failure !== undefined) return Effect.fail(failure)
    const target = durableSeq
    if (appliedSeq >= target) return Effect.void
    return Effect.async<void, BackendError>((resume) => {
      applyWaiters.push({ target, resume: (error) => resume(error === undefined ? Effect.void : Effect.fail(error)) })
      scheduleApply()
    })
  })

  // ---- staging -----------------------------------------------------------------------------------

  const awaitBatch = (b: Batch): Effect.Effect<void, BackendError> =>
    Effect.suspend(() => {
      if (b.state === "done") return Effect.void
      if (b.state === "failed") return Effect.fail(b.error!)
      return Effect.async<void, BackendError>((resume) => {
        const w = (error: BackendError | undefined) => resume(error === undefined ? Effect.void : Effect.fail(error))
        ;(b.waiters ??= []).push(w)
        return Effect.sync(() => {
          const ws = b.waiters
          if (ws !== undefined) {
            const i = ws.indexOf(w)
            if (i >= 0) ws.splice(i, 1)
          }
        })
      })
    })

  const stage = (ops: ReadonlyArray<WriteOp>): Batch | BackendError => {
    if (closed) return new BackendError({ reason: "Closed", message: "backend is closed" })
    if (failure !== undefined) return failure
    const invalid = validateOps(ops)
    return invalid ?? enqueue(ops)
  }

  const enqueue = (ops: ReadonlyArray<WriteOp>): Batch => {
    const s = ++seq
    let b: Batch
    if (ops.length === 0) {
      b = new Batch(s, 0, ops, undefined)
    } else {
      // The one copy: the WAL record; the overlay and the LMDB transaction use views into it.
      const ws = ++walSeq
      const encoded = encodeRecord(ws, ops)
      b = new Batch(s, ws, encoded.ops, encoded.record)
      pendingBytes += encoded.record.length
      stageInOverlay(b)
      stats.batches++
    }
    staged.push(b)
    scheduleWal()
    return b
  }

  const get = (bucket: BucketName, key: Uint8Array): Uint8Array | undefined => {
    const o = overlay[bucket]
    if (o.size > 0) {
      const e = o.get(key)
      if (e !== undefined) return e.value
    }
    if (key.length === 0 || key.length > MAX_KEY_BYTES) return undefined
    return dbs[bucket].get(asBuffer(key))
  }

  const range = (
    bucket: BucketName,
    start: Uint8Array,
    end: Uint8Array | undefined,
    limit?: number
  ): ReadonlyArray<readonly [Uint8Array, Uint8Array]> => {
    const out: Array<readonly [Uint8Array, Uint8Array]> = []
    const max = limit === undefined ? Infinity : limit
    if (max <= 0) return out
    if (end !== undefined && compareBytes(start, end) >= 0) return out
    const o = overlay[bucket]
    let i = o.size > 0 ? o.lowerBound(start) : 0
    const oEnd = o.size
    const inRange = (k: Uint8Array) => end === undefined || compareBytes(k, end) < 0
    const opts: { start?: Uint8Array; end?: Uint8Array; inclusiveEnd?: boolean; limit?: number } = {}
    // LMDB cannot seek to a bound longer than its key limit; no stored key is that long, so the
    // prefix of that length is an equivalent bound (skip an equal start, include an equal end).
    const longStart = start.length > MAX_KEY_BYTES
    if (start.length > 0) opts.start = asBuffer(longStart ? start.subarray(0, MAX_KEY_BYTES) : start)
    if (end !== undefined) {
      if (end.length > MAX_KEY_BYTES) {
        opts.end = asBuffer(end.subarray(0, MAX_KEY_BYTES))
        opts.inclusiveEnd = true
      } else opts.end = asBuffer(end)
    }
    // Without pending deletes in the way, LMDB can stop at the limit by itself.
    if (limit !== undefined && o.size === 0 && !longStart) opts.limit = limit
    for (const { key, value } of dbs[bucket].getRange(opts)) {
      if (longStart && compareBytes(key, start) < 0) continue
      // Overlay keys before this LMDB key come first.
      while (i < oEnd) {
        const ok = o.keyAt(i)!
        if (compareBytes(ok, key) >= 0) break
        if (!inRange(ok)) {
          i = oEnd
          break
        }
        const e = o.valueAt(i)!
        i++
        if (e.value !== undefined) {
          out.push([ok, e.value])
          if (out.length >= max) return out
        }
      }
      if (i < oEnd && compareBytes(o.keyAt(i)!, key) === 0) {
        // A staged batch rewrote or deleted this key: the overlay shadows LMDB.
        const e = o.valueAt(i)!
        i++
        if (e.value === undefined) continue
        out.push([key, e.value])
      } else {
        out.push([key, value])
      }
      if (out.length >= max) return out
    }
    for (; i < oEnd; i++) {
      const ok = o.keyAt(i)!
      if (!inRange(ok)) break
      const e = o.valueAt(i)!
      if (e.value !== undefined) {
        out.push([ok, e.value])
        if (out.length >= max) break
      }
    }
    return out
  }

  const write = (ops: ReadonlyArray<WriteOp>): Effect.Effect<void, BackendError> => {
    const b = stage(ops)
    return b instanceof BackendError ? Effect.fail(b) : awaitBatch(b)
  }

  const flush: Effect.Effect<void, BackendError> = Effect.suspend(() => write([]))

  const pageStats = () => {
    const s = root.getStats() as {
      pageSize: number
      lastPageNumber: number
      treeBranchPageCount: number
      treeLeafPageCount: number
      overflowPages: number
      root: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }
      free: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }
    }
    return s
  }

  // LMDB's pages change only when an apply lands (onApplied clears this): the quota check reads
  // the size on every write, and counting pages walks eight trees' stats (17 % of a put's CPU).
  let lmdbInUseBytes: number | undefined
  const countLmdbInUseBytes = () => {
    const s = pageStats()
    const pages = (t: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }) =>
      t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages
    // Pages reachable from a tree (our buckets, the main db naming them, the freelist itself) and the two metas.
    let n = 2 + pages(s.root) + pages(s.free)
    for (const name of BUCKETS) n += pages(dbs[name].getStats() as Parameters<typeof pages>[0])
    return n * s.pageSize
  }

  const backend: BackendShape = {
    get,
    range,
    write,
    writeNow: stage,
    flush,
    sizeBytes: () => {
      try {
        return fs.statSync(dbPath).size
      } catch {
        const s = pageStats()
        return (s.lastPageNumber + 1) * s.pageSize
      }
    },
    sizeInUseBytes: () => {
      lmdbInUseBytes ??= countLmdbInUseBytes()
      // plus what is acknowledged (in the WAL) but not yet in LMDB, which commits every 100 ms:
      // without it the quota would let in up to 100 ms of writes past the limit
      return lmdbInUseBytes + pendingBytes
    },
    snapshot: Effect.suspend(() => {
      if (closed) return Effect.fail(new BackendError({ reason: "Closed", message: "backend is closed" }))
      // One synchronous pass: no commit can land in between, so LMDB's read view and the overlay agree.
      return Effect.sync(() => {
        const w = new SnapshotWriter()
        for (const name of BUCKETS) {
          for (const [k, v] of range(name, EMPTY, undefined)) w.add(name, k, v)
        }
        return w.finish()
      })
    }),
    // LMDB reuses freed pages itself and cannot shrink its file in place; defragment waits for
    // pending writes, in LMDB too, so that sizes read afterwards are settled (see docs/decisions.md).
    defragment: Effect.zipRight(flush, awaitApplied)
  }

  /** Resolves once no WAL group and no LMDB transaction is in flight. */
  const quiet: Effect.Effect<void> = Effect.suspend(() =>
    walGroup === undefined && applying === undefined
      ? Effect.void
      : Effect.zipRight(
          Effect.async<void>((resume) => void quietWaiters.push(() => resume(Effect.void))),
          quiet
        )
  )

  /**
   * Refuses further writes at once, waits until what is staged is in the WAL and everything in the
   * WAL is in LMDB, then closes the log (deleting it when LMDB holds it all). After a failure the
   * log is kept as it is: the next open replays it.
   */
  const close: Effect.Effect<void> = Effect.suspend(() => {
    if (closed) return Effect.void
    closed = true
    return Effect.gen(function* () {
      if (failure === undefined) {
        yield* Effect.ignore(awaitBatch(enqueue([])))
        yield* Effect.ignore(awaitApplied)
      }
      // Nothing may still be writing to a file we close.
      yield* quiet
      if (applyTimer !== undefined) clearTimeout(applyTimer)
      applyTimer = undefined
      try {
        writer.close(failure === undefined ? appliedSeq : undefined)
      } catch {
        // the files are closed or gone either way; nothing to report to at scope close
      }
    })
  })

  return { backend, stats, close }
}

/** The LMDB Backend in `options.dataDir`, open for the Layer's lifetime. */
export const layerLmdb = (options: LmdbOptions): Layer.Layer<Backend, BackendError> =>
  Layer.scoped(
    Backend,
    Effect.map(makeLmdbBackend(options), (m) => m.backend)
  )
