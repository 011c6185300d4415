/**
 * The KV service (etcd's v3rpc/key.go): Range, Put, DeleteRange, Txn and Compact over the
 * MvccStore. The store makes etcd's request checks and answers with etcd's errors; this file only
 * converts messages and stamps headers.
 */
import { Effect } from "effect"
import type { MvccStoreShape } from "../mvcc/kv.js"
import type { KVServer } from "../proto/services.js"
import type { CallRunner } from "./grpc-bridge.js"
import type { MakeHeader } from "./header.js"
import { costPut, costTxn, type Quota } from "./quota.js"
import {
  deleteRangeRequest,
  deleteRangeResponse,
  putRequest,
  putResponse,
  rangeRequest,
  rangeResponse,
  toNumber,
  txnRequest,
  txnResponse
} from "./kv-pb.js"

/** `quota`: the space quota Put and Txn are checked against (quota.ts). */
export const makeKvService = (runner: CallRunner, store: MvccStoreShape, header: MakeHeader, quota?: Quota): KVServer => ({
  Range: runner.unary("Range", (req) =>
    Effect.map(
      Effect.suspend(() => store.range(rangeRequest(req))),
      (r) => rangeResponse(header, r)
    )),
  Put: runner.unary("Put", (req) =>
    Effect.map(
      Effect.suspend(() => {
        const put = store.put(putRequest(req))
        return quota === undefined ? put : Effect.zipRight(quota.check(costPut(req)), put)
      }),
      (r) => putResponse(header, r)
    )),
  DeleteRange: runner.unary("DeleteRange", (req) =>
    Effect.map(
      Effect.suspend(() => store.deleteRange(deleteRangeRequest(req))),
      (r) => deleteRangeResponse(header, r)
    )),
  Txn: runner.unary("Txn", (req) =>
    Effect.map(
      Effect.suspend(() => {
        const txn = store.txn(txnRequest(req))
        return quota === undefined ? txn : Effect.zipRight(quota.check(costTxn(req)), txn)
      }),
      (r) => txnResponse(header, r)
    )),
  // physical: the store waits until the superseded revisions are gone from the backend
  Compact: runner.unary("Compact", (req) =>
    Effect.map(
      Effect.suspend(() => store.compact(toNumber(req.revision), req.physical)),
      (r) => ({ header: header(r.header.revision) })
    ))
})
