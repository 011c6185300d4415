/**
 * An object as the etcd2 store works on it (twin of the etcd3 store's obj-state.ts): the decoded
 * object with its v2 `modifiedIndex`, its stored JSON text and its TTL, read from v2 (a quorum
 * get) or taken from a cached object; and the JSON text ↔ object steps (v2 values are strings).
 */
import { Effect, Either } from "effect"
import { decodeObject, encodeObject } from "../api/codec.js"
import type { KubeObject } from "../api/object-meta.js"
import { newInternalError, newNotFound, type StatusError } from "../api/status.js"
import { nameOf } from "../storage/etcd3/errors.js"
import type { ResponseMeta } from "../storage/interfaces.js"
import { parseResourceVersion } from "../storage/versioner.js"
import type { Node } from "./node.js"
import { fromKeys, type V2StoreDeps } from "./v2-store-deps.js"

export interface State {
  readonly obj: KubeObject
  /** modifiedIndex, 0 when the key does not exist */
  readonly index: number
  readonly value: string
  readonly meta: ResponseMeta
}

const decoder = new TextDecoder()

/** An object's stored text: its JSON. */
export const textOf = (obj: KubeObject): string => decoder.decode(encodeObject(obj))

/** A stored value as an object at v2 index `index`. */
export const decode = (value: string, index: number): Either.Either<KubeObject, StatusError> =>
  Either.mapLeft(decodeObject(new TextEncoder().encode(value), BigInt(index)), newInternalError)

const stateOf = (node: Node): Effect.Effect<State, StatusError> =>
  Effect.map(decode(node.value ?? "", node.modifiedIndex), (obj) => ({
    obj,
    index: node.modifiedIndex,
    value: node.value ?? "",
    meta: { ttl: node.ttl ?? 0, resourceVersion: BigInt(node.modifiedIndex) }
  }))

const absent: State = { obj: { metadata: {} }, index: 0, value: "", meta: { ttl: 0, resourceVersion: 0n } }

/** The key's current state (a quorum get); a missing key is `absent` with ignoreNotFound, else NotFound. */
export const getState = (s: V2StoreDeps, key: string, ignoreNotFound: boolean): Effect.Effect<State, StatusError> =>
  Effect.flatMap(Effect.either(s.keys.get(key, { quorum: true })), (r) => {
    if (Either.isRight(r)) return stateOf(r.right.node)
    if (r.left._tag !== "KeyNotFound") return Effect.fail(fromKeys(r.left))
    return ignoreNotFound ? Effect.succeed(absent) : Effect.fail(newNotFound(s.gr, nameOf(key)))
  })

/** The state of a cached object, its index from its resourceVersion. */
export const stateFromObject = (obj: KubeObject): Effect.Effect<State, StatusError> =>
  Effect.suspend(() => {
    const rv = parseResourceVersion(obj.metadata.resourceVersion)
    if (Either.isLeft(rv)) return Effect.fail(newInternalError(`couldn't get resource version: ${rv.left}`))
    const index = Number(rv.right)
    return Effect.succeed({ obj, index, value: textOf(obj), meta: { ttl: 0, resourceVersion: rv.right } })
  })
