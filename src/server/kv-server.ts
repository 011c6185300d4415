/**
 * The KV service (etcd's v3rpc/key.go): Range, Put, DeleteRange, Txn and Compact over the
 * MvccStore. The store makes etcd's request checks and answers with etcd's errors; this file only
 * converts messages, stamps headers and — when auth is on or a token came — runs the request
 * checks first, then the token's validation, then the permission checks (kv-auth.ts), in etcd's
 * order (its gRPC layer checks the request before the server reads the token). Compact checks no permission (etcd
 * 3.4 does not), but a bad token still fails it.
 *
 * Without auth, Range answers a plain Exit, and Put, DeleteRange and Txn whose quota check passes
 * at once go through the store's write fast path (`putNow`…: an Exit or a PendingWrite the runner
 * answers from the durability callback, grpc-bridge.ts); auth, a quota refusal and the NOSPACE
 * alarm's activation keep the Effect path. Under the CORRUPT alarm (`corrupt`, corrupt-check.ts)
 * Put, DeleteRange, a writing Txn and Compact fail with "etcdserver: corrupt cluster"; a Range or a
 * read-only Txn that meets a corrupt record fails so too and raises the alarm.
 */
import { Effect, Exit } from "effect"
import type { EtcdError } from "../errors.js"
import type { LessorShape } from "../lease/lessor.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import { isTxnReadonly } from "../mvcc/apply.js"
import { DEFAULT_MAX_TXN_OPS } from "../mvcc/limits.js"
import { mapResult } from "../mvcc/pending-write.js"
import {
  checkDeleteRequest,
  checkPutRequest,
  checkRangeRequest,
  checkTxn as checkTxnRequest
} from "../mvcc/request-checks.js"
import type { KVServer } from "../proto/services.js"
import { type AuthGuard, authInfoGrpc, check, needsAuth } from "./auth-guard.js"
import type { CorruptGuard } from "./corrupt-check.js"
import type { CallRunner } from "./grpc-bridge.js"
import type { MakeHeader } from "./header.js"
import { costPut, costTxn, type Quota } from "./quota.js"
import { checkDeleteRange, checkPut, checkRange, checkTxn } from "./kv-auth.js"
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

const invalid = (e: EtcdError | undefined): Effect.Effect<void, EtcdError> =>
  e === undefined ? Effect.void : Effect.fail(e)

/** `quota`: the space quota Put and Txn are checked against first (quota.ts), as etcd's quotaKVServer. */
export const makeKvService = (
  runner: CallRunner,
  store: MvccStoreShape,
  header: MakeHeader,
  guard: AuthGuard,
  lessor: LessorShape,
  quota?: Quota,
  maxTxnOps = DEFAULT_MAX_TXN_OPS,
  corrupt?: CorruptGuard
): KVServer => {
  const refused = (): boolean => corrupt !== undefined && corrupt.up()
  const auth = guard.store
  const quotaFirst = <A>(cost: number, eff: Effect.Effect<A, EtcdError>): Effect.Effect<A, EtcdError> =>
    quota === undefined ? eff : Effect.zipRight(quota.check(cost), eff)
  /** the write fast path applies: no auth, and the quota (if any) passes with nothing to run */
  const fast = (call: Parameters<typeof needsAuth>[1], cost: number | undefined): boolean =>
    !needsAuth(guard, call) && (quota === undefined || cost === undefined || quota.passes(cost))
  return {
    Range: runner.unary("Range", (req, call) => {
      const r = rangeRequest(req)
      // the fast path's plain Exit: no Effect to run (grpc-bridge.ts)
      if (!needsAuth(guard, call)) {
        const exit = Exit.map(store.rangeNow(r), (res) => rangeResponse(header, res))
        return corrupt === undefined || Exit.isSuccess(exit) ? exit : corrupt.watch(exit)
      }
      const run = Effect.map(
        Effect.suspend(() =>
          corrupt === undefined ? store.range(r) : Effect.flatMap(Effect.exit(store.range(r)), corrupt.watch)
        ),
        (res) => rangeResponse(header, res)
      )
      return Effect.zipRight(invalid(checkRangeRequest(r)), authInfoGrpc(guard, call)).pipe(
        Effect.flatMap((ai) => check(checkRange(auth, ai, r))),
        Effect.zipRight(run)
      )
    }),
    Put: runner.unary("Put", (req, call) => {
      const r = putRequest(req)
      if (refused()) return corrupt!.refuse()
      // the write fast path: staged now, answered from the store's durability callback (no fiber)
      if (fast(call, costPut(req))) return mapResult(store.putNow(r), (res) => putResponse(header, res))
      const run = Effect.map(
        Effect.suspend(() => store.put(r)),
        (res) => putResponse(header, res)
      )
      if (!needsAuth(guard, call)) return quotaFirst(costPut(req), run)
      return quotaFirst(
        costPut(req),
        Effect.zipRight(invalid(checkPutRequest(r)), authInfoGrpc(guard, call)).pipe(
          Effect.flatMap((ai) => checkPut(auth, lessor, ai, r)),
          Effect.zipRight(run)
        )
      )
    }),
    DeleteRange: runner.unary("DeleteRange", (req, call) => {
      const r = deleteRangeRequest(req)
      if (refused()) return corrupt!.refuse()
      if (fast(call, undefined)) return mapResult(store.deleteRangeNow(r), (res) => deleteRangeResponse(header, res))
      const run = Effect.map(
        Effect.suspend(() => store.deleteRange(r)),
        (res) => deleteRangeResponse(header, res)
      )
      if (!needsAuth(guard, call)) return run
      return Effect.zipRight(invalid(checkDeleteRequest(r)), authInfoGrpc(guard, call)).pipe(
        Effect.flatMap((ai) => check(checkDeleteRange(auth, ai, r))),
        Effect.zipRight(run)
      )
    }),
    Txn: runner.unary("Txn", (req, call) => {
      const r = txnRequest(req)
      if (corrupt !== undefined && corrupt.up() && !isTxnReadonly(r)) return corrupt.refuse()
      if (fast(call, costTxn(req))) {
        const res = mapResult(store.txnNow(r), (res) => txnResponse(header, res))
        return corrupt === undefined || !Exit.isExit(res) || Exit.isSuccess(res) ? res : corrupt.watch(res)
      }
      const run = Effect.map(
        Effect.suspend(() =>
          corrupt === undefined ? store.txn(r) : Effect.flatMap(Effect.exit(store.txn(r)), corrupt.watch)
        ),
        (res) => txnResponse(header, res)
      )
      if (!needsAuth(guard, call)) return quotaFirst(costTxn(req), run)
      return quotaFirst(
        costTxn(req),
        Effect.zipRight(invalid(checkTxnRequest(r, maxTxnOps)), authInfoGrpc(guard, call)).pipe(
          Effect.flatMap((ai) => check(checkTxn(auth, ai, r))),
          Effect.zipRight(run)
        )
      )
    }),
    // physical: the store waits until the superseded revisions are gone from the backend
    Compact: runner.unary("Compact", (req, call) => {
      if (refused()) return corrupt!.refuse()
      const run = Effect.map(
        Effect.suspend(() => store.compact(toNumber(req.revision), req.physical)),
        (r) => ({ header: header(r.header.revision) })
      )
      return needsAuth(guard, call) ? Effect.zipRight(authInfoGrpc(guard, call), run) : run
    })
  }
}
