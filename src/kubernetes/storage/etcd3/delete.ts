/**
 * Delete and conditionalDelete (etcd3/store.go): a txn guarded by the mod revision the checks ran
 * against, retried with the object the failed txn read back; a check that fails on a cached
 * object is re-run once on etcd's current one before it is believed.
 */
import { Effect } from "effect"
import { Compare, Op } from "../../../client/op.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { StatusError } from "../../api/status.js"
import type { Preconditions, StorageShape, ValidateDeletion } from "../interfaces.js"
import { checkPreconditions } from "../preconditions.js"
import { decode } from "./decoder.js"
import { getCurrentState, getState, getStateFromObject } from "./obj-state.js"
import { etcdCall, prepare, type StoreDeps } from "./store-deps.js"

/** Retries while the object changes under it; refetches when working from a stale cached object. */
export const conditionalDelete = (
  s: StoreDeps,
  key: string,
  preconditions: Preconditions | undefined,
  validateDeletion: ValidateDeletion | undefined,
  cached: KubeObject | undefined
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    let orig = cached !== undefined ? yield* getStateFromObject(cached) : yield* getCurrentState(s, key, false)
    let origIsCurrent = cached === undefined
    for (;;) {
      const preErr = checkPreconditions(s.groupResource, key, preconditions, orig.obj)
      const validateErr =
        preErr !== undefined || validateDeletion === undefined
          ? preErr
          : yield* Effect.flip(validateDeletion(orig.obj)).pipe(Effect.orElseSucceed(() => undefined))
      if (validateErr !== undefined) {
        if (origIsCurrent) return yield* Effect.fail(validateErr)
        const cachedRev = orig.rev
        orig = yield* getCurrentState(s, key, false)
        origIsCurrent = true
        if (cachedRev === orig.rev) return yield* Effect.fail(validateErr)
        continue
      }
      const txn = yield* etcdCall(
        s.client.kv.txn().when(Compare.modRevision(key).equals(orig.rev)).success(Op.delete(key)).failure(Op.get(key))
          .commit
      )
      if (!txn.succeeded) {
        orig = yield* getState(s, txn.responses[0].kvs, key, false)
        origIsCurrent = true
        continue
      }
      return yield* decode(orig.data, txn.header.revision)
    }
  })

/** storage.Interface.Delete */
export const deleteObject = (
  s: StoreDeps,
  key: string,
  options: Parameters<StorageShape["delete"]>[1] = {}
): Effect.Effect<KubeObject, StatusError> =>
  Effect.flatMap(prepare(s, key, false), (prepared) =>
    conditionalDelete(s, prepared, options.preconditions, options.validateDeletion, options.cachedExistingObject)
  )
