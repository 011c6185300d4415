/**
 * The watch cache's loops are supervised (issue 30): a defect in the dispatcher, the reflector or
 * the progress requester fails the program that runs the Cacher under failOnFatal (as
 * `etcd-effect apiserver` does) with that loop's LoopDied, instead of leaving every cache watch
 * frozen while the server answers health checks. Each test fails (the program never ends) when the
 * loop's `supervised` wrapper is removed.
 */
import { it } from "@effect/vitest"
import { Deferred, Effect, Layer, Queue, TestClock } from "effect"
import { describe, expect } from "vitest"
import { CacheWatcher } from "../../../src/kubernetes/cacher/cache-watcher.js"
import { IndexedWatchers } from "../../../src/kubernetes/cacher/indexed-watchers.js"
import { Cacher } from "../../../src/kubernetes/cacher/cacher.js"
import { CacherConfig } from "../../../src/kubernetes/cacher/config.js"
import { Dispatcher } from "../../../src/kubernetes/cacher/dispatcher.js"
import { progressRequesterLayer } from "../../../src/kubernetes/cacher/progress-requester.js"
import { WatchCache } from "../../../src/kubernetes/cacher/watch-cache.js"
import { Storage, type StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { failOnFatal, LoopDied } from "../../../src/supervision/fatal.js"
import { endedWith } from "../../support/loop-died.js"
import { onOurServer } from "../storage/conformance/backend.js"
import { podAttrs } from "../storage/conformance/support.js"

/** lets the forked loops run what they can */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

const config = { resourcePrefix: "/pods/", groupResource: { group: "", resource: "pods" } }

describe("the watch cache's loops are supervised", () => {
  const ours = onOurServer()

  it.effect("a defect in the dispatcher (a watcher's sink that throws) fails the program", () =>
    Effect.gen(function* () {
      const parts = Dispatcher.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(WatchCache.layer, IndexedWatchers.layer)),
        Layer.provide(Layer.succeed(CacherConfig, config))
      )
      const program = Effect.gen(function* () {
        const { incoming } = yield* Dispatcher
        const watchers = yield* IndexedWatchers
        const cache = yield* WatchCache
        watchers.add(
          new CacheWatcher({
            deadline: undefined,
            chanSize: 10,
            filter: () => true,
            startRV: 0n,
            allowWatchBookmarks: false,
            typeMeta: { apiVersion: "v1", kind: "Pod" },
            now: 0,
            namespace: "ns",
            name: "",
            triggerValue: undefined,
            consumer: {
              _tag: "Sink",
              sink: {
                push: () => {
                  throw new Error("sink exploded")
                },
                end: () => {}
              }
            }
          })
        )
        yield* Queue.offer(incoming, cache.processEvent("ADDED", { metadata: { name: "a", namespace: "ns" } }, 1n))
        return yield* Effect.never
      }).pipe(Effect.provide(parts), Effect.scoped)
      const fiber = yield* Effect.fork(failOnFatal(program))
      yield* settle
      const e = yield* endedWith(fiber)
      expect(e).toBeInstanceOf(LoopDied)
      expect(e).toMatchObject({
        loop: "watch cache dispatcher (pods)",
        message: "watch cache dispatcher (pods) died: sink exploded"
      })
    })
  )

  it.effect("a defect in the reflector (a storage watch that dies) fails the program", () =>
    Effect.gen(function* () {
      const { store } = ours().newStore()
      const watched = yield* Deferred.make<void>()
      const broken: StorageShape = {
        ...store,
        watch: () => Effect.zipRight(Deferred.succeed(watched, undefined), Effect.die(new Error("watch exploded")))
      }
      const program = Effect.scoped(
        Effect.zipRight(
          Cacher.make(broken, { ...config, getAttrs: podAttrs, typeMeta: { apiVersion: "v1", kind: "Pod" } }),
          Effect.never
        )
      )
      const fiber = yield* Effect.fork(failOnFatal(program))
      // the list goes to the real server; then the reflector watches
      yield* Deferred.await(watched)
      yield* settle
      const e = yield* endedWith(fiber)
      expect(e).toBeInstanceOf(LoopDied)
      expect(e).toMatchObject({
        loop: "watch cache reflector (pods)",
        message: "watch cache reflector (pods) died: watch exploded"
      })
    })
  )

  it.effect("a defect in the progress requester (a progress request that dies) fails the program", () =>
    Effect.gen(function* () {
      const { store } = ours().newStore()
      const broken: StorageShape = {
        ...store,
        requestWatchProgressSupported: Effect.succeed(true),
        requestWatchProgress: Effect.die(new Error("progress exploded"))
      }
      const program = Effect.gen(function* () {
        const cache = yield* WatchCache
        // a read waiting for the cache to catch up is what makes the requester ask
        yield* Effect.fork(Effect.ignore(cache.waitUntilFresh(100n)))
        return yield* Effect.never
      }).pipe(
        Effect.provide(
          progressRequesterLayer.pipe(
            Layer.provideMerge(WatchCache.layer),
            Layer.provide(Layer.succeed(Storage, broken)),
            Layer.provide(Layer.succeed(CacherConfig, config))
          )
        ),
        Effect.scoped
      )
      const fiber = yield* Effect.fork(failOnFatal(program))
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* settle
      const e = yield* endedWith(fiber)
      expect(e).toMatchObject({
        loop: "watch cache progress requester",
        message: "watch cache progress requester died: progress exploded"
      })
    })
  )
})
