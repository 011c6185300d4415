/**
 * The etcd2-era storage (pkg/storage/etcd/etcd_helper.go), just enough of storage.Interface over
 * the v2 keys API for the Cacher and the watch conformance tests: Create (prevExist=false),
 * Get, GetList (a recursive get), GuaranteedUpdate (compareAndSwap on prevIndex, retried),
 * Delete (compareAndDelete on prevIndex), Watch (the etcd2 watcher). resourceVersion is the v2
 * `modifiedIndex`; a list's is X-Etcd-Index. Values are the objects' JSON (no value transformer:
 * v2 values are strings). v2 has no paging, compaction or progress notifications: a list ignores
 * `limit` (as etcd_helper did), a continue token is refused, RequestWatchProgress fails, and
 * CompactRevision is 0.
 */
import { Effect, Either, Layer } from "effect"
import { decodeObject, encodeObject } from "../api/codec.js"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import {
  type GroupResource,
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
import { normalizePathPrefix, prepareKey } from "../storage/etcd3/store.js"
import {
  type GetOptions,
  type ListOptions,
  type Preconditions,
  type ResponseMeta,
  Storage,
  type StorageShape
} from "../storage/interfaces.js"
import { checkPreconditions as checkPreconditionsOf } from "../storage/preconditions.js"
import { type AttrFunc, Everything, matches } from "../storage/selection-predicate.js"
import { parseResourceVersion, parseWatchResourceVersion } from "../storage/versioner.js"
import { errorText, type KeysError } from "./errors.js"
import { etcdWatcher, exceptKey } from "./etcd-watcher.js"
import type { WatcherMarks } from "./high-water-mark.js"
import { KeysClient, type KeysClientShape } from "./keys-client.js"
import { leaves, type Node } from "./node.js"

export interface Etcd2StoreConfig {
  /** key prefix of all objects, default "/registry" */
  readonly pathPrefix?: string | undefined
  /** every key must start with it, e.g. "/pods/" */
  readonly resourcePrefix: string
  readonly groupResource: GroupResource
  readonly getAttrs?: AttrFunc | undefined
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** high-water marks of every watch of this store (default: one per watch) */
  readonly watcherMarks?: (() => WatcherMarks) | undefined
}

const decoder = new TextDecoder()

/** A v2 error the storage does not interpret: 500 with the v2 client's error text. */
const fromKeys = (e: KeysError): StatusError => newInternalError(errorText(e))

interface State {
  readonly obj: KubeObject
  /** modifiedIndex, 0 when the key does not exist */
  readonly index: number
  readonly value: string
  readonly meta: ResponseMeta
}

export const make = (config: Etcd2StoreConfig): Effect.Effect<StorageShape, never, KeysClient> =>
  Effect.map(KeysClient, (keys) => makeWith(keys, config))

export const makeWith = (keys: KeysClientShape, config: Etcd2StoreConfig): StorageShape => {
  const pathPrefix = normalizePathPrefix(config.pathPrefix)
  const gr = config.groupResource
  const resourceKey =
    pathPrefix + (config.resourcePrefix.startsWith("/") ? config.resourcePrefix.slice(1) : config.resourcePrefix)

  const prepare = (key: string, recursive: boolean) =>
    Effect.suspend(() => prepareKey(pathPrefix, config.resourcePrefix, key, recursive))

  const decode = (value: string, index: number): Either.Either<KubeObject, StatusError> =>
    Either.mapLeft(decodeObject(new TextEncoder().encode(value), BigInt(index)), newInternalError)

  const stateOf = (node: Node): Effect.Effect<State, StatusError> =>
    Effect.map(decode(node.value ?? "", node.modifiedIndex), (obj) => ({
      obj,
      index: node.modifiedIndex,
      value: node.value ?? "",
      meta: { ttl: node.ttl ?? 0, resourceVersion: BigInt(node.modifiedIndex) }
    }))

  const absent: State = { obj: { metadata: {} }, index: 0, value: "", meta: { ttl: 0, resourceVersion: 0n } }

  const getState = (key: string, ignoreNotFound: boolean): Effect.Effect<State, StatusError> =>
    Effect.flatMap(Effect.either(keys.get(key, { quorum: true })), (r) => {
      if (Either.isRight(r)) return stateOf(r.right.node)
      if (r.left._tag !== "KeyNotFound") return Effect.fail(fromKeys(r.left))
      return ignoreNotFound ? Effect.succeed(absent) : Effect.fail(newNotFound(gr, nameOf(key)))
    })

  const stateFromObject = (obj: KubeObject): Effect.Effect<State, StatusError> =>
    Effect.suspend(() => {
      const rv = parseResourceVersion(obj.metadata.resourceVersion)
      if (Either.isLeft(rv)) return Effect.fail(newInternalError(`couldn't get resource version: ${rv.left}`))
      const index = Number(rv.right)
      return Effect.succeed({ obj, index, value: textOf(obj), meta: { ttl: 0, resourceVersion: rv.right } })
    })

  const checkPreconditions = (key: string, p: Preconditions | undefined, obj: KubeObject) =>
    checkPreconditionsOf(gr, key, p, obj)

  /** the current index of the resource (X-Etcd-Index of a quorum get, or of its "not found") */
  const currentIndex: Effect.Effect<number, StatusError> = keys.get(resourceKey, { quorum: true }).pipe(
    Effect.map((r) => r.etcdIndex),
    Effect.catchAll((e) => (e._tag === "KeyNotFound" ? Effect.succeed(e.index) : Effect.fail(fromKeys(e))))
  )

  const validateMinimumResourceVersion = (
    minimum: string | undefined,
    actual: number
  ): Effect.Effect<void, StatusError> => {
    if (minimum === undefined || minimum === "") return Effect.void
    const parsed = parseResourceVersion(minimum)
    if (Either.isLeft(parsed)) return Effect.fail(newBadRequest(`invalid resource version: ${parsed.left}`))
    if (parsed.right > BigInt(actual)) return Effect.fail(newTooLargeResourceVersion(parsed.right, BigInt(actual), 0))
    return Effect.void
  }

  const create: StorageShape["create"] = (key, obj, ttl) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const rv = parseResourceVersion(obj.metadata.resourceVersion)
      if (Either.isRight(rv) && rv.right !== 0n) {
        return yield* Effect.fail(newInternalError("resourceVersion should not be set on objects to be created"))
      }
      const value = textOf(obj)
      const r = yield* keys
        .create(prepared, value, { ttl })
        .pipe(
          Effect.catchAll((e) =>
            Effect.fail(e._tag === "NodeExist" ? newAlreadyExists(gr, nameOf(prepared)) : fromKeys(e))
          )
        )
      return yield* decode(value, r.node.modifiedIndex)
    })

  const del: StorageShape["delete"] = (key, options = {}) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      let orig =
        options.cachedExistingObject !== undefined
          ? yield* stateFromObject(options.cachedExistingObject)
          : yield* getState(prepared, false)
      let origIsCurrent = options.cachedExistingObject === undefined
      for (;;) {
        const preErr = checkPreconditions(prepared, options.preconditions, orig.obj)
        const validateErr =
          preErr !== undefined || options.validateDeletion === undefined
            ? preErr
            : yield* Effect.flip(options.validateDeletion(orig.obj)).pipe(Effect.orElseSucceed(() => undefined))
        if (validateErr !== undefined) {
          if (origIsCurrent) return yield* Effect.fail(validateErr)
          const cachedIndex = orig.index
          orig = yield* getState(prepared, false)
          origIsCurrent = true
          if (cachedIndex === orig.index) return yield* Effect.fail(validateErr)
          continue
        }
        const r = yield* Effect.either(keys.compareAndDelete(prepared, { prevIndex: orig.index }))
        if (Either.isLeft(r)) {
          // someone changed it (101) or it is gone (100): look again
          if (r.left._tag === "CompareFailed" || (r.left._tag === "KeyNotFound" && !origIsCurrent)) {
            orig = yield* getState(prepared, false)
            origIsCurrent = true
            continue
          }
          if (r.left._tag === "KeyNotFound") return yield* Effect.fail(newNotFound(gr, nameOf(prepared)))
          return yield* Effect.fail(fromKeys(r.left))
        }
        return yield* decode(r.right.prevNode?.value ?? orig.value, r.right.node.modifiedIndex)
      }
    })

  const guaranteedUpdate: StorageShape["guaranteedUpdate"] = (key, options) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const ignoreNotFound = options.ignoreNotFound === true
      let orig =
        options.cachedExistingObject !== undefined
          ? yield* stateFromObject(options.cachedExistingObject)
          : yield* getState(prepared, ignoreNotFound)
      let origIsCurrent = options.cachedExistingObject === undefined
      for (;;) {
        const preErr = checkPreconditions(prepared, options.preconditions, orig.obj)
        if (preErr !== undefined) {
          if (origIsCurrent) return yield* Effect.fail(preErr)
          orig = yield* getState(prepared, ignoreNotFound)
          origIsCurrent = true
          continue
        }
        const updated = yield* Effect.either(options.tryUpdate(orig.obj, orig.meta))
        if (Either.isLeft(updated)) {
          if (origIsCurrent) return yield* Effect.fail(updated.left)
          const cachedIndex = orig.index
          orig = yield* getState(prepared, ignoreNotFound)
          origIsCurrent = true
          if (cachedIndex === orig.index) return yield* Effect.fail(updated.left)
          continue
        }
        const value = textOf(updated.right.object)
        if (orig.index !== 0 && value === orig.value) {
          if (!origIsCurrent) {
            orig = yield* getState(prepared, ignoreNotFound)
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
            orig = yield* getState(prepared, ignoreNotFound)
            origIsCurrent = true
            continue
          }
          return yield* Effect.fail(fromKeys(e))
        }
        return yield* decode(value, r.right.node.modifiedIndex)
      }
    })

  const get: StorageShape["get"] = (key, options: GetOptions = {}) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const r = yield* Effect.either(keys.get(prepared, { quorum: true }))
      if (Either.isLeft(r)) {
        if (r.left._tag !== "KeyNotFound") return yield* Effect.fail(fromKeys(r.left))
        yield* validateMinimumResourceVersion(options.resourceVersion, r.left.index)
        if (options.ignoreNotFound === true) return undefined
        return yield* Effect.fail(newNotFound(gr, nameOf(prepared)))
      }
      yield* validateMinimumResourceVersion(options.resourceVersion, r.right.etcdIndex)
      if (r.right.node.dir === true) return yield* Effect.fail(newNotFound(gr, nameOf(prepared)))
      return yield* decode(r.right.node.value ?? "", r.right.node.modifiedIndex)
    })

  const getList: StorageShape["getList"] = (key, options: ListOptions) =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      const prepared = yield* prepare(key, recursive)
      const pred = options.predicate ?? Everything
      if (pred.continue !== "") {
        return yield* Effect.fail(
          newBadRequest("continue is not supported by the etcd2 storage (etcd v2 cannot page a list)")
        )
      }
      const r = yield* Effect.either(keys.get(prepared, { recursive, quorum: true, sorted: true }))
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

  const watch: StorageShape["watch"] = (key, options) =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      const prepared = yield* prepare(key, recursive)
      const rv = parseWatchResourceVersion(options.resourceVersion, gr)
      if (Either.isLeft(rv)) return yield* Effect.fail(rv.left)
      // v2 keys name directories without the trailing slash
      const v2Key = recursive ? prepared.replace(/\/+$/, "") : prepared
      return etcdWatcher(
        {
          keys,
          typeMeta: config.typeMeta,
          marks: config.watcherMarks?.(),
          include: recursive ? exceptKey(v2Key) : undefined
        },
        v2Key,
        Number(rv.right),
        options
      )
    })

  const stats: StorageShape["stats"] = (key) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, true)
      const r = yield* Effect.either(keys.get(prepared.replace(/\/+$/, ""), { recursive: true, quorum: true }))
      if (Either.isLeft(r)) {
        if (r.left._tag === "KeyNotFound") return { objectCount: 0 }
        return yield* Effect.fail(fromKeys(r.left))
      }
      return { objectCount: leaves(r.right.node).length }
    })

  return {
    create,
    delete: del,
    watch,
    get,
    getList,
    guaranteedUpdate,
    stats,
    readinessCheck: Effect.asVoid(currentIndex),
    requestWatchProgress: Effect.fail(
      new InternalError({
        message: "RequestWatchProgress is not supported by the etcd2 storage: etcd v2 has no progress notifications"
      })
    ),
    getCurrentResourceVersion: Effect.map(currentIndex, BigInt),
    // v2 keeps a 1000-event window instead of compacting
    compactRevision: Effect.succeed(0n)
  }
}

const textOf = (obj: KubeObject): string => decoder.decode(encodeObject(obj))

/** The etcd2 store as a Layer providing `Storage` over `KeysClient`. */
export const layer = (config: Etcd2StoreConfig): Layer.Layer<Storage, never, KeysClient> =>
  Layer.effect(Storage, make(config))

/** `Etcd2Store.make` / `makeWith` / `layer` */
export const Etcd2Store = { make, makeWith, layer } as const
