/**
 * cacher/cacher.go (seed 002): a Storage in front of a Storage. One reflector keeps the watch cache
 * in step with etcd; every client watch is a cacheWatcher served from memory; reads are served from
 * the cache where the apiserver's delegation rules allow, writes go to the storage underneath.
 *
 *   reflector fiber ──(incoming, bounded 100: back-pressure)──▶ dispatcher fiber ──▶ cacheWatchers
 *                                                          (+ a ~1 s jittered bookmark tick)
 *
 * The parts are services with their own layers (watch-cache.ts, indexed-watchers.ts, ready.ts,
 * dispatcher.ts, reflector.ts, progress-requester.ts); `Cacher.layer` composes them in one scope
 * with this file's Storage face on top. Closing the scope interrupts the fibers and ends every watch.
 * The face's operations have their own files: start-watch.ts (Watch), delegator.ts (Get, GetList,
 * GuaranteedUpdate: what the cache serves), list-from-cache.ts (a list from a cache snapshot), over
 * cacher-deps.ts (what they work with).
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { Storage, type StorageShape } from "../storage/interfaces.js"
import { makeCacherDeps } from "./cacher-deps.js"
import { type CacherConfigShape, CacherConfig } from "./config.js"
import { get, getList, guaranteedUpdate } from "./delegator.js"
import { Dispatcher } from "./dispatcher.js"
import { IndexedWatchers } from "./indexed-watchers.js"
import { progressRequesterLayer } from "./progress-requester.js"
import { type ReadyShape, Ready } from "./ready.js"
import { reflectorLayer } from "./reflector.js"
import { watch, watchSink } from "./start-watch.js"
import { type WatchCacheShape, WatchCache } from "./watch-cache.js"

export type { CacherConfigShape } from "./config.js"

/** What tests and metrics may look at besides the Storage face. */
export interface CacherInternalsShape {
  readonly watchCache: WatchCacheShape
  readonly ready: ReadyShape
  /** live cacheWatchers */
  readonly watcherCount: () => number
  /** watchers terminated for not keeping up */
  readonly terminatedCount: () => number
  /** the RV of the last event the dispatcher handed to the watchers */
  readonly dispatchedRV: () => bigint
}

export class CacherInternals extends Context.Tag("etcd-effect/kubernetes/CacherInternals")<
  CacherInternals,
  CacherInternalsShape
>() {}

/** The Storage face over the running parts: watches from the cache, reads by the delegator's rules, writes below. */
const makeFace = Effect.gen(function* () {
  const d = yield* makeCacherDeps
  const { ready, storage, watchCache, watchers } = d
  const dispatcher = yield* Dispatcher
  const face: StorageShape = {
    create: storage.create,
    delete: storage.delete,
    watch: (key, options) => watch(d, key, options),
    watchSink: (key, options, sink) => watchSink(d, key, options, sink),
    get: (key, options = {}) => get(d, key, options),
    getList: (key, options) => getList(d, key, options),
    guaranteedUpdate: (key, options) => guaranteedUpdate(d, key, options),
    stats: storage.stats,
    readinessCheck: Effect.suspend(() => (ready.isReady ? storage.readinessCheck : Effect.fail(ready.notReady()))),
    requestWatchProgress: storage.requestWatchProgress,
    getCurrentResourceVersion: storage.getCurrentResourceVersion,
    compactRevision: storage.compactRevision
  }
  const internals: CacherInternalsShape = {
    watchCache,
    ready,
    watcherCount: () => watchers.size,
    terminatedCount: () => watchers.terminated,
    dispatchedRV: dispatcher.lastProcessedRV
  }
  return { face, internals }
})

/** The running parts of one Cacher, over the Storage underneath. */
const partsLayer = Layer.mergeAll(reflectorLayer, progressRequesterLayer).pipe(
  Layer.provideMerge(Dispatcher.layer),
  Layer.provideMerge(Layer.mergeAll(WatchCache.layer, IndexedWatchers.layer, Ready.layer))
)

/** The Cacher's layer with its internals beside the Storage face (for `make`, tests and metrics). */
export const layerWithInternals = (config: CacherConfigShape): Layer.Layer<Storage | CacherInternals, never, Storage> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const underlying = yield* Storage
      const parts = yield* Layer.build(partsLayer.pipe(Layer.provide(Layer.succeed(CacherConfig, config))))
      const { face, internals } = yield* Effect.provide(
        makeFace,
        Context.add(parts, CacherConfig, config).pipe(Context.add(Storage, underlying))
      )
      return Context.make(Storage, face).pipe(Context.add(CacherInternals, internals))
    })
  )

/**
 * The Cacher as a Layer: it takes the `Storage` underneath and provides a `Storage`, so a program
 * turns the watch cache on by adding this layer.
 */
export const layer = (config: CacherConfigShape): Layer.Layer<Storage, never, Storage> => layerWithInternals(config)

/** The Cacher over `storage`, living in the current scope. */
export const make = (
  storage: StorageShape,
  config: CacherConfigShape
): Effect.Effect<StorageShape & { readonly internals: CacherInternalsShape }, never, Scope.Scope> =>
  Effect.map(Layer.build(layerWithInternals(config).pipe(Layer.provide(Layer.succeed(Storage, storage)))), (ctx) => ({
    ...Context.get(ctx, Storage),
    internals: Context.get(ctx, CacherInternals)
  }))

/**
 * The watch cache (k8s.io/apiserver's Cacher): `Cacher.layer(config)` puts it over a `Storage`,
 * `Cacher.make` builds one in a scope.
 */
export const Cacher = { make, layer } as const
