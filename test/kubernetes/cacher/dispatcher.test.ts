/**
 * The dispatcher on its own layer, with the watch cache and the watchers' set but no storage and
 * no reflector, on the TestClock: events offered to `incoming` reach the watchers that care; a
 * watcher that stays full past the dispatch budget is terminated while the others go on; one that
 * drains within the budget is kept; due watchers get bookmarks at the last RV from the tick.
 */
import { it } from "@effect/vitest"
import { Effect, Layer, Queue, TestClock } from "effect"
import { describe, expect } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import { CacheWatcher } from "../../../src/kubernetes/cacher/cache-watcher.js"
import { IndexedWatchers } from "../../../src/kubernetes/cacher/indexed-watchers.js"
import { CacherConfig } from "../../../src/kubernetes/cacher/config.js"
import { Dispatcher } from "../../../src/kubernetes/cacher/dispatcher.js"
import { WatchCache } from "../../../src/kubernetes/cacher/watch-cache.js"

const parts = Dispatcher.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(WatchCache.layer, IndexedWatchers.layer)),
  Layer.provide(
    Layer.succeed(CacherConfig, { resourcePrefix: "/pods/", groupResource: { group: "", resource: "pods" } })
  )
)

class Sink {
  readonly events: Array<WatchEvent> = []
  ends = 0
  full = false
  readonly sink = {
    push: (evs: ReadonlyArray<WatchEvent>) => (this.events.push(...evs), !this.full),
    end: () => void this.ends++
  }
}

const watcherOn = (sink: Sink, now: number, allowWatchBookmarks = false, deadline?: number) =>
  new CacheWatcher({
    deadline,
    chanSize: 10,
    filter: () => true,
    startRV: 0n,
    allowWatchBookmarks,
    typeMeta: { apiVersion: "v1", kind: "Pod" },
    now,
    namespace: "ns",
    name: "",
    triggerValue: undefined,
    consumer: { _tag: "Sink", sink: sink.sink }
  })

const obj = (name: string): KubeObject => ({ metadata: { name, namespace: "ns" } })
/** lets the dispatcher fiber run what it can */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("dispatcher (its own layer, TestClock)", () => {
  it.scoped("a watcher full past the budget is terminated; the others get every event", () =>
    Effect.gen(function* () {
      const { incoming } = yield* Dispatcher
      const watchers = yield* IndexedWatchers
      const cache = yield* WatchCache
      yield* TestClock.adjust("2 seconds") // the budget refills (50 ms/s, up to 100 ms)
      const reader = new Sink()
      const stuck = new Sink()
      stuck.full = true
      const stuckWatcher = watcherOn(stuck, 2000)
      watchers.add(watcherOn(reader, 2000))
      watchers.add(stuckWatcher)
      // 1 pushed, 2 × 10 waiting, then one that blocks
      for (let i = 1; i <= 22; i++) yield* Queue.offer(incoming, cache.processEvent("ADDED", obj(`o${i}`), BigInt(i)))
      yield* settle
      expect(reader.events).toHaveLength(22)
      expect(stuck.events).toHaveLength(1)
      expect(watchers.terminated).toBe(0)
      yield* TestClock.adjust("99 millis")
      yield* settle
      expect(watchers.terminated).toBe(0)
      yield* TestClock.adjust("2 millis")
      yield* settle
      expect(watchers.terminated).toBe(1)
      expect(stuck.ends).toBe(1)
      expect(stuck.events.every((e) => e.type !== "ERROR")).toBe(true)
      yield* Queue.offer(incoming, cache.processEvent("ADDED", obj("o23"), 23n))
      yield* settle
      expect(reader.events.map((e) => (e.object as KubeObject).metadata.name)).toEqual(
        Array.from({ length: 23 }, (_, i) => `o${i + 1}`)
      )
      expect(watchers.size).toBe(1)
      expect(stuckWatcher.stopped).toBe(true)
    }).pipe(Effect.provide(parts))
  )

  it.scoped("a watcher that drains within the budget is kept and gets everything in order", () =>
    Effect.gen(function* () {
      const { incoming } = yield* Dispatcher
      const watchers = yield* IndexedWatchers
      const cache = yield* WatchCache
      yield* TestClock.adjust("2 seconds")
      const slow = new Sink()
      slow.full = true
      const w = watcherOn(slow, 2000)
      watchers.add(w)
      for (let i = 1; i <= 22; i++) yield* Queue.offer(incoming, cache.processEvent("ADDED", obj(`o${i}`), BigInt(i)))
      yield* settle
      yield* TestClock.adjust("50 millis")
      slow.full = false
      w.resume()
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(watchers.terminated).toBe(0)
      expect(slow.events.map((e) => (e.object as KubeObject).metadata.name)).toEqual(
        Array.from({ length: 22 }, (_, i) => `o${i + 1}`)
      )
    }).pipe(Effect.provide(parts))
  )

  it.scoped(
    "the tick gives a watcher that allows bookmarks one at the last RV once it is due, and none without progress",
    () =>
      Effect.gen(function* () {
        const { incoming } = yield* Dispatcher
        const watchers = yield* IndexedWatchers
        const cache = yield* WatchCache
        const b = new Sink()
        const plain = new Sink()
        watchers.add(watcherOn(b, 0, true))
        watchers.add(watcherOn(plain, 0, false))
        yield* Queue.offer(incoming, cache.processEvent("ADDED", obj("a"), 5n))
        yield* settle
        yield* TestClock.adjust("30 seconds")
        yield* settle
        expect(b.events.map((e) => e.type)).toEqual(["ADDED"])
        yield* TestClock.adjust("32 seconds")
        yield* settle
        expect(b.events.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK"])
        expect((b.events[1]!.object as KubeObject).metadata.resourceVersion).toBe("5")
        expect((b.events[1]!.object as KubeObject).kind).toBe("Pod")
        // a minute later with nothing new: no second bookmark at the same RV
        yield* TestClock.adjust("62 seconds")
        yield* settle
        expect(b.events).toHaveLength(2)
        expect(plain.events.map((e) => e.type)).toEqual(["ADDED"])
      }).pipe(Effect.provide(parts))
  )

  it.scoped(
    "the watch's deadline: its last bookmark comes 2 s before it (cacheWatcher.nextBookmarkTime), sooner than the minute's, and none after",
    () =>
      Effect.gen(function* () {
        const { incoming } = yield* Dispatcher
        const watchers = yield* IndexedWatchers
        const cache = yield* WatchCache
        const b = new Sink()
        // a watch that ends at 10 s (timeoutSeconds=10): due at 8 s
        watchers.add(watcherOn(b, 0, true, 10_000))
        // one past its deadline by less than 2 s gets none at all
        const late = new Sink()
        watchers.add(watcherOn(late, 0, true, 1_000))
        yield* Queue.offer(incoming, cache.processEvent("ADDED", obj("a"), 5n))
        yield* settle
        yield* TestClock.adjust("6 seconds")
        yield* settle
        expect(b.events.map((e) => e.type)).toEqual(["ADDED"])
        yield* Queue.offer(incoming, cache.processEvent("ADDED", obj("b"), 6n))
        yield* settle
        yield* TestClock.adjust("3300 millis")
        yield* settle
        expect(b.events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "BOOKMARK"])
        expect((b.events[2]!.object as KubeObject).metadata.resourceVersion).toBe("6")
        yield* Queue.offer(incoming, cache.processEvent("ADDED", obj("c"), 7n))
        yield* settle
        yield* TestClock.adjust("70 seconds")
        yield* settle
        expect(b.events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "BOOKMARK", "ADDED"])
        expect(late.events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "ADDED"])
      }).pipe(Effect.provide(parts))
  )
})
