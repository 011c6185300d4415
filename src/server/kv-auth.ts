/**
 * The permission checks of etcd 3.4's authApplierV3 for KV requests, run after the request checks
 * of v3rpc (empty keys, txn limits, …) and before the store, as etcd runs them at apply:
 *
 * - Range: READ on [key, range_end).
 * - Put: WRITE on the key; with a lease, WRITE on every key already attached to it (a user who
 *   could not revoke the lease may not attach to it); with prev_kv, READ on the key.
 * - DeleteRange: WRITE on the range; with prev_kv, READ on it.
 * - Txn: READ on each compare's range, then every op of success and of failure (nested txns
 *   too): range READ, put WRITE (no lease check, as etcd), delete READ first when prev_kv, WRITE.
 */
import { Effect } from "effect"
import type { AuthStoreShape } from "../auth/auth-store.js"
import type { AuthError } from "../auth/errors.js"
import type { AuthInfo } from "../auth/token-provider.js"
import type { EtcdError } from "../errors.js"
import type { LessorShape } from "../lease/lessor.js"
import type * as mvcc from "../mvcc/kv.js"

export const checkRange = (store: AuthStoreShape, ai: AuthInfo | undefined, r: mvcc.RangeRequest) =>
  store.isRangePermitted(ai, r.key, r.rangeEnd)

export const checkDeleteRange = (store: AuthStoreShape, ai: AuthInfo | undefined, r: mvcc.DeleteRangeRequest) =>
  store.isDeleteRangePermitted(ai, r.key, r.rangeEnd) ??
  (r.prevKv === true ? store.isRangePermitted(ai, r.key, r.rangeEnd) : undefined)

const checkOps = (
  store: AuthStoreShape,
  ai: AuthInfo | undefined,
  ops: ReadonlyArray<mvcc.RequestOp>
): AuthError | undefined => {
  for (const op of ops) {
    let e: AuthError | undefined
    switch (op._tag) {
      case "Range":
        e = store.isRangePermitted(ai, op.request.key, op.request.rangeEnd)
        break
      case "Put":
        e = store.isPutPermitted(ai, op.request.key)
        break
      case "DeleteRange":
        e =
          (op.request.prevKv === true ? store.isRangePermitted(ai, op.request.key, op.request.rangeEnd) : undefined) ??
          store.isDeleteRangePermitted(ai, op.request.key, op.request.rangeEnd)
        break
      case "Txn":
        e = checkTxn(store, ai, op.request)
        break
    }
    if (e !== undefined) return e
  }
  return undefined
}

/** etcd's checkTxnAuth. */
export const checkTxn = (
  store: AuthStoreShape,
  ai: AuthInfo | undefined,
  r: mvcc.TxnRequest
): AuthError | undefined => {
  for (const c of r.compare) {
    const e = store.isRangePermitted(ai, c.key, c.rangeEnd)
    if (e !== undefined) return e
  }
  return checkOps(store, ai, r.success) ?? checkOps(store, ai, r.failure)
}

/** etcd's checkLeasePuts: WRITE on every key attached to lease `id` (none when it does not exist). */
export const checkLeasePuts = (
  store: AuthStoreShape,
  lessor: LessorShape,
  ai: AuthInfo | undefined,
  id: bigint
): Effect.Effect<void, EtcdError> =>
  id === 0n || !store.enabled
    ? Effect.void
    : Effect.flatMap(lessor.timeToLive({ id, keys: true }), (r) => {
        for (const key of r.keys) {
          const e = store.isPutPermitted(ai, key)
          if (e !== undefined) return Effect.fail(e.grpc())
        }
        return Effect.void
      })

export const checkPut = (
  store: AuthStoreShape,
  lessor: LessorShape,
  ai: AuthInfo | undefined,
  r: mvcc.PutRequest
): Effect.Effect<void, EtcdError> => {
  const e = store.isPutPermitted(ai, r.key)
  if (e !== undefined) return Effect.fail(e.grpc())
  return Effect.zipRight(
    checkLeasePuts(store, lessor, ai, r.lease ?? 0n),
    Effect.suspend(() => {
      const p = r.prevKv === true ? store.isRangePermitted(ai, r.key, undefined) : undefined
      return p === undefined ? Effect.void : Effect.fail(p.grpc())
    })
  )
}
