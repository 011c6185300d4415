/**
 * The etcd2-era storage (pkg/storage/etcd/etcd_helper.go), just enough of storage.Interface over
 * the v2 keys API for the Cacher and the watch conformance tests: Create (prevExist=false),
 * Get, GetList (a recursive get), GuaranteedUpdate (compareAndSwap on prevIndex, retried),
 * Delete (compareAndDelete on prevIndex), Watch (the etcd2 watcher). resourceVersion is the v2
 * `modifiedIndex`; a list's is X-Etcd-Index. Values are the objects' JSON (no value transformer:
 * v2 values are strings). v2 has no paging, compaction or progress notifications: a list ignores
 * `limit` (as etcd_helper did), a continue token is refused, RequestWatchProgress fails, and
 * CompactRevision is 0.
 *
 * This file holds the reads, Create and Watch, and wires the store; the rest have their own files:
 * v2-store-deps.ts (the config and what every operation shares), v2-obj-state.ts (an object with
 * its index), v2-delete.ts, v2-guaranteed-update.ts.
 */
import { Effect, Either, Layer } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import {
  InternalError,
  newAlreadyExists,
  newBadRequest,
  newInternalError,
  newNotFound,
  newResourceExpired,
  newTooLargeResourceVersion,
  type StatusError
} from "../api/status.js"
import { LIST_TOO_OLD, nameOf } from "../storage/etcd3/errors.js"
import { validateMinimumResourceVersion } from "../storage/etcd3/store-deps.js"
import { type GetOptions, type ListOptions, Storage, type StorageShape } from "../storage/interfaces.js"
import { Everything, matches } from "../storage/selection-predicate.js"
import { parseResourceVersion, parseWatchResourceVersion } from "../storage/versioner.js"
import { etcdWatcher, exceptKey } from "./etcd-watcher.js"
import { KeysClient, type KeysClientShape } from "./keys-client.js"
import { leaves, type Node } from "./node.js"
import { deleteObject } from "./v2-delete.js"
import { guaranteedUpdate } from "./v2-guaranteed-update.js"
import { decode, textOf } from "./v2-obj-state.js"
import { type Etcd2StoreConfig, fromKeys, makeV2StoreDeps, prepare, type V2StoreDeps } from "./v2-store-deps.js"

export type { Etcd2StoreConfig } from "./v2-store-deps.js"

/** storage.Interface.Create: a v2 create (prevExist=false) */
const create = (
  s: V2StoreDeps,
  key: string,
  obj: KubeObject,
  ttl: number | undefined
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const prepared = yield* prepare(s, key, false)
    const rv = parseResourceVersion(obj.metadata.resourceVersion)
    if (Either.isRight(rv) && rv.right !== 0n) {
      return yield* Effect.fail(newInternalError("resourceVersion should not be set on objects to be created"))
    }
    const value = textOf(obj)
    const r = yield* s.keys
      .create(prepared, value, { ttl })
      .pipe(
        Effect.catchAll((e) =>
          Effect.fail(e._tag === "NodeExist" ? newAlreadyExists(s.gr, nameOf(prepared)) : fromKeys(e))
        )
      )
    return yield* decode(value, r.node.modifiedIndex)
  })

/** storage.Interface.Get: a quorum get, checked against the asked-for RV */
const get = (s: V2StoreDeps, key: string, options: GetOptions): Effect.Effect<KubeObject | undefined, StatusError> =>
  Effect.gen(function* () {
    const prepared = yield* prepare(s, key, false)
    const r = yield* Effect.either(s.keys.get(prepared, { quorum: true }))
    if (Either.isLeft(r)) {
      if (r.left._tag !== "KeyNotFound") return yield* Effect.fail(fromKeys(r.left))
      yield* validateMinimumResourceVersion(options.resourceVersion, BigInt(r.left.index))
      if (options.ignoreNotFound === true) return undefined
      return yield* Effect.fail(newNotFound(s.gr, nameOf(prepared)))
    }
    yield* validateMinimumResourceVersion(options.resourceVersion, BigInt(r.right.etcdIndex))
    if (r.right.node.dir === true) return yield* Effect.fail(newNotFound(s.gr, nameOf(prepared)))
    return yield* decode(r.right.node.value ?? "", r.right.node.modifiedIndex)
  })

/** storage.Interface.GetList: a recursive, sorted quorum get of the present (no paging, no older RV) */
const getList = (s: V2StoreDeps, key: string, options: ListOptions): Effect.Effect<KubeList, StatusError> =>
  Effect.gen(function* () {
    const recursive = options.recursive === true
    const prepared = yield* prepare(s, key, recursive)
    const pred = options.predicate ?? Everything
    if (pred.continue !== "") {
      return yield* Effect.fail(
        newBadRequest("continue is not supported by the etcd2 storage (etcd v2 cannot page a list)")
      )
    }
    const r = yield* Effect.either(s.keys.get(prepared, { recursive, quorum: true, sorted: true }))
    let index: number
    const nodes: Array<Node> = []
    if (Either.isLeft(r)) {
      if (r.left._tag !== "KeyNotFound") return yield* Effect.fail(fromKeys(r.left))
      index = r.left.index
    } else {
      index = r.right.etcdIndex
      leaves(r.right.node, nodes)
    }
    if (options.resourceVersion !== undefined && options.resourceVersion !== "") {
      const parsed = parseResourceVersion(options.resourceVersion)
      if (Either.isLeft(parsed)) return yield* Effect.fail(newBadRequest(`invalid resource version: ${parsed.left}`))
      if (parsed.right > BigInt(index))
        return yield* Effect.fail(newTooLargeResourceVersion(parsed.right, BigInt(index), 0))
      // v2 reads only the present: an exact older index is gone
      if (options.resourceVersionMatch === "Exact" && parsed.right !== 0n && parsed.right < BigInt(index)) {
        return yield* Effect.fail(newResourceExpired(LIST_TOO_OLD))
      }
    }
    const items: Array<KubeObject> = []
    for (const n of nodes) {
      const obj = decode(n.value ?? "", n.modifiedIndex)
      if (Either.isLeft(obj)) return yield* Effect.fail(obj.left)
      if (matches(pred, obj.right)) items.push(obj.right)
    }
    const list: KubeList = { metadata: { resourceVersion: String(index) }, items }
    return list
  })

/** storage.Interface.Watch: the etcd2 watcher on the key (a directory without its trailing slash) */
const watch = (s: V2StoreDeps, key: string, options: ListOptions) =>
  Effect.gen(function* () {
    const recursive = options.recursive === true
    const prepared = yield* prepare(s, key, recursive)
    const rv = parseWatchResourceVersion(options.resourceVersion, s.gr)
    if (Either.isLeft(rv)) return yield* Effect.fail(rv.left)
    // v2 keys name directories without the trailing slash
    const v2Key = recursive ? prepared.replace(/\/+$/, "") : prepared
    return etcdWatcher(
      {
        keys: s.keys,
        typeMeta: s.config.typeMeta,
        marks: s.config.watcherMarks?.(),
        include: recursive ? exceptKey(v2Key) : undefined
      },
      v2Key,
      Number(rv.right),
      options
    )
  })

/** storage.Interface.Stats: the leaves under the key */
const stats = (s: V2StoreDeps, key: string): Effect.Effect<{ objectCount: number }, StatusError> =>
  Effect.gen(function* () {
    const prepared = yield* prepare(s, key, true)
    const r = yield* Effect.either(s.keys.get(prepared.replace(/\/+$/, ""), { recursive: true, quorum: true }))
    if (Either.isLeft(r)) {
      if (r.left._tag === "KeyNotFound") return { objectCount: 0 }
      return yield* Effect.fail(fromKeys(r.left))
    }
    return { objectCount: leaves(r.right.node).length }
  })

/** The etcd2 storage over the `KeysClient` in context. */
export const make = (config: Etcd2StoreConfig): Effect.Effect<StorageShape, never, KeysClient> =>
  Effect.map(KeysClient, (keys) => makeWith(keys, config))

/** The etcd2 storage over `keys`. */
export const makeWith = (keys: KeysClientShape, config: Etcd2StoreConfig): StorageShape => {
  const s = makeV2StoreDeps(keys, config)
  return {
    create: (key, obj, ttl) => create(s, key, obj, ttl),
    delete: (key, options = {}) => deleteObject(s, key, options),
    watch: (key, options) => watch(s, key, options),
    get: (key, options = {}) => get(s, key, options),
    getList: (key, options) => getList(s, key, options),
    guaranteedUpdate: (key, options) => guaranteedUpdate(s, key, options),
    stats: (key) => stats(s, key),
    readinessCheck: Effect.asVoid(s.currentIndex),
    requestWatchProgress: Effect.fail(
      new InternalError({
        message: "RequestWatchProgress is not supported by the etcd2 storage: etcd v2 has no progress notifications"
      })
    ),
    getCurrentResourceVersion: Effect.map(s.currentIndex, BigInt),
    // v2 keeps a 1000-event window instead of compacting
    compactRevision: Effect.succeed(0n)
  }
}

/** The etcd2 store as a Layer providing `Storage` over `KeysClient`. */
export const layer = (config: Etcd2StoreConfig): Layer.Layer<Storage, never, KeysClient> =>
  Layer.effect(Storage, make(config))

/** `Etcd2Store.make` / `makeWith` / `layer` */
export const Etcd2Store = { make, makeWith, layer } as const
