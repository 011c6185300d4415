/**
 * CacheDelegator (delegator.go): which reads the cache serves and which go to the storage
 * underneath. Get and GetList by the delegator's rules (a consistent read waits for the cache to
 * reach etcd's current RV; an RV the cache cannot wait for goes to etcd), and GuaranteedUpdate with
 * the cached object as its first guess.
 */
import { Effect, Either } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import { isTooLargeResourceVersion, newNotFound, type StatusError } from "../api/status.js"
import { decodeContinue } from "../storage/continue.js"
import type { GetOptions, ListOptions, StorageShape } from "../storage/interfaces.js"
import { Everything } from "../storage/selection-predicate.js"
import { parseListResourceVersion } from "../storage/versioner.js"
import { type CacherDeps, prepare } from "./cacher-deps.js"
import { snapshotList } from "./list-from-cache.js"

/**
 * Whether the cache may wait to reach `rv`. A quiet resource's cache reaches it only through a
 * requested progress notification, which an etcd before 3.4.31/3.5.13 sends ahead of pending
 * events (storage/etcd3/feature-support.ts): there the progress requester asks nothing and a
 * read the cache has not reached yet goes to etcd instead.
 */
const mayWaitFor = (d: CacherDeps, rv: bigint): Effect.Effect<boolean> =>
  rv <= d.watchCache.resourceVersion || d.storage.requestWatchProgressSupported === undefined
    ? Effect.succeed(true)
    : d.storage.requestWatchProgressSupported

/** a consistent read: the cache must reach etcd's current RV, else etcd answers */
const waitConsistent = (d: CacherDeps) =>
  Effect.gen(function* () {
    const current = yield* d.storage.getCurrentResourceVersion
    if (!(yield* mayWaitFor(d, current))) return false
    const fresh = yield* Effect.either(d.watchCache.waitUntilFresh(current))
    if (Either.isRight(fresh)) return true
    if (isTooLargeResourceVersion(fresh.left)) return false
    return yield* Effect.fail(fresh.left)
  })

/**
 * Cacher.GetList by the delegator's rules with the cache's snapshots (ListFromCacheSnapshot on):
 * continue tokens and Exact (or a limit with a specific RV) from the snapshot at that RV, when
 * the ring still holds it; RV "" after a consistent freshness wait; "0" and NotOlderThan from the
 * latest state. What the cache cannot serve goes to etcd, which also gives the exact errors.
 */
export const getList = (d: CacherDeps, key: string, options: ListOptions): Effect.Effect<KubeList, StatusError> =>
  Effect.gen(function* () {
    const { ready, storage, watchCache } = d
    const recursive = options.recursive === true
    const pred = options.predicate ?? Everything
    const rvText = options.resourceVersion ?? ""
    const match = options.resourceVersionMatch ?? ""
    if (!ready.isReady) {
      // while the cache is not ready only a paged list without selectors may go to etcd
      if (pred.limit > 0 && pred.label.empty() && pred.field.empty()) return yield* storage.getList(key, options)
      return yield* Effect.fail(ready.notReady())
    }
    const k = yield* prepare(d, key, recursive)
    if (pred.continue !== "") {
      const token = decodeContinue(pred.continue, k)
      // a bad token, or an RV beside one, gets etcd3's error
      if (!recursive || Either.isLeft(token) || (rvText !== "" && rvText !== "0"))
        return yield* storage.getList(key, options)
      if (token.right.rv < 0n) {
        if (!(yield* waitConsistent(d))) return yield* storage.getList(key, options)
        return yield* snapshotList(d, key, options, k, true, 0n, pred.limit, token.right.fromKey)
      }
      if (!(yield* mayWaitFor(d, token.right.rv))) return yield* storage.getList(key, options)
      yield* watchCache.waitUntilFresh(token.right.rv)
      return yield* snapshotList(d, key, options, k, true, token.right.rv, pred.limit, token.right.fromKey)
    }
    const rv = yield* parseListResourceVersion(rvText)
    if (match === "Exact" || (match === "" && pred.limit > 0 && rvText !== "" && rvText !== "0")) {
      // Exact "0" and the like: etcd3 has the validation errors
      if (rv === 0n || !(yield* mayWaitFor(d, rv))) return yield* storage.getList(key, options)
      yield* watchCache.waitUntilFresh(rv)
      return yield* snapshotList(d, key, options, k, recursive, rv, pred.limit, "")
    }
    if (match !== "" && match !== "NotOlderThan") return yield* storage.getList(key, options)
    if (rvText === "") {
      if (!(yield* waitConsistent(d))) return yield* storage.getList(key, options)
      return yield* snapshotList(d, key, options, k, recursive, 0n, pred.limit, "")
    }
    if (!(yield* mayWaitFor(d, rv))) return yield* storage.getList(key, options)
    yield* watchCache.waitUntilFresh(rv)
    // RV "0" (and NotOlderThan): the latest state; with RV "0" the cache ignores the limit (cacher.go)
    return yield* snapshotList(d, key, options, k, recursive, 0n, rvText === "0" ? 0 : pred.limit, "")
  })

/** Cacher.Get: RV "" (or a cache not ready) goes to etcd; otherwise the cache's state once it reaches the RV */
export const get = (
  d: CacherDeps,
  key: string,
  options: GetOptions
): Effect.Effect<KubeObject | undefined, StatusError> =>
  Effect.gen(function* () {
    const { ready, storage, watchCache } = d
    const rvText = options.resourceVersion ?? ""
    if (rvText === "" || !ready.isReady) return yield* storage.get(key, options)
    const k = yield* prepare(d, key, false)
    const rv = yield* parseListResourceVersion(rvText)
    if (!(yield* mayWaitFor(d, rv))) return yield* storage.get(key, options)
    yield* watchCache.waitUntilFresh(rv)
    const el = watchCache.store.get(k)
    if (el === undefined) {
      if (options.ignoreNotFound === true) return undefined
      return yield* Effect.fail(newNotFound(d.gr, k.slice(k.lastIndexOf("/") + 1)))
    }
    return el.object
  })

/** Cacher.GuaranteedUpdate: the storage's, with the cached object as its first guess */
export const guaranteedUpdate = (
  d: CacherDeps,
  key: string,
  options: Parameters<StorageShape["guaranteedUpdate"]>[1]
): ReturnType<StorageShape["guaranteedUpdate"]> =>
  Effect.suspend(() => {
    // the cached object saves a read when it is current (the store retries when it is not)
    const cached = options.cachedExistingObject ?? d.watchCache.store.get(key)?.object
    return d.storage.guaranteedUpdate(
      key,
      cached === undefined ? options : { ...options, cachedExistingObject: cached }
    )
  })
