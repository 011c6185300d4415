/**
 * Delete over v2 (etcd_helper.go's Delete, twin of the etcd3 store's delete.ts): compareAndDelete
 * on the index the checks ran against, retried with the current state when someone changed or
 * removed the key; a check that fails on a cached object is re-run once on the current one before
 * it is believed.
 */
import { Effect, Either } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import { newNotFound, type StatusError } from "../api/status.js"
import { nameOf } from "../storage/etcd3/errors.js"
import type { StorageShape } from "../storage/interfaces.js"
import { checkPreconditions } from "../storage/preconditions.js"
import { decode, getState, stateFromObject } from "./v2-obj-state.js"
import { fromKeys, prepare, type V2StoreDeps } from "./v2-store-deps.js"

/** storage.Interface.Delete */
export const deleteObject = (
  s: V2StoreDeps,
  key: string,
  options: NonNullable<Parameters<StorageShape["delete"]>[1]>
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const { gr, keys } = s
    const prepared = yield* prepare(s, key, false)
    let orig =
      options.cachedExistingObject !== undefined
        ? yield* stateFromObject(options.cachedExistingObject)
        : yield* getState(s, prepared, false)
    let origIsCurrent = options.cachedExistingObject === undefined
    for (;;) {
      const preErr = checkPreconditions(gr, prepared, options.preconditions, orig.obj)
      const validateErr =
        preErr !== undefined || options.validateDeletion === undefined
          ? preErr
          : yield* Effect.flip(options.validateDeletion(orig.obj)).pipe(Effect.orElseSucceed(() => undefined))
      if (validateErr !== undefined) {
        if (origIsCurrent) return yield* Effect.fail(validateErr)
        const cachedIndex = orig.index
        orig = yield* getState(s, prepared, false)
        origIsCurrent = true
        if (cachedIndex === orig.index) return yield* Effect.fail(validateErr)
        continue
      }
      const r = yield* Effect.either(keys.compareAndDelete(prepared, { prevIndex: orig.index }))
      if (Either.isLeft(r)) {
        // someone changed it (101) or it is gone (100): look again
        if (r.left._tag === "CompareFailed" || (r.left._tag === "KeyNotFound" && !origIsCurrent)) {
          orig = yield* getState(s, prepared, false)
          origIsCurrent = true
          continue
        }
        if (r.left._tag === "KeyNotFound") return yield* Effect.fail(newNotFound(gr, nameOf(prepared)))
        return yield* Effect.fail(fromKeys(r.left))
      }
      return yield* decode(r.right.prevNode?.value ?? orig.value, r.right.node.modifiedIndex)
    }
  })
