/**
 * The revisioned key-value store's public contract (etcd's mvcc.KV plus the request checks of
 * v3rpc/key.go): Range, Put, DeleteRange, Txn and Compact with etcd's exact semantics, and the two
 * seams the watch layer and the lessor plug into.
 *
 * Request and response shapes follow etcdserverpb (rpc.proto) field for field, in camelCase, with
 * revisions as numbers and lease ids as bigint. `kvstore.ts` implements it; `layer` there builds it.
 */
import { Context, type Effect, type Exit, type Scope } from "effect"
import type { WriteOp } from "../backend/backend.js"
import type { EtcdError } from "../errors.js"
import type { Event, KeyValue } from "./key-value.js"
import type { WriteResult } from "./pending-write.js"

/** The header of the store's responses: the revision they reflect. */
export interface ResponseHeader {
  /** the store revision the response reflects */
  readonly revision: number
}

/** RangeRequest.SortOrder: NONE (0), ASCEND (1) or DESCEND (2). */
export const SortOrder = { NONE: 0, ASCEND: 1, DESCEND: 2 } as const
/** One of `SortOrder`'s values. */
export type SortOrder = (typeof SortOrder)[keyof typeof SortOrder]
/** RangeRequest.SortTarget: the field a range is sorted by (KEY, VERSION, CREATE, MOD, VALUE). */
export const SortTarget = { KEY: 0, VERSION: 1, CREATE: 2, MOD: 3, VALUE: 4 } as const
/** One of `SortTarget`'s values. */
export type SortTarget = (typeof SortTarget)[keyof typeof SortTarget]

/** etcd's RangeRequest: a key or range, at a revision, with limit, sort, count and revision filters. */
export interface RangeRequest {
  readonly key: Uint8Array
  /** empty/absent: the single key; "\0": every key >= key; otherwise [key, rangeEnd) */
  readonly rangeEnd?: Uint8Array | undefined
  readonly limit?: number | undefined
  /** 0/absent: the current revision */
  readonly revision?: number | undefined
  readonly sortOrder?: SortOrder | undefined
  readonly sortTarget?: SortTarget | undefined
  readonly serializable?: boolean | undefined
  readonly keysOnly?: boolean | undefined
  readonly countOnly?: boolean | undefined
  readonly minModRevision?: number | undefined
  readonly maxModRevision?: number | undefined
  readonly minCreateRevision?: number | undefined
  readonly maxCreateRevision?: number | undefined
}
/** etcd's RangeResponse: the key-values, whether more matched, and the count. */
export interface RangeResponse {
  readonly header: ResponseHeader
  readonly kvs: ReadonlyArray<KeyValue>
  readonly more: boolean
  readonly count: number
}

/** etcd's PutRequest: a key, its value and lease, and the ignore_value, ignore_lease and prev_kv options. */
export interface PutRequest {
  readonly key: Uint8Array
  readonly value?: Uint8Array | undefined
  readonly lease?: bigint | undefined
  readonly prevKv?: boolean | undefined
  readonly ignoreValue?: boolean | undefined
  readonly ignoreLease?: boolean | undefined
}
/** etcd's PutResponse: the header, and the previous key-value when asked for. */
export interface PutResponse {
  readonly header: ResponseHeader
  readonly prevKv?: KeyValue | undefined
}

/** etcd's DeleteRangeRequest: a key or range, and prev_kv. */
export interface DeleteRangeRequest {
  readonly key: Uint8Array
  readonly rangeEnd?: Uint8Array | undefined
  readonly prevKv?: boolean | undefined
}
/** etcd's DeleteRangeResponse: how many keys were deleted, and their previous key-values when asked for. */
export interface DeleteRangeResponse {
  readonly header: ResponseHeader
  readonly deleted: number
  readonly prevKvs: ReadonlyArray<KeyValue>
}

/** Compare.CompareResult: EQUAL, GREATER, LESS or NOT_EQUAL. */
export const CompareResult = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const
/** One of `CompareResult`'s values. */
export type CompareResult = (typeof CompareResult)[keyof typeof CompareResult]
/** Compare.CompareTarget: VERSION, CREATE, MOD, VALUE or LEASE. */
export const CompareTarget = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3, LEASE: 4 } as const
/** One of `CompareTarget`'s values. */
export type CompareTarget = (typeof CompareTarget)[keyof typeof CompareTarget]

/** etcd's Compare: a txn guard on a key or range's version, create or mod revision, value or lease. */
export type Compare = {
  readonly result: CompareResult
  readonly key: Uint8Array
  readonly rangeEnd?: Uint8Array | undefined
} & (
  | { readonly target: typeof CompareTarget.VERSION; readonly version: number }
  | { readonly target: typeof CompareTarget.CREATE; readonly createRevision: number }
  | { readonly target: typeof CompareTarget.MOD; readonly modRevision: number }
  | { readonly target: typeof CompareTarget.VALUE; readonly value: Uint8Array }
  | { readonly target: typeof CompareTarget.LEASE; readonly lease: bigint }
)

/** etcd's RequestOp: one operation of a txn branch (a range, put, delete or nested txn). */
export type RequestOp =
  | { readonly _tag: "Range"; readonly request: RangeRequest }
  | { readonly _tag: "Put"; readonly request: PutRequest }
  | { readonly _tag: "DeleteRange"; readonly request: DeleteRangeRequest }
  | { readonly _tag: "Txn"; readonly request: TxnRequest }

/** etcd's ResponseOp: the response of one operation of a txn branch. */
export type ResponseOp =
  | { readonly _tag: "Range"; readonly response: RangeResponse }
  | { readonly _tag: "Put"; readonly response: PutResponse }
  | { readonly _tag: "DeleteRange"; readonly response: DeleteRangeResponse }
  | { readonly _tag: "Txn"; readonly response: TxnResponse }

/** etcd's TxnRequest: guards, and the operations of the success and failure branches. */
export interface TxnRequest {
  readonly compare: ReadonlyArray<Compare>
  readonly success: ReadonlyArray<RequestOp>
  readonly failure: ReadonlyArray<RequestOp>
}
/** etcd's TxnResponse: whether the guards held, and the responses of the branch that ran. */
export interface TxnResponse {
  readonly header: ResponseHeader
  readonly succeeded: boolean
  readonly responses: ReadonlyArray<ResponseOp>
}

/** etcd's CompactionResponse: the header. */
export interface CompactResponse {
  readonly header: ResponseHeader
}

/** What the store asks of the lessor (src/lease). Without one, any non-zero lease is "not found". */
export interface LeaseAttachments {
  readonly exists: (id: bigint) => boolean
  readonly attach: (id: bigint, key: Uint8Array) => void
  readonly detach: (id: bigint, key: Uint8Array) => void
}

/**
 * Called once per committed revision, in revision order, synchronously, after the revision is
 * durable and visible (`rev()` already returns it). Events are in sub-revision (operation) order.
 * This is etcd's watchableStore.notify seam.
 */
export type CommitListener = (rev: number, events: ReadonlyArray<Event>) => void

/**
 * The store's operations: reads, writes (as Effects and as the fast path's plain results),
 * compaction, and the seams for the watch layer and lessor.
 */
export interface MvccStoreShape {
  /** the current revision: the newest durable, visible one (1 on a fresh store) */
  readonly rev: () => number
  /** the compaction watermark set by the last Compact request (-1 when never compacted) */
  readonly compactRevision: () => number

  /** etcd's Range: reads the committed state (never waits) */
  readonly range: (req: RangeRequest) => Effect.Effect<RangeResponse, EtcdError>
  /**
   * `range` answered now, as a plain Exit: a Range never waits (it reads the committed state), so
   * the server's unary fast path runs it without an Effect to interpret (server/grpc-bridge.ts).
   */
  readonly rangeNow: (req: RangeRequest) => Exit.Exit<RangeResponse, EtcdError>
  /** etcd's Put: a new revision once durable */
  readonly put: (req: PutRequest) => Effect.Effect<PutResponse, EtcdError>
  /** etcd's DeleteRange: a new revision once durable, unless no key matched */
  readonly deleteRange: (req: DeleteRangeRequest) => Effect.Effect<DeleteRangeResponse, EtcdError>
  /** etcd's Txn: the guards evaluated and one branch applied in one revision (none when it only reads) */
  readonly txn: (req: TxnRequest) => Effect.Effect<TxnResponse, EtcdError>
  /**
   * The write fast path: `put`/`deleteRange`/`txn` checked, evaluated and staged now, with no
   * Effect to run. The outcome is a plain Exit when known at once (a refused request, a read-only
   * txn, a backend durable at once), else a PendingWrite completed — in revision order, after the
   * commit listeners ran — once the batch is durable (server/grpc-bridge.ts answers from it without
   * a fiber). Same checks, errors, logs and store stop as the Effect methods, which are built on these.
   */
  readonly putNow: (req: PutRequest) => WriteResult<PutResponse, EtcdError>
  /** `deleteRange` on the write fast path (see `putNow`) */
  readonly deleteRangeNow: (req: DeleteRangeRequest) => WriteResult<DeleteRangeResponse, EtcdError>
  /** `txn` on the write fast path (see `putNow`) */
  readonly txnNow: (req: TxnRequest) => WriteResult<TxnResponse, EtcdError>
  /** Sets the watermark at once; with `physical` waits until superseded revisions are removed. */
  readonly compact: (revision: number, physical?: boolean) => Effect.Effect<CompactResponse, EtcdError>

  /**
   * Subscribes a commit listener for the life of the current scope (the watchable store; several
   * may listen). Listeners run synchronously, in subscription order, once per committed revision.
   * One that throws breaks the watch guarantee (some watcher would miss an acknowledged revision):
   * the store stops — every later request fails — and the write that committed dies with it.
   */
  readonly subscribeCommits: (listener: CommitListener) => Effect.Effect<void, never, Scope.Scope>
  /** subscribeCommits without a scope: returns the unsubscribe (for tests and plain callers). */
  readonly addCommitListener: (listener: CommitListener) => () => void
  /**
   * Events of every revision in [from, to] read from the history, in (main, sub) order, at most
   * `maxRevisions` distinct revisions when given. DELETE kvs are tombstone-shaped. Synchronous.
   * The caller keeps from > compactRevision() (compacted history is gone).
   */
  readonly eventsBetween: (from: number, to: number, maxRevisions?: number) => ReadonlyArray<Event>
  /** The key's KeyValue as of revision `rev` (undefined if absent or compacted). For prev_kv. */
  readonly getAt: (key: Uint8Array, rev: number) => KeyValue | undefined

  /**
   * Deletes these keys in ONE revision (sorted key order, absent keys skipped; no revision when none
   * exists), bypassing the txn op limit, and stages `extra` backend ops in the same atomic batch.
   * For lease revoke: the attached keys and the lease record go together.
   */
  readonly deleteKeys: (
    keys: ReadonlyArray<Uint8Array>,
    extra?: ReadonlyArray<WriteOp>
  ) => Effect.Effect<DeleteRangeResponse, EtcdError>

  /**
   * Plugs the lessor in (src/lease) for the life of the current scope; the store then checks,
   * attaches and detaches leases. `setup` runs in the same synchronous step (no write can come
   * between the lessor reading `keysWithLease` and the store starting to report attachments).
   * A store has one lessor: a second at the same time is a defect.
   */
  readonly attachLessor: <A>(
    setup: () => { readonly lessor: LeaseAttachments; readonly value: A }
  ) => Effect.Effect<A, never, Scope.Scope>
  /** Every live key with a non-zero lease, for the lessor to rebuild its attachments on start. */
  readonly keysWithLease: () => ReadonlyArray<{ readonly key: Uint8Array; readonly lease: bigint }>
}

/** The revisioned key-value store service (etcd's mvcc.KV): `Mvcc.layer` builds it over a Backend. */
export class MvccStore extends Context.Tag("etcd-effect/MvccStore")<MvccStore, MvccStoreShape>() {}
