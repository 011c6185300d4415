/**
 * The KV API (clientv3's `KV`): get, put, delete, txn and compact over unary gRPC calls. Failures
 * are EtcdError with etcd's gRPC code and message, verbatim.
 */
import { Effect } from "effect"
import type { EtcdError } from "../errors.js"
import type * as M from "../proto/index.js"
import { type ClientConnectionShape, unaryMethod } from "./connection.js"
import type { ResponseHeader } from "./key-value.js"
import {
  type Comparison,
  deleteRequest,
  deleteResult,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type Op,
  putRequest,
  putResult,
  type PutOptions,
  type PutResult,
  rangeRequest,
  rangeResult,
  type RangeResult,
  txnRequest,
  txnResult,
  type TxnResult
} from "./op.js"
import { fromWireHeader, i64 } from "./wire.js"

/** Options of `kv.compact`. */
export interface CompactOptions {
  /** wait until the compaction is applied to the backend */
  readonly physical?: boolean | undefined
}

/**
 * A transaction under construction: `kv.txn().when(...).success(...).failure(...).commit`.
 * (Not `if/then/else`: an object with a `then` method would be taken for a Promise.)
 */
export interface TxnBuilder<Success extends ReadonlyArray<Op>, Failure extends ReadonlyArray<Op>> {
  /** guards, all of which must hold for the success branch to run */
  readonly when: (...compare: ReadonlyArray<Comparison>) => TxnBuilder<Success, Failure>
  /** the operations run when every guard holds */
  readonly success: <const S extends ReadonlyArray<Op>>(...ops: S) => TxnBuilder<S, Failure>
  /** the operations run when a guard fails */
  readonly failure: <const F extends ReadonlyArray<Op>>(...ops: F) => TxnBuilder<Success, F>
  readonly commit: Effect.Effect<TxnResult<Success, Failure>, EtcdError>
}

/** The KV API (clientv3's `KV`): get, put, delete, txn and compact. */
export interface KV {
  /** the value of `key`, or of the keys in a range (etcd's Range) */
  readonly get: (key: string | Uint8Array, options?: GetOptions) => Effect.Effect<RangeResult, EtcdError>
  /** sets `key` to `value` (etcd's Put) */
  readonly put: (
    key: string | Uint8Array,
    value: string | Uint8Array,
    options?: PutOptions
  ) => Effect.Effect<PutResult, EtcdError>
  /** deletes `key`, or the keys in a range (etcd's DeleteRange) */
  readonly delete: (key: string | Uint8Array, options?: DeleteOptions) => Effect.Effect<DeleteResult, EtcdError>
  /** starts a transaction: `.when(...).success(...).failure(...).commit` */
  readonly txn: () => TxnBuilder<[], []>
  /** discards history before `revision` (etcd's Compact) */
  readonly compact: (
    revision: bigint | number,
    options?: CompactOptions
  ) => Effect.Effect<{ readonly header: ResponseHeader }, EtcdError>
}

const Range = unaryMethod<M.RangeRequestInit, M.RangeResponse>("KV", "Range")
const Put = unaryMethod<M.PutRequestInit, M.PutResponse>("KV", "Put")
const DeleteRange = unaryMethod<M.DeleteRangeRequestInit, M.DeleteRangeResponse>("KV", "DeleteRange")
const Txn = unaryMethod<M.TxnRequestInit, M.TxnResponse>("KV", "Txn")
const Compact = unaryMethod<M.CompactionRequestInit, M.CompactionResponse>("KV", "Compact")

export const makeKV = (connection: ClientConnectionShape): KV => {
  const builder = <S extends ReadonlyArray<Op>, F extends ReadonlyArray<Op>>(
    compare: ReadonlyArray<Comparison>,
    success: S,
    failure: F
  ): TxnBuilder<S, F> => ({
    when: (...more) => builder([...compare, ...more], success, failure),
    success: (...ops) => builder(compare, ops, failure),
    failure: (...ops) => builder(compare, success, ops),
    commit: Effect.map(
      Effect.suspend(() => connection.unary(Txn, txnRequest(compare, success, failure))),
      (r) => txnResult<S, F>(r)
    )
  })

  return {
    get: (key, options = {}) =>
      Effect.map(
        Effect.suspend(() => connection.unary(Range, rangeRequest(key, options))),
        rangeResult
      ),
    put: (key, value, options = {}) =>
      Effect.map(
        Effect.suspend(() => connection.unary(Put, putRequest(key, value, options))),
        putResult
      ),
    delete: (key, options = {}) =>
      Effect.map(
        Effect.suspend(() => connection.unary(DeleteRange, deleteRequest(key, options))),
        deleteResult
      ),
    txn: () => builder([], [] as [], [] as []),
    compact: (revision, options = {}) =>
      Effect.map(
        Effect.suspend(() =>
          connection.unary(Compact, { revision: i64(revision), physical: options.physical === true })
        ),
        (r) => ({ header: fromWireHeader(r.header) })
      )
  }
}
