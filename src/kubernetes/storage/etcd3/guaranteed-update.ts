/**
 * GuaranteedUpdate (etcd3/store.go): read, apply the caller's update, write with a txn guarded by
 * the mod revision read; a failed txn retries with the object it read back. Working from a cached
 * object, a failed precondition or update is re-run once on etcd's current object before it is
 * believed, and an update that changes nothing writes nothing.
 */
import { Effect, Either } from "effect"
import { Compare, Op } from "../../../client/op.js"
import { encodeObject } from "../../api/codec.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { StatusError } from "../../api/status.js"
import type { StorageShape, UpdateFunc } from "../interfaces.js"
import { checkPreconditions } from "../preconditions.js"
import { decode } from "./decoder.js"
import { getCurrentState, getState, getStateFromObject } from "./obj-state.js"
import { etcdCall, leaseFor, prepare, type StoreDeps } from "./store-deps.js"

const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** storage.Interface.GuaranteedUpdate */
export const guaranteedUpdate = (
  s: StoreDeps,
  key: string,
  options: Parameters<StorageShape["guaranteedUpdate"]>[1]
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const { client, groupResource: gr, transformer } = s
    const prepared = yield* prepare(s, key, false)
    const ignoreNotFound = options.ignoreNotFound === true
    const tryUpdate: UpdateFunc = options.tryUpdate
    let orig =
      options.cachedExistingObject !== undefined
        ? yield* getStateFromObject(options.cachedExistingObject)
        : yield* getCurrentState(s, prepared, ignoreNotFound)
    let origIsCurrent = options.cachedExistingObject === undefined
    for (;;) {
      const preErr = checkPreconditions(gr, prepared, options.preconditions, orig.obj)
      if (preErr !== undefined) {
        if (origIsCurrent) return yield* Effect.fail(preErr)
        orig = yield* getCurrentState(s, prepared, ignoreNotFound)
        origIsCurrent = true
        continue
      }
      const updated = yield* Effect.either(tryUpdate(orig.obj, orig.meta))
      if (Either.isLeft(updated)) {
        if (origIsCurrent) return yield* Effect.fail(updated.left)
        const cachedRev = orig.rev
        orig = yield* getCurrentState(s, prepared, ignoreNotFound)
        origIsCurrent = true
        if (cachedRev === orig.rev) return yield* Effect.fail(updated.left)
        continue
      }
      const data = encodeObject(updated.right.object)
      if (!orig.stale && bytesEqual(data, orig.data)) {
        // nothing changed: no write, unless our copy was cached and etcd's differs
        if (!origIsCurrent) {
          orig = yield* getCurrentState(s, prepared, ignoreNotFound)
          origIsCurrent = true
          if (!bytesEqual(data, orig.data)) continue
        }
        if (!orig.stale) return yield* decode(orig.data, orig.rev)
      }
      const stored = transformer.toStorage(data, prepared)
      const lease = yield* leaseFor(s, updated.right.ttl)
      const txn = yield* etcdCall(
        client.kv
          .txn()
          .when(Compare.modRevision(prepared).equals(orig.rev))
          .success(Op.put(prepared, stored, lease === undefined ? {} : { lease }))
          .failure(Op.get(prepared)).commit
      )
      if (!txn.succeeded) {
        orig = yield* getState(s, txn.responses[0].kvs, prepared, ignoreNotFound)
        origIsCurrent = true
        continue
      }
      return yield* decode(data, txn.header.revision)
    }
  })
