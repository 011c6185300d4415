/**
 * KV operations as values (clientv3's `Op`): get, put, delete and nested txn, used directly by the
 * KV API and as the branches of a transaction. Each op knows its wire request and how to read its
 * wire response, so a txn's results come back typed per op.
 */
import type * as M from "../proto/index.js"
import { SortOrder, SortTarget } from "../proto/index.js"
import { keyRange, type RangeOptions } from "./key-range.js"
import { type KeyValue, type ResponseHeader, toBytes } from "./key-value.js"
import { big, fromWireHeader, fromWireKv, i64 } from "./wire.js"

/** Options of a get (etcd's RangeRequest): the range, revision, limit, sort and filters. */
export interface GetOptions extends RangeOptions {
  /** read at this revision (0n/absent: the latest) */
  readonly revision?: bigint | number | undefined
  /** at most this many keys (0: no limit) */
  readonly limit?: bigint | number | undefined
  readonly keysOnly?: boolean | undefined
  readonly countOnly?: boolean | undefined
  /** served by the member without a quorum read */
  readonly serializable?: boolean | undefined
  readonly sort?:
    | {
        readonly target: keyof typeof SortTarget
        readonly order: keyof typeof SortOrder
      }
    | undefined
  readonly minModRevision?: bigint | number | undefined
  readonly maxModRevision?: bigint | number | undefined
  readonly minCreateRevision?: bigint | number | undefined
  readonly maxCreateRevision?: bigint | number | undefined
}

/** Options of a put: a lease, the previous value back, or keeping the current value or lease. */
export interface PutOptions {
  /** attach the key to this lease */
  readonly lease?: bigint | undefined
  /** return the key's previous state */
  readonly prevKv?: boolean | undefined
  /** keep the current value (the key must exist) */
  readonly ignoreValue?: boolean | undefined
  /** keep the current lease (the key must exist) */
  readonly ignoreLease?: boolean | undefined
}

/** Options of a delete: the range, and the deleted key-values back. */
export interface DeleteOptions extends RangeOptions {
  /** return the deleted key-values */
  readonly prevKv?: boolean | undefined
}

/** What a get answers: the key-values, whether more matched than `limit` let through, and the count. */
export interface RangeResult {
  readonly header: ResponseHeader
  readonly kvs: ReadonlyArray<KeyValue>
  /** more keys matched than `limit` let through */
  readonly more: boolean
  /** how many keys matched */
  readonly count: bigint
}

/** What a put answers: the header, and the key's previous state with `prevKv`. */
export interface PutResult {
  readonly header: ResponseHeader
  readonly prevKv: KeyValue | undefined
}

/** What a delete answers: how many keys were deleted, and their last states with `prevKv`. */
export interface DeleteResult {
  readonly header: ResponseHeader
  readonly deleted: bigint
  readonly prevKvs: ReadonlyArray<KeyValue>
}

export interface GetOp {
  readonly _tag: "Get"
  readonly key: string | Uint8Array
  readonly options: GetOptions
}
export interface PutOp {
  readonly _tag: "Put"
  readonly key: string | Uint8Array
  readonly value: string | Uint8Array
  readonly options: PutOptions
}
export interface DeleteOp {
  readonly _tag: "Delete"
  readonly key: string | Uint8Array
  readonly options: DeleteOptions
}
export interface TxnOp {
  readonly _tag: "Txn"
  readonly compare: ReadonlyArray<Comparison>
  readonly success: ReadonlyArray<Op>
  readonly failure: ReadonlyArray<Op>
}
/** One operation: a get, put, delete or nested txn (built with `Op.get`, …). */
export type Op = GetOp | PutOp | DeleteOp | TxnOp

/** The result type of an op: a Get gives a RangeResult, and so on. */
export type OpResult<O extends Op> = O extends GetOp
  ? RangeResult
  : O extends PutOp
    ? PutResult
    : O extends DeleteOp
      ? DeleteResult
      : TxnResult<ReadonlyArray<Op>, ReadonlyArray<Op>>

export type OpResults<Ops extends ReadonlyArray<Op>> = { -readonly [K in keyof Ops]: OpResult<Ops[K]> }

/** A txn's outcome: which branch ran, and that branch's results, one per op, typed per op. */
export type TxnResult<Success extends ReadonlyArray<Op>, Failure extends ReadonlyArray<Op>> =
  | { readonly header: ResponseHeader; readonly succeeded: true; readonly responses: OpResults<Success> }
  | { readonly header: ResponseHeader; readonly succeeded: false; readonly responses: OpResults<Failure> }

// ---- comparisons ----

export type CompareTargetName = "version" | "createRevision" | "modRevision" | "value" | "lease"

/** One txn guard: compare `target` of the key (or range) with `operand` (built with `Compare.…`). */
export interface Comparison {
  readonly target: CompareTargetName
  readonly key: Uint8Array
  readonly rangeEnd: Uint8Array
  readonly result: "=" | "!=" | ">" | "<"
  readonly operand: bigint | Uint8Array
}

const comparer =
  <T>(target: CompareTargetName, toOperand: (v: T) => bigint | Uint8Array) =>
  (key: string | Uint8Array, range: RangeOptions = {}) => {
    const r = keyRange(key, range)
    const make =
      (result: Comparison["result"]) =>
      (operand: T): Comparison => ({
        target,
        key: r.key,
        rangeEnd: r.rangeEnd,
        result,
        operand: toOperand(operand)
      })
    return {
      /** holds when the target equals `operand` */
      equals: make("="),
      /** holds when the target differs from `operand` */
      notEquals: make("!="),
      /** holds when the target is greater than `operand` */
      greater: make(">"),
      /** holds when the target is less than `operand` */
      less: make("<")
    }
  }

const num = (v: bigint | number): bigint => BigInt(v)

/** Txn guards (clientv3's `Compare`): `Compare.value("k").equals("v")`, `Compare.modRevision("k").less(5n)`. */
export const Compare = {
  /** the key's version: how many times it was written since its creation */
  version: comparer<bigint | number>("version", num),
  /** the revision of the key's creation */
  createRevision: comparer<bigint | number>("createRevision", num),
  /** the revision of the key's last write */
  modRevision: comparer<bigint | number>("modRevision", num),
  /** the key's value */
  value: comparer<string | Uint8Array>("value", toBytes),
  /** the id of the lease the key is attached to (0 for none) */
  lease: comparer<bigint | number>("lease", num)
} as const

// ---- op constructors ----

/** Op constructors (clientv3's `OpGet`, `OpPut`, `OpDelete`, `OpTxn`): the operations of a txn's branches. */
export const Op = {
  /** reads `key`, or a range of keys */
  get: (key: string | Uint8Array, options: GetOptions = {}): GetOp => ({ _tag: "Get", key, options }),
  /** sets `key` to `value` */
  put: (key: string | Uint8Array, value: string | Uint8Array, options: PutOptions = {}): PutOp => ({
    _tag: "Put",
    key,
    value,
    options
  }),
  /** deletes `key`, or a range of keys */
  delete: (key: string | Uint8Array, options: DeleteOptions = {}): DeleteOp => ({ _tag: "Delete", key, options }),
  /** a nested transaction: `success` when every `compare` holds, else `failure` */
  txn: (compare: ReadonlyArray<Comparison>, success: ReadonlyArray<Op>, failure: ReadonlyArray<Op>): TxnOp => ({
    _tag: "Txn",
    compare,
    success,
    failure
  })
} as const

// ---- to the wire ----

/**
 * Absent, not empty: protobufjs writes a present-but-empty bytes field, and etcd (gogo-protobuf)
 * then sees a non-nil empty range_end, which it takes as "every key from `key` on" — a get or
 * delete of one key would range over the rest of the keyspace. Go clients never send it.
 */
const rangeEndField = (end: Uint8Array): Uint8Array | undefined => (end.length > 0 ? end : undefined)

export const rangeRequest = (key: string | Uint8Array, o: GetOptions): M.RangeRequestInit => {
  const r = keyRange(key, o)
  return {
    key: r.key,
    range_end: rangeEndField(r.rangeEnd),
    limit: i64(o.limit),
    revision: i64(o.revision),
    sort_order: o.sort === undefined ? SortOrder.NONE : SortOrder[o.sort.order],
    sort_target: o.sort === undefined ? SortTarget.KEY : SortTarget[o.sort.target],
    serializable: o.serializable === true,
    keys_only: o.keysOnly === true,
    count_only: o.countOnly === true,
    min_mod_revision: i64(o.minModRevision),
    max_mod_revision: i64(o.maxModRevision),
    min_create_revision: i64(o.minCreateRevision),
    max_create_revision: i64(o.maxCreateRevision)
  }
}

export const putRequest = (key: string | Uint8Array, value: string | Uint8Array, o: PutOptions): M.PutRequestInit => ({
  key: toBytes(key),
  value: toBytes(value),
  lease: i64(o.lease),
  prev_kv: o.prevKv === true,
  ignore_value: o.ignoreValue === true,
  ignore_lease: o.ignoreLease === true
})

export const deleteRequest = (key: string | Uint8Array, o: DeleteOptions): M.DeleteRangeRequestInit => {
  const r = keyRange(key, o)
  return { key: r.key, range_end: rangeEndField(r.rangeEnd), prev_kv: o.prevKv === true }
}

const compareResult = { "=": 0, ">": 1, "<": 2, "!=": 3 } as const
const compareTarget = { version: 0, createRevision: 1, modRevision: 2, value: 3, lease: 4 } as const
const compareField = {
  version: "version",
  createRevision: "create_revision",
  modRevision: "mod_revision",
  value: "value",
  lease: "lease"
} as const

const compareRequest = (c: Comparison): M.CompareInit => ({
  result: compareResult[c.result],
  target: compareTarget[c.target],
  key: c.key,
  range_end: rangeEndField(c.rangeEnd),
  [compareField[c.target]]: typeof c.operand === "bigint" ? c.operand.toString() : c.operand
})

export const txnRequest = (
  compare: ReadonlyArray<Comparison>,
  success: ReadonlyArray<Op>,
  failure: ReadonlyArray<Op>
): M.TxnRequestInit => ({
  compare: compare.map(compareRequest),
  success: success.map(requestOp),
  failure: failure.map(requestOp)
})

const requestOp = (op: Op): M.RequestOpInit => {
  switch (op._tag) {
    case "Get":
      return { request_range: rangeRequest(op.key, op.options) }
    case "Put":
      return { request_put: putRequest(op.key, op.value, op.options) }
    case "Delete":
      return { request_delete_range: deleteRequest(op.key, op.options) }
    case "Txn":
      return { request_txn: txnRequest(op.compare, op.success, op.failure) }
  }
}

// ---- from the wire ----

export const rangeResult = (r: M.RangeResponse): RangeResult => ({
  header: fromWireHeader(r.header),
  kvs: r.kvs.map(fromWireKv),
  more: r.more,
  count: big(r.count)
})

export const putResult = (r: M.PutResponse): PutResult => ({
  header: fromWireHeader(r.header),
  prevKv: r.prev_kv === null ? undefined : fromWireKv(r.prev_kv)
})

export const deleteResult = (r: M.DeleteRangeResponse): DeleteResult => ({
  header: fromWireHeader(r.header),
  deleted: big(r.deleted),
  prevKvs: r.prev_kvs.map(fromWireKv)
})

export const txnResult = <S extends ReadonlyArray<Op>, F extends ReadonlyArray<Op>>(
  r: M.TxnResponse
): TxnResult<S, F> => {
  const responses = r.responses.map(responseOp)
  return { header: fromWireHeader(r.header), succeeded: r.succeeded, responses } as unknown as TxnResult<S, F>
}

const responseOp = (r: M.ResponseOp): RangeResult | PutResult | DeleteResult | TxnResult<[], []> => {
  switch (r.response) {
    case "response_range":
      return rangeResult(r.response_range)
    case "response_put":
      return putResult(r.response_put)
    case "response_delete_range":
      return deleteResult(r.response_delete_range)
    case "response_txn":
      return txnResult(r.response_txn)
    default:
      throw new Error("etcd-effect: txn response op with no response set")
  }
}
