/**
 * GuaranteedUpdate over v2 (etcd_helper.go's GuaranteedUpdate, twin of the etcd3 store's
 * guaranteed-update.ts): read, run tryUpdate, then compareAndSwap on the index read (or create,
 * for a missing object with ignoreNotFound), retried on the current state while the key changes
 * under it. An unchanged value writes nothing; a cached object is checked against the current one
 * before a failure or a no-op is believed.
 */
import { Effect, Either } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import type { StatusError } from "../api/status.js"
import type { StorageShape } from "../storage/interfaces.js"
import { checkPreconditions } from "../storage/preconditions.js"
import { decode, getState, stateFromObject, textOf } from "./v2-obj-state.js"
import { fromKeys, prepare, type V2StoreDeps } from "./v2-store-deps.js"

/** storage.Interface.GuaranteedUpdate */
export const guaranteedUpdate = (
  s: V2StoreDeps,
  key: string,
  options: Parameters<StorageShape["guaranteedUpdate"]>[1]
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const { keys } = s
    const prepared = yield* prepare(s, key, false)
    const ignoreNotFound = options.ignoreNotFound === true
    let orig =
      options.cachedExistingObject !== undefined
        ? yield* stateFromObject(options.cachedExistingObject)
        : yield* getState(s, prepared, ignoreNotFound)
    let origIsCurrent = options.cachedExistingObject === undefined
    for (;;) {
      const preErr = checkPreconditions(s.gr, prepared, options.preconditions, orig.obj)
      if (preErr !== undefined) {
        if (origIsCurrent) return yield* Effect.fail(preErr)
        orig = yield* getState(s, prepared, ignoreNotFound)
        origIsCurrent = true
        continue
      }
      const updated = yield* Effect.either(options.tryUpdate(orig.obj, orig.meta))
      if (Either.isLeft(updated)) {
        if (origIsCurrent) return yield* Effect.fail(updated.left)
        const cachedIndex = orig.index
        orig = yield* getState(s, prepared, ignoreNotFound)
        origIsCurrent = true
        if (cachedIndex === orig.index) return yield* Effect.fail(updated.left)
        continue
      }
      const value = textOf(updated.right.object)
      if (orig.index !== 0 && value === orig.value) {
        if (!origIsCurrent) {
          orig = yield* getState(s, prepared, ignoreNotFound)
          origIsCurrent = true
          if (value !== orig.value) continue
        }
        return yield* decode(orig.value, orig.index)
      }
      const ttl = updated.right.ttl
      // a missing object (ignoreNotFound) is created; an existing one swapped on its index
      const write =
        orig.index === 0
          ? keys.create(prepared, value, { ttl })
          : keys.compareAndSwap(prepared, value, { prevIndex: orig.index, ttl })
      const r = yield* Effect.either(write)
      if (Either.isLeft(r)) {
        const e = r.left
        if (e._tag === "CompareFailed" || e._tag === "NodeExist" || e._tag === "KeyNotFound") {
          orig = yield* getState(s, prepared, ignoreNotFound)
          origIsCurrent = true
          continue
        }
        return yield* Effect.fail(fromKeys(e))
      }
      return yield* decode(value, r.right.node.modifiedIndex)
    }
  })
