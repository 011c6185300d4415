/**
 * The store's running state (kvstore.go's `store` struct): what its txns read and write (the
 * StoreCore of kvstore-txn.ts), who hears commits, the staged revisions waiting for their batch to
 * be durable, and whether the store still serves. One plain object the parts take as their first
 * argument — reads (kvstore-read.ts), the write path (kvstore-write.ts), commits
 * (kvstore-commit.ts), compaction (kvstore-compaction.ts), the lessor's hooks (kvstore-lease.ts) —
 * so a put or a range reads fields rather than closures.
 */
import { type BackendError, type BackendShape, isNoSpace } from "../backend/backend.js"
import { type EtcdError, Errors } from "../errors.js"
import type { Event } from "./key-value.js"
import type { CommitListener, LeaseAttachments } from "./kv.js"
import type { StoreCore } from "./kvstore-txn.js"
import { TreeIndex } from "./tree-index.js"

/** A revision staged in the backend, committed once its batch is durable. */
export interface PendingRevision {
  readonly rev: number
  readonly events: ReadonlyArray<Event>
}

/** The request limits (KvStoreConfig, defaults filled in). */
export interface KvStoreLimits {
  /** etcd's --max-request-bytes */
  readonly maxRequestBytes: number
  /** etcd's --max-txn-ops */
  readonly maxTxnOps: number
  /** revisions examined per physical-compaction batch */
  readonly compactionBatchLimit: number
}

export class KvStore implements StoreCore {
  readonly index = new TreeIndex()
  headRev = 1
  committedRev = 1
  compactMainRev = -1
  readonly leases = new Map<string, bigint>()
  lessor: LeaseAttachments | undefined = undefined
  readonly listeners = new Set<CommitListener>()
  /** staged revisions, in revision order, not yet committed */
  readonly pending: Array<PendingRevision> = []
  /** set once the store can no longer serve: backend failure or closed scope */
  stopped: EtcdError | undefined = undefined

  constructor(
    readonly backend: BackendShape,
    readonly limits: KvStoreLimits,
    /** logs on the store layer's runtime (the write fast path has no fiber of its own) */
    readonly logError: (message: string, cause: unknown) => void
  ) {}

  /**
   * Told once when the backend fails under the store (a WAL write or fdatasync, an LMDB commit):
   * the member cannot go on (kvstore.ts reports it to `Fatal`, so `serve` exits 1 with that line).
   */
  onBackendFailure: (message: string) => void = () => {}

  /**
   * The backend failed a staged batch: the store stops, the member is told; the request fails
   * with NOSPACE when the disk was full (as etcd refuses a write past its space), else "server stopped".
   */
  backendFailed(error: BackendError): EtcdError {
    const first = this.stopped === undefined
    const stopped = this.fail()
    if (first) this.onBackendFailure(error.message)
    return isNoSpace(error) ? Errors.noSpace() : stopped
  }

  /** A backend failure is fatal: later requests fail rather than serve state the disk lacks. */
  fail(): EtcdError {
    if (this.stopped === undefined) {
      this.stopped = Errors.stopped()
      // staged revisions may never become durable: drop them unannounced
      this.pending.length = 0
    }
    return this.stopped
  }
}
