/**
 * objState (etcd3/store.go): an object as the store last read it — decoded, with the revision a
 * guarded txn compares against and the plain bytes an update compares with — from etcd (getState,
 * getCurrentState) or from a cached object the caller passed (getStateFromObject).
 */
import { Effect, Either } from "effect"
import { encodeObject } from "../../api/codec.js"
import type { KubeObject } from "../../api/object-meta.js"
import { newInternalError, newNotFound, type StatusError } from "../../api/status.js"
import type { ResponseMeta } from "../interfaces.js"
import { parseResourceVersion } from "../versioner.js"
import { decode, fromStorage } from "./decoder.js"
import { nameOf } from "./errors.js"
import { etcdCall, type StoreDeps } from "./store-deps.js"

export interface ObjState {
  readonly obj: KubeObject
  readonly meta: ResponseMeta
  readonly rev: bigint
  readonly data: Uint8Array
  readonly stale: boolean
}

/** getState: the object of a read's first key value; a missing one is NotFound or, if ignored, empty. */
export const getState = (
  s: StoreDeps,
  kvs: ReadonlyArray<{ readonly value: Uint8Array; readonly modRevision: bigint; readonly lease: bigint }>,
  key: string,
  ignoreNotFound: boolean
): Effect.Effect<ObjState, StatusError> =>
  Effect.suspend(() => {
    const kv = kvs[0]
    if (kv === undefined) {
      if (!ignoreNotFound) return Effect.fail(newNotFound(s.groupResource, nameOf(key)))
      return Effect.succeed<ObjState>({
        obj: { metadata: {} },
        meta: { ttl: 0, resourceVersion: 0n },
        rev: 0n,
        data: new Uint8Array(0),
        stale: false
      })
    }
    const plain = fromStorage(s.transformer, kv.value, key)
    if (Either.isLeft(plain)) return Effect.fail(plain.left)
    const obj = decode(plain.right.data, kv.modRevision)
    if (Either.isLeft(obj)) return Effect.fail(obj.left)
    return Effect.succeed<ObjState>({
      obj: obj.right,
      meta: { ttl: 0, resourceVersion: kv.modRevision },
      rev: kv.modRevision,
      data: plain.right.data,
      stale: plain.right.stale
    })
  })

/** getCurrentState: the object as etcd holds it now. */
export const getCurrentState = (s: StoreDeps, key: string, ignoreNotFound: boolean) =>
  Effect.flatMap(etcdCall(s.client.kv.get(key)), (r) => getState(s, r.kvs, key, ignoreNotFound))

/** getStateFromObject: the cached object as if read (its RV is its revision) */
export const getStateFromObject = (obj: KubeObject): Effect.Effect<ObjState, StatusError> =>
  Effect.suspend(() => {
    const rv = parseResourceVersion(obj.metadata.resourceVersion)
    if (Either.isLeft(rv)) return Effect.fail(newInternalError(`couldn't get resource version: ${rv.left}`))
    return Effect.succeed({
      obj,
      meta: { ttl: 0, resourceVersion: rv.right },
      rev: rv.right,
      data: encodeObject(obj),
      stale: false
    })
  })
