/**
 * etcd3/store.go: storage.Interface over etcd through `EtcdClient`. Objects are JSON (through the
 * value transformer) under `pathPrefix + key`; an object's resourceVersion is its etcd mod
 * revision. Updates are optimistic (a txn guarded by the mod revision the update was computed
 * from, retried with the fresh object); lists page through etcd at one revision.
 *
 * This file holds the store (`makeWith`) and its small operations (Create, Get, Count, Watch); the
 * others have files of their own: `delete.ts` (Delete, conditionalDelete), `guaranteed-update.ts`,
 * `get-list.ts`, and their helpers `store-deps.ts` (the store's parts), `obj-state.ts`,
 * `decoder.ts`, `prepare-key.ts`, `compact.ts`.
 */
import { Effect, Either, Layer } from "effect"
import { EtcdClient, type EtcdClientShape } from "../../../client/client.js"
import { Compare, Op } from "../../../client/op.js"
import { encodeObject } from "../../api/codec.js"
import type { KubeObject } from "../../api/object-meta.js"
import { newAlreadyExists, newInternalError, newNotFound, type StatusError } from "../../api/status.js"
import { type GetOptions, type ListOptions, Storage, type StorageShape } from "../interfaces.js"
import { parseResourceVersion, parseWatchResourceVersion } from "../versioner.js"
import { makeCompactRevision } from "./compact.js"
import type { Etcd3StoreConfig } from "./config.js"
import { decode, fromStorage } from "./decoder.js"
import { deleteObject } from "./delete.js"
import { nameOf } from "./errors.js"
import { requestWatchProgressCheck } from "./feature-support.js"
import { getList } from "./get-list.js"
import { guaranteedUpdate } from "./guaranteed-update.js"
import {
  etcdCall,
  leaseFor,
  makeStoreDeps,
  prepare,
  type StoreDeps,
  validateMinimumResourceVersion
} from "./store-deps.js"
import { watchChan } from "./watcher.js"

export type { Etcd3StoreConfig } from "./config.js"
export { normalizePathPrefix, prepareKey } from "./prepare-key.js"

/** storage.Interface.Create: a txn that puts only if the key has never been written (mod revision 0). */
const create = (s: StoreDeps, key: string, obj: KubeObject, ttl: number | undefined) =>
  Effect.gen(function* () {
    const prepared = yield* prepare(s, key, false)
    const rv = parseResourceVersion(obj.metadata.resourceVersion)
    if (Either.isRight(rv) && rv.right !== 0n) {
      return yield* Effect.fail(newInternalError("resourceVersion should not be set on objects to be created"))
    }
    const toStore = s.config.newObject === undefined ? obj : s.config.newObject(obj)
    const data = encodeObject(toStore)
    const lease = yield* leaseFor(s, ttl)
    const stored = s.transformer.toStorage(data, prepared)
    const txn = yield* etcdCall(
      s.client.kv
        .txn()
        .when(Compare.modRevision(prepared).equals(0n))
        .success(Op.put(prepared, stored, lease === undefined ? {} : { lease })).commit
    )
    if (!txn.succeeded) return yield* Effect.fail(newAlreadyExists(s.groupResource, nameOf(prepared)))
    return yield* decode(data, txn.header.revision)
  })

/** storage.Interface.Get: at etcd's current revision, which must not be older than the asked-for one. */
const get = (s: StoreDeps, key: string, options: GetOptions = {}) =>
  Effect.gen(function* () {
    const prepared = yield* prepare(s, key, false)
    const r = yield* etcdCall(s.client.kv.get(prepared))
    yield* validateMinimumResourceVersion(options.resourceVersion, r.header.revision)
    const kv = r.kvs[0]
    if (kv === undefined) {
      if (options.ignoreNotFound === true) return undefined
      return yield* Effect.fail(newNotFound(s.groupResource, nameOf(prepared)))
    }
    const plain = fromStorage(s.transformer, kv.value, prepared)
    if (Either.isLeft(plain)) return yield* Effect.fail(plain.left)
    return yield* decode(plain.right.data, kv.modRevision)
  })

/** storage.Interface.Watch: watchChan (watcher.ts) from the parsed resourceVersion. */
const watch = (s: StoreDeps, key: string, options: ListOptions) =>
  Effect.gen(function* () {
    const recursive = options.recursive === true
    const prepared = yield* prepare(s, key, recursive)
    const rev = parseWatchResourceVersion(options.resourceVersion, s.groupResource)
    if (Either.isLeft(rev)) return yield* Effect.fail(rev.left)
    return watchChan(
      {
        client: s.client,
        transformer: s.transformer,
        groupResource: s.groupResource,
        typeMeta: s.config.typeMeta ?? {},
        getCurrentResourceVersion: s.currentRevision
      },
      prepared,
      rev.right,
      options
    )
  })

/** storage.Interface.Count (`stats`): a count-only read of the keys under `key`. */
const count = (s: StoreDeps, key: string): Effect.Effect<{ objectCount: number }, StatusError> =>
  Effect.gen(function* () {
    let prepared = yield* prepare(s, key, true)
    if (!prepared.endsWith("/")) prepared += "/"
    const r = yield* etcdCall(s.client.kv.get(prepared, { prefix: true, countOnly: true }))
    return { objectCount: Number(r.count) }
  })

/** The etcd3 storage over the `EtcdClient` in context. */
export const make = (config: Etcd3StoreConfig): Effect.Effect<StorageShape, never, EtcdClient> =>
  Effect.map(EtcdClient, (client) => makeWith(client, config))

/** The store over a given client (no Context needed). */
export const makeWith = (client: EtcdClientShape, config: Etcd3StoreConfig): StorageShape => {
  const s = makeStoreDeps(client, config)
  return {
    create: (key, obj, ttl) => create(s, key, obj, ttl),
    delete: (key, options) => deleteObject(s, key, options),
    watch: (key, options) => watch(s, key, options),
    get: (key, options) => get(s, key, options),
    getList: (key, options) => getList(s, key, options),
    guaranteedUpdate: (key, options) => guaranteedUpdate(s, key, options),
    stats: (key) => count(s, key),
    readinessCheck: Effect.asVoid(s.currentRevision),
    requestWatchProgress: client.requestProgress({ requireLeader: true }),
    requestWatchProgressSupported: requestWatchProgressCheck(client),
    getCurrentResourceVersion: s.currentRevision,
    compactRevision: makeCompactRevision(client)
  }
}

/** The etcd3 store as a Layer providing `Storage` (one resource) over `EtcdClient`. */
export const layer = (config: Etcd3StoreConfig): Layer.Layer<Storage, never, EtcdClient> =>
  Layer.effect(Storage, make(config))

/** `Etcd3Store.make` / `Etcd3Store.layer` */
export const Etcd3Store = { make, makeWith, layer } as const
