/**
 * The LMDB backend's running state, shared by its parts: staging and the WAL group commit
 * (group-commit.ts), the LMDB transactions (lmdb-apply.ts), reads (read-tx.ts), and open, close
 * and sizes (lmdb.ts). One plain object the parts take as their first argument, so a put or a
 * range reads fields rather than closures; and the fail-stop, which reaches into all of them.
 *
 * A batch moves through `staged` (waiting for the WAL) → `walGroup` (being written and synced) →
 * `unapplied` (WAL-durable, acknowledged) → `applying` (in the LMDB transaction in flight) → LMDB;
 * its ops are in the overlay from staging until LMDB holds them.
 */
import type { BackendError } from "./backend.js"
import type { Dbs, LmdbEnv } from "./lmdb-env.js"
import { Overlay } from "./overlay.js"
import type { StagedBatch } from "./staged-batch.js"
import type { WalWriter } from "./wal.js"

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

export interface CoreOptions {
  readonly env: LmdbEnv
  readonly dbPath: string
  readonly writer: WalWriter
  /** the applied mark after recovery: WAL seqs continue above it */
  readonly applied: number
  readonly stats: LmdbStats
  readonly commitIntervalMs: number
  readonly commitLimitOps: number
}

/** The two tasks the event loop runs later (setImmediate, setTimeout), each bound to its core once. */
export interface CoreTasks {
  /** group-commit.ts: hands what is staged to the WAL as one group */
  readonly startWal: (core: LmdbCore) => void
  /** lmdb-apply.ts: puts the WAL-durable batches into one LMDB transaction */
  readonly startApply: (core: LmdbCore) => void
}

export interface ApplyWaiter {
  readonly target: number
  readonly resume: (error: BackendError | undefined) => void
}

export class LmdbCore {
  readonly env: LmdbEnv
  readonly dbs: Dbs
  readonly dbPath: string
  readonly writer: WalWriter
  readonly stats: LmdbStats
  readonly commitIntervalMs: number
  readonly commitLimitOps: number
  readonly overlay = new Overlay()
  /** the tasks, bound to this core */
  readonly startWal: () => void
  readonly startApply: () => void

  /** last staging seq handed out (flush markers too) */
  seq = 0
  /** last WAL seq handed out */
  walSeq: number
  /** last WAL seq that is durable (acknowledged) */
  durableSeq: number
  /** last WAL seq whose ops are in LMDB */
  appliedSeq: number
  /** staged, not yet handed to the WAL */
  staged: Array<StagedBatch> = []
  walScheduled = false
  /** the WAL group being written and synced */
  walGroup: Array<StagedBatch> | undefined = undefined
  /** WAL-durable, not yet in LMDB, in staging order */
  unapplied: Array<StagedBatch> = []
  unappliedOps = 0
  /** WAL record bytes of batches staged but not yet in LMDB: counted in the size in use */
  pendingBytes = 0
  /** the LMDB transaction in flight */
  applying: Array<StagedBatch> | undefined = undefined
  applyTimer: ReturnType<typeof setTimeout> | undefined = undefined
  /** waiting until appliedSeq >= target (close, defragment) */
  applyWaiters: Array<ApplyWaiter> = []
  /** called when neither a WAL group nor an LMDB transaction is in flight any more (close) */
  quietWaiters: Array<() => void> = []
  /**
   * LMDB's pages in use, counted once per apply (lmdb-apply.ts clears it): the quota check reads
   * the size on every write, and counting pages walks eight trees' stats (17 % of a put's CPU).
   */
  lmdbInUseBytes: number | undefined = undefined
  failure: BackendError | undefined = undefined
  /** told once, when the backend fails (`onFailure`) */
  failureListeners: Array<(error: BackendError) => void> = []
  closed = false

  constructor(options: CoreOptions, tasks: CoreTasks) {
    this.env = options.env
    this.dbs = options.env.dbs
    this.dbPath = options.dbPath
    this.writer = options.writer
    this.stats = options.stats
    this.commitIntervalMs = options.commitIntervalMs
    this.commitLimitOps = options.commitLimitOps
    this.walSeq = options.applied
    this.durableSeq = options.applied
    this.appliedSeq = options.applied
    this.startWal = () => tasks.startWal(this)
    this.startApply = () => tasks.startApply(this)
  }

  /** Runs the quiet waiters once no WAL group and no LMDB transaction is in flight. */
  checkQuiet(): void {
    if (this.walGroup !== undefined || this.applying !== undefined || this.quietWaiters.length === 0) return
    const ws = this.quietWaiters
    this.quietWaiters = []
    for (const w of ws) w()
  }

  clearApplyTimer(): void {
    if (this.applyTimer !== undefined) clearTimeout(this.applyTimer)
    this.applyTimer = undefined
  }

  /**
   * Fail-stop: every batch not yet acknowledged fails (`inFlight`, then the staged ones); the
   * overlay is rebuilt from the acknowledged batches LMDB does not hold yet (durable in the WAL,
   * replayed at the next open), so reads go on showing exactly what was acknowledged; every later
   * write fails at once. `inFlightError` (default: `error`) is what the in-flight batches get when
   * their outcome differs from the staged ones' (a WAL group still being written when LMDB failed
   * may yet be durable: unknown, where the staged ones are surely refused).
   */
  fail(error: BackendError, inFlight: ReadonlyArray<StagedBatch>, inFlightError: BackendError = error): void {
    this.failure = error
    this.clearApplyTimer()
    const staged = this.staged
    this.staged = []
    this.overlay.clear()
    for (const b of this.applying ?? []) this.overlay.stage(b)
    for (const b of this.unapplied) this.overlay.stage(b)
    for (const b of inFlight) b.settle(inFlightError)
    for (const b of staged) b.settle(error)
    const ws = this.applyWaiters
    this.applyWaiters = []
    for (const w of ws) w.resume(error)
    const ls = this.failureListeners
    this.failureListeners = []
    for (const l of ls) l(error)
  }
}
