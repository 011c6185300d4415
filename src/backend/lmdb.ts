/**
 * The LMDB Backend (default): one LMDB environment at <data-dir>/member/snap/db with a named
 * database per bucket, binary keys in LMDB's bytewise order.
 *
 * Writes, like etcd's backend batchTx + txReadBuffer:
 * - `write(ops)` copies the batch into an in-memory overlay (per bucket, sorted) at once, so every
 *   later get/range sees it; reads merge the overlay over LMDB.
 * - Batches queue; at most one LMDB transaction is in flight. When it is durable, everything staged
 *   meanwhile goes into the next single transaction (group commit): 32 concurrent writers share
 *   each fsync. Transactions commit in staging order, so batches are durable in staging order.
 * - Once a transaction is durable its batches' overlay entries are dropped (unless a later batch
 *   rewrote the key) and their write Effects complete.
 *
 * Durability: lmdb-js runs with overlappingSync off (see docs/decisions.md): its write promise then
 * resolves after mdb_txn_commit returned, i.e. after fdatasync of the data pages and the O_DSYNC
 * write of the meta page.
 *
 * A failed commit is fail-stop (etcd's backend panics on a failed commit): the batches of that
 * transaction and every batch queued behind it fail with WriteFailed, their overlay entries are
 * dropped, and every later write fails at once.
 */
import * as fs from "node:fs"
import { Effect, Layer, type Scope } from "effect"
import { open, type Database, type RootDatabase } from "lmdb"
import { Backend, BackendError, type BackendShape, type BucketName, type WriteOp } from "./backend.js"
import { fsyncDir, type LockMode, openDataDir } from "./data-dir.js"
import { BUCKETS, SnapshotWriter } from "./snapshot-format.js"
import { compareBytes, SortedBucket } from "./sorted-bucket.js"
import { MAX_KEY_BYTES, validateOps } from "./validate.js"

export interface LmdbOptions {
  /** the data dir (etcd's --data-dir); created when missing */
  readonly dataDir: string
  /** LMDB page size for a new environment (default: the OS page size) */
  readonly pageSize?: number | undefined
  /** internal: force the lock mechanism (tests) */
  readonly lockMode?: LockMode | undefined
}

/** Counters for tests and benchmarks; not part of the Backend contract. */
export interface LmdbStats {
  /** LMDB write transactions committed */
  commits: number
  /** non-empty batches staged */
  batches: number
}

interface Batch {
  readonly seq: number
  readonly ops: ReadonlyArray<WriteOp>
  state: "pending" | "done" | "failed"
  error: BackendError | undefined
  waiters: Array<(error: BackendError | undefined) => void> | undefined
}

interface OverlayEntry {
  readonly seq: number
  /** undefined: deleted by a staged batch */
  readonly value: Uint8Array | undefined
}

const EMPTY = new Uint8Array(0)

const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)

/**
 * Opens the data dir and the LMDB environment for this scope; returns the backend and its
 * counters. Scope close flushes pending batches, closes LMDB and releases the data dir lock.
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
  Effect.gen(function*() {
    const layout = yield* openDataDir(options.dataDir, { lockMode: options.lockMode })
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
          const dbs = {} as Record<BucketName, Database<Buffer, Uint8Array>>
          for (const name of BUCKETS) dbs[name] = root.openDB<Buffer, Uint8Array>(name, { keyEncoding: "binary", encoding: "binary" })
          return { root, dbs }
        },
        catch: (e) =>
          new BackendError({
            reason: "Unreadable",
            message: `data dir ${layout.dir}: cannot open ${layout.dbPath}: ${e instanceof Error ? e.message : String(e)}`,
            cause: e
          })
      }),
      ({ root }) => Effect.tryPromise(() => root.close()).pipe(Effect.ignore)
    )
    if (layout.fresh) {
      // LMDB fsyncs its file on commit, not the directory entries of the files it created.
      yield* Effect.try({ try: () => fsyncDir(layout.snapDir), catch: (e) => e }).pipe(Effect.ignore)
    }
    const core = makeCore(env.root, env.dbs, layout.dbPath)
    yield* Effect.addFinalizer(() => core.close)
    return { backend: core.backend, stats: core.stats, env: env.root }
  })

const makeCore = (
  root: RootDatabase<Buffer, Uint8Array>,
  dbs: Record<BucketName, Database<Buffer, Uint8Array>>,
  dbPath: string
) => {
  const stats: LmdbStats = { commits: 0, batches: 0 }
  const overlay: Record<BucketName, SortedBucket<OverlayEntry>> = {
    key: new SortedBucket(),
    meta: new SortedBucket(),
    lease: new SortedBucket()
  }
  let seq = 0
  let queue: Array<Batch> = []
  let inFlight: Array<Batch> | undefined
  let scheduled = false
  let failure: BackendError | undefined
  let closed = false

  const settle = (b: Batch, error: BackendError | undefined) => {
    b.state = error === undefined ? "done" : "failed"
    b.error = error
    const ws = b.waiters
    b.waiters = undefined
    if (ws !== undefined) for (const w of ws) w(error)
  }

  /** Drops the overlay entries these batches wrote, unless a later staged batch rewrote the key. */
  const dropOverlay = (group: ReadonlyArray<Batch>, upTo: number) => {
    for (const b of group) {
      for (const op of b.ops) {
        const o = overlay[op.bucket]
        const e = o.get(op.key)
        if (e !== undefined && e.seq <= upTo) o.delete(op.key)
      }
    }
  }

  const onCommitted = (group: Array<Batch>) => {
    inFlight = undefined
    dropOverlay(group, group[group.length - 1]!.seq)
    for (const b of group) settle(b, undefined)
    // Whatever was staged during that commit goes into the next transaction, now.
    if (queue.length > 0) startCommit()
  }

  const onFailed = (group: Array<Batch>, cause: unknown) => {
    inFlight = undefined
    failure = new BackendError({
      reason: "WriteFailed",
      message: `backend: commit failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })
    const all = group.concat(queue)
    queue = []
    for (const name of BUCKETS) overlay[name].clear()
    for (const b of all) settle(b, failure)
  }

  const startCommit = () => {
    scheduled = false
    if (inFlight !== undefined || queue.length === 0 || failure !== undefined) return
    const group = queue
    queue = []
    inFlight = group
    let ops = 0
    for (const b of group) ops += b.ops.length
    if (ops === 0) {
      // Only flush markers: durable as soon as everything before them is.
      onCommitted(group)
      return
    }
    stats.commits++
    let done: Promise<boolean>
    try {
      done = root.batch(() => {
        for (const b of group) {
          for (const op of b.ops) {
            const db = dbs[op.bucket]
            if (op.value === undefined) db.remove(op.key)
            else db.put(op.key, op.value as Buffer)
          }
        }
      })
    } catch (e) {
      onFailed(group, e)
      return
    }
    done.then(
      () => onCommitted(group),
      (e: unknown) => onFailed(group, e)
    )
  }

  const schedule = () => {
    if (!scheduled && inFlight === undefined) {
      scheduled = true
      // Let every writer of this macrotask stage first, so they share the transaction.
      setImmediate(startCommit)
    }
  }

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
    // Copies: LMDB reads value bytes by pointer when it commits, and the overlay serves reads until then.
    const copied: Array<WriteOp> = new Array(ops.length)
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!
      const key = Buffer.from(op.key)
      const value = op.value === undefined ? undefined : Buffer.from(op.value)
      copied[i] = { bucket: op.bucket, key, value }
      overlay[op.bucket].set(key, { seq: s, value })
    }
    const b: Batch = { seq: s, ops: copied, state: "pending", error: undefined, waiters: undefined }
    if (ops.length > 0) stats.batches++
    queue.push(b)
    schedule()
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

  const backend: BackendShape = {
    get,
    range,
    write,
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
      // Pages reachable from a tree (our buckets, the main db naming them, the freelist itself) and the two metas.
      const s = pageStats()
      const pages = (t: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }) =>
        t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages
      let n = 2 + pages(s.root) + pages(s.free)
      for (const name of BUCKETS) n += pages(dbs[name].getStats() as Parameters<typeof pages>[0])
      return n * s.pageSize
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
    // pending writes so that sizes read afterwards are settled (see docs/decisions.md).
    defragment: Effect.suspend(() => flush)
  }

  /** Refuses further writes at once, then waits for what is pending (a failure is already reported to its writers). */
  const close: Effect.Effect<void> = Effect.suspend(() => {
    if (closed) return Effect.void
    closed = true
    return failure !== undefined ? Effect.void : Effect.ignore(awaitBatch(enqueue([])))
  })

  return { backend, stats, close }
}

/** The LMDB Backend in `options.dataDir`, open for the Layer's lifetime. */
export const layerLmdb = (options: LmdbOptions): Layer.Layer<Backend, BackendError> =>
  Layer.scoped(Backend, Effect.map(makeLmdbBackend(options), (m) => m.backend))
