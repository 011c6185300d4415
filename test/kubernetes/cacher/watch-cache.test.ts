/**
 * watchCache (watch_cache.go, watch_cache_history.go) on its own: the ring grows ×2 while all of it
 * is younger than 75 s and shrinks ×2 when its newest quarter is older; the too-old rules; the
 * freshness wait; snapshots sorted by key. Time is a plain number the test moves.
 */
import { it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Fiber, Layer, Metric, MetricState, TestClock } from "effect"
import { describe, expect } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { defaultAttrs } from "../../../src/kubernetes/storage/selection-predicate.js"
import { suggestedWatchChannelSize } from "../../../src/kubernetes/cacher/cache-watcher.js"
import { CacherConfig } from "../../../src/kubernetes/cacher/config.js"
import { LOWER_BOUND_CAPACITY, makeWatchCache, WatchCache } from "../../../src/kubernetes/cacher/watch-cache.js"

const obj = (name: string): KubeObject => ({ metadata: { name, namespace: "ns" } })
const keyOf = (o: KubeObject) => `/pods/${o.metadata.namespace}/${o.metadata.name}`

describe("watchCache", () => {
  it("the ring grows while everything in it is younger than 75 s, and shrinks when its newest quarter is older", () => {
    let now = 0
    const wc = makeWatchCache(keyOf, defaultAttrs, () => now, 1600)
    wc.replace([], 1n)
    let rv = 1n
    for (let i = 0; i < 100; i++) wc.processEvent("ADDED", obj(`o${i}`), ++rv)
    expect(wc.capacity).toBe(LOWER_BOUND_CAPACITY)
    // full, and all of it recent: the next event doubles it (up to the bound)
    wc.processEvent("ADDED", obj("x"), ++rv)
    expect(wc.capacity).toBe(200)
    for (let i = 0; i < 2000; i++) wc.processEvent("MODIFIED", obj(`o${i % 100}`), ++rv)
    expect(wc.capacity).toBe(1600)
    expect(wc.size).toBe(1600)
    // 80 s later the whole newest quarter is stale: halve on the next event
    now = 80_000
    wc.processEvent("MODIFIED", obj("o1"), ++rv)
    expect(wc.capacity).toBe(800)
    expect(wc.size).toBeLessThanOrEqual(800)
  })

  it("too old: below the oldest event kept (or the relist RV while nothing was evicted) is 410", () => {
    const wc = makeWatchCache(keyOf, defaultAttrs, () => 0, 100)
    expect(Either.isLeft(Either.right(0))).toBe(false)
    const uninit = wc.eventsSince(5n)
    expect("message" in uninit && uninit.message).toBe(
      "Internal error occurred: watch cache isn't correctly initialized"
    )
    wc.replace([obj("a")], 9n)
    // a watch from exactly the list RV is fine (nothing to replay), one below it is not
    expect(wc.eventsSince(9n)).toMatchObject({ _tag: "Events", events: [] })
    expect(wc.eventsSince(8n)).toMatchObject({ _tag: "Expired", message: "too old resource version: 8 (9)" })
    let rv = 9n
    for (let i = 0; i < 150; i++) wc.processEvent("MODIFIED", obj("a"), ++rv)
    // the ring (bound 100) evicted the first 50: the oldest kept is 60
    expect(wc.eventsSince(58n)).toMatchObject({ _tag: "Expired", message: "too old resource version: 58 (59)" })
    const since = wc.eventsSince(59n)
    expect(since._tag === "Events" && since.events.map((e) => e.resourceVersion)).toEqual(
      Array.from({ length: 100 }, (_, i) => BigInt(60 + i))
    )
    // a future RV is accepted: nothing yet
    expect(wc.eventsSince(1000n)).toMatchObject({ _tag: "Events", events: [] })
  })

  it("events carry the object before them; snapshots are sorted by key", () => {
    const wc = makeWatchCache(keyOf, defaultAttrs, () => 0)
    wc.replace([obj("b"), obj("a")], 5n)
    const e = wc.processEvent("MODIFIED", { metadata: { name: "a", namespace: "ns", labels: { x: "1" } } }, 6n)
    expect(e.prevObject).toEqual(obj("a"))
    expect(e.attrs.labels).toEqual({ x: "1" })
    const d = wc.processEvent("DELETED", obj("b"), 7n)
    expect(d.prevObject).toEqual(obj("b"))
    const snap = wc.snapshot("/pods/")
    expect(snap._tag === "Snapshot" && snap.elements.map((x) => x.key)).toEqual(["/pods/ns/a"])
    expect(wc.resourceVersion).toBe(7n)
  })

  // keys of a few namespaces whose names are prefixes of each other ("n", "n1", "n10") and of
  // characters on both sides of "/" in code-unit order, so a prefix range has neighbours to leak into
  const ns = fc.constantFrom("n", "n1", "n10", "m", "n-")
  const name = fc.constantFrom("a", "b", "a0", "A", "-", "z", "\u00e9", "\ud83d\ude00")
  const op = fc.oneof(
    fc.record({ kind: fc.constantFrom("ADDED" as const, "MODIFIED" as const, "DELETED" as const), ns, name }),
    fc.record({ kind: fc.constant("REPLACE" as const), objects: fc.array(fc.tuple(ns, name), { maxLength: 12 }) })
  )
  it.prop(
    "a snapshot of any prefix is the store's objects under it, sorted by key, after any events and relists",
    [
      fc.array(op, { maxLength: 60 }),
      fc.array(fc.constantFrom(undefined, "", "/pods/", "/pods/n", "/pods/n1/", "/pods/n1", "/pods/m/", "/pods/x/"), {
        minLength: 1,
        maxLength: 4
      })
    ],
    ([ops, prefixes]) => {
      const wc = makeWatchCache(keyOf, defaultAttrs, () => 0)
      const model = new Map<string, KubeObject>()
      let rv = 1n
      wc.replace([], rv)
      const o = (namespace: string, n: string, v: bigint): KubeObject => ({
        metadata: { name: n, namespace, resourceVersion: String(v) }
      })
      for (const step of ops) {
        rv++
        if (step.kind === "REPLACE") {
          const objects = step.objects.map(([namespace, n]) => o(namespace, n, rv))
          wc.replace(objects, rv)
          model.clear()
          for (const x of objects) model.set(keyOf(x), x)
        } else {
          const x = o(step.ns, step.name, rv)
          wc.processEvent(step.kind, x, rv)
          if (step.kind === "DELETED") model.delete(keyOf(x))
          else model.set(keyOf(x), x)
        }
        for (const prefix of prefixes) {
          const snap = wc.snapshot(prefix)
          const want = [...model.entries()]
            .filter(([k]) => prefix === undefined || k.startsWith(prefix))
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          expect(snap._tag === "Snapshot" && snap.elements.map((e) => [e.key, e.object])).toEqual(want)
        }
      }
    }
  )

  it.effect("waitUntilFresh returns once the cache reaches the RV, else 'Too large resource version' after 3 s", () =>
    Effect.gen(function* () {
      const wc = makeWatchCache(keyOf, defaultAttrs, () => 0)
      wc.replace([], 10n)
      yield* wc.waitUntilFresh(10n)
      const waiting = yield* Effect.fork(wc.waitUntilFresh(12n))
      yield* TestClock.adjust("1 second")
      expect(wc.waiting).toBe(1)
      wc.updateResourceVersion(12n)
      yield* Fiber.join(waiting)
      expect(wc.waiting).toBe(0)
      const late = yield* Effect.fork(Effect.flip(wc.waitUntilFresh(20n)))
      yield* TestClock.adjust("3 seconds")
      const e = yield* Fiber.join(late)
      expect(e.message).toBe("Timeout: Too large resource version: 20, current: 12")
      expect(e.details?.retryAfterSeconds).toBe(1)
    })
  )

  it.effect("watch_cache_capacity is set when the cache is made and on every resize, each resize counted", () =>
    Effect.gen(function* () {
      // a resource of its own: the metric registry is the process's
      const tags = { group: "test.example.com", resource: "capacity-widgets" }
      const metric = (name: string): number | undefined => {
        for (const { metricKey, metricState } of Metric.unsafeSnapshot()) {
          if (metricKey.name !== name) continue
          const t = Object.fromEntries(metricKey.tags.map((l) => [l.key, l.value]))
          if (t.group !== tags.group || t.resource !== tags.resource) continue
          if (MetricState.isGaugeState(metricState)) return metricState.value as number
          if (MetricState.isCounterState(metricState)) return metricState.count as number
        }
        return undefined
      }
      const wc = yield* WatchCache.pipe(
        Effect.provide(
          WatchCache.layer.pipe(
            Layer.provide(
              Layer.succeed(CacherConfig, {
                resourcePrefix: "/widgets/",
                groupResource: tags,
                upperBoundCapacity: 400
              })
            )
          )
        )
      )
      // no event, no time passed: the gauge holds the lower bound already
      expect(metric("watch_cache_capacity")).toBe(LOWER_BOUND_CAPACITY)
      expect(metric("watch_cache_capacity_increase_total")).toBeUndefined()
      wc.replace([], 1n)
      let rv = 1n
      const put = () => wc.processEvent("MODIFIED", { metadata: { name: `w${rv % 7n}` } }, ++rv)
      for (let i = 0; i < 101; i++) put()
      expect([wc.capacity, metric("watch_cache_capacity")]).toEqual([200, 200])
      for (let i = 0; i < 400; i++) put()
      expect([wc.capacity, metric("watch_cache_capacity")]).toEqual([400, 400])
      expect(metric("watch_cache_capacity_increase_total")).toBe(2)
      // 80 s on, the newest quarter is stale: each event halves it, down to the lower bound
      yield* TestClock.adjust("80 seconds")
      put()
      expect([wc.capacity, metric("watch_cache_capacity")]).toEqual([200, 200])
      put()
      expect([wc.capacity, metric("watch_cache_capacity")]).toEqual([100, 100])
      put()
      expect(metric("watch_cache_capacity")).toBe(100)
      expect(metric("watch_cache_capacity_decrease_total")).toBe(2)
      expect(metric("watch_cache_capacity_increase_total")).toBe(2)
    })
  )

  it("watch channel sizes (TestSuggestedWatchChannelSize)", () => {
    expect(suggestedWatchChannelSize(100, true, true)).toBe(10)
    expect(suggestedWatchChannelSize(100, false, false)).toBe(10)
    expect(suggestedWatchChannelSize(7500, true, true)).toBe(10)
    expect(suggestedWatchChannelSize(7500, true, false)).toBe(100)
    expect(suggestedWatchChannelSize(7500, false, false)).toBe(100)
    expect(suggestedWatchChannelSize(75000, true, false)).toBe(1000)
    expect(suggestedWatchChannelSize(750000, false, false)).toBe(100)
  })
})
