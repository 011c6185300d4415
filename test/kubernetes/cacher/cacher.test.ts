/**
 * The Cacher's own behaviours (k8s.io/apiserver/pkg/storage/cacher), on our server: a watcher that stops reading
 * is terminated once the dispatch budget is spent while the others keep every event; a watch from
 * an RV the cache no longer holds gets 410; bookmarks come at the frequency and never go back; a
 * consistent list waits for the cache and falls back to etcd after 3 s; watchers leave nothing
 * behind.
 */
import { Deferred, Effect, Exit, Fiber, Scope, Stream, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { newResourceExpired, toStatus } from "../../../src/kubernetes/api/status.js"
import { errorEvent, type WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import type { StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { watchInto } from "../../../src/kubernetes/storage/watch-sink.js"
import { onOurServer } from "../storage/conformance/backend.js"
import { pod, run, Watching } from "../storage/conformance/support.js"
import { cacherOver } from "./support.js"

const realSleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("Cacher", () => {
  const ours = onOurServer()

  it("a watcher that stops reading is terminated (no ERROR); the others keep every event", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store)
    const start = await run(cacher.getCurrentResourceVersion)
    const reader = await Watching.start(cacher, "/pods/", { recursive: true, resourceVersion: start.toString() })
    const idle = await run(cacher.watch("/pods/", { recursive: true, resourceVersion: start.toString() }))
    // pulls one event, then never again (the stream stays open): its buffer fills
    const idleEvents: Array<WatchEvent> = []
    const idleFiber = Effect.runFork(
      Stream.runForEach(idle, (e) => (idleEvents.push(e), idleEvents.length > 1 ? Effect.never : Effect.void))
    )
    for (let i = 0; i < 200; i++) await run(store.create(`/pods/ns/p${String(i).padStart(3, "0")}`, pod("ns", `p${i}`)))
    const got = await reader.next(200)
    expect(got.map((e) => (e.object as KubeObject).metadata.name)).toEqual(
      Array.from({ length: 200 }, (_, i) => `p${i}`)
    )
    expect(cacher.internals.terminatedCount()).toBe(1)
    expect(idleEvents.every((e) => e.type !== "ERROR")).toBe(true)
    await Effect.runPromise(Fiber.interrupt(idleFiber))
    await reader.stop()
    await close()
  })

  it("a watch from an RV the ring no longer holds gets 410 Expired; from one it holds, every event since", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store, { upperBoundCapacity: 100 })
    const first = await run(store.create("/pods/ns/a", pod("ns", "a")))
    let last = first
    for (let i = 0; i < 149; i++) {
      // the last write's RV from etcd itself: a get at RV "0" is served by the cache, which may
      // not have seen every update yet (then "every event since" would get more than 10)
      last = await run(
        store.guaranteedUpdate("/pods/ns/a", {
          tryUpdate: (o) => Effect.succeed({ object: { ...o, spec: { nodeName: `n${i}` } } })
        })
      )
    }
    // a get at that RV waits until the cache has it (waitUntilFreshAndBlock), so the ring has moved past `first`
    await run(cacher.get("/pods/ns/a", { resourceVersion: last.metadata.resourceVersion! }))
    expect(cacher.internals.watchCache.resourceVersion).toBeGreaterThanOrEqual(BigInt(last.metadata.resourceVersion!))
    const old = await Watching.start(cacher, "/pods/", {
      recursive: true,
      resourceVersion: first.metadata.resourceVersion
    })
    const [e] = await old.ended()
    expect(e).toMatchObject({
      type: "ERROR",
      object: {
        code: 410,
        reason: "Expired",
        message: expect.stringMatching(/^too old resource version: \d+ \(\d+\)$/)
      }
    })
    const recent = BigInt(last.metadata.resourceVersion!) - 10n
    const w = await Watching.start(cacher, "/pods/", { recursive: true, resourceVersion: recent.toString() })
    const events = await w.next(10)
    expect(events.map((x) => BigInt((x.object as KubeObject).metadata.resourceVersion!))).toEqual(
      Array.from({ length: 10 }, (_, i) => recent + 1n + BigInt(i))
    )
    await w.none(100)
    await w.stop()
    await close()
  })

  it("bookmarks come at the bookmark frequency, at the last RV, and never go backwards", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store, { bookmarkFrequencyMs: 500 })
    const start = await run(cacher.getCurrentResourceVersion)
    const w = await Watching.start(cacher, "/pods/", {
      recursive: true,
      resourceVersion: start.toString(),
      predicate: {
        ...(await import("../../../src/kubernetes/storage/selection-predicate.js")).Everything,
        allowWatchBookmarks: true
      }
    })
    const c = await run(store.create("/pods/ns/a", pod("ns", "a")))
    const seen: Array<WatchEvent> = []
    while (seen.filter((e) => e.type === "BOOKMARK").length < 1) seen.push(...(await w.next(1, 10_000)))
    // with nothing new, no further bookmark (a periodic one at the same RV is suppressed) …
    await w.none(1500)
    // … and after the next write, the next one, further on
    await run(store.create("/pods/ns/b", pod("ns", "b")))
    while (seen.filter((e) => e.type === "BOOKMARK").length < 2) seen.push(...(await w.next(1, 10_000)))
    const rvs = seen.map((e) => BigInt((e.object as KubeObject).metadata.resourceVersion!))
    expect(rvs).toEqual([...rvs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    const bookmarks = seen.filter((e) => e.type === "BOOKMARK")
    expect(BigInt((bookmarks[0]!.object as KubeObject).metadata.resourceVersion!)).toBeGreaterThanOrEqual(
      BigInt(c.metadata.resourceVersion!)
    )
    expect((bookmarks[0]!.object as KubeObject).kind).toBe("Pod")
    await w.stop()
    await close()
  })

  it("a consistent list waits for the cache, and after 3 s asks etcd", async () => {
    const { store } = ours().newStore()
    // the cache's storage watch is held back: the cache falls behind etcd
    let hold = false
    const held: StorageShape = {
      ...store,
      watch: (key, o) => Effect.map(store.watch(key, o), (s) => Stream.filter(s, () => !hold)),
      requestWatchProgress: Effect.void
    }
    const { cacher, close } = await cacherOver(held)
    await run(store.create("/pods/ns/a", pod("ns", "a")))
    while (cacher.internals.watchCache.store.size === 0) await realSleep(10) // the cache has "a"
    expect((await run(cacher.getList("/pods/", { recursive: true }))).items.map((o) => o.metadata.name)).toEqual(["a"])
    hold = true
    await run(store.create("/pods/ns/b", pod("ns", "b")))
    // the list on the TestClock (its freshness wait's 3 s are the TestClock's; etcd is real)
    const list = await Effect.runPromise(
      Effect.gen(function* () {
        const listing = yield* Effect.fork(cacher.getList("/pods/", { recursive: true }))
        // it asked etcd for the current RV and waits for the cache to reach it
        while (cacher.internals.watchCache.waiting === 0) yield* Effect.promise(() => realSleep(5))
        yield* TestClock.adjust("2999 millis")
        yield* Effect.promise(() => realSleep(50))
        expect(listing.unsafePoll()).toBeNull()
        // 3 s: the cache is given up on and etcd answers
        yield* TestClock.adjust("1 millis")
        return yield* Fiber.join(listing)
      }).pipe(Effect.provide(TestContext.TestContext))
    )
    expect(list.items.map((o) => o.metadata.name)).toEqual(["a", "b"])
    // RV "0" is served from the (stale) cache at once
    expect(
      (await run(cacher.getList("/pods/", { recursive: true, resourceVersion: "0" }))).items.map((o) => o.metadata.name)
    ).toEqual(["a"])
    await close()
  })

  it("a relist after the cache's etcd watch got 410 closes every watcher; one that re-watches from its last RV loses nothing", async () => {
    const { store } = ours().newStore()
    // the reflector's storage watch ends with a 410 when the test says (as after an etcd compaction)
    let expire = Deferred.unsafeMake<void>(Effect.runSync(Effect.fiberId))
    let lists = 0
    const expiring: StorageShape = {
      ...store,
      getList: (k, o) =>
        Effect.zipRight(
          Effect.sync(() => lists++),
          store.getList(k, o)
        ),
      watch: (k, o) =>
        Effect.map(store.watch(k, o), (s) => {
          const gone = Stream.fromEffect(Deferred.await(expire)).pipe(
            Stream.as(
              errorEvent(toStatus(newResourceExpired("The resourceVersion for the provided watch is too old.")))
            )
          )
          return Stream.merge(s, gone, { haltStrategy: "right" })
        })
    }
    const { cacher, close } = await cacherOver(expiring)
    const listsAtStart = lists
    const start = (await run(cacher.getCurrentResourceVersion)).toString()
    const a = await Watching.start(cacher, "/pods/", { recursive: true, resourceVersion: start })
    const stale = await Watching.start(cacher, "/pods/", { recursive: true, resourceVersion: start })
    for (let i = 0; i < 5; i++) await run(store.create(`/pods/ns/a${i}`, pod("ns", `a${i}`)))
    const before = await a.next(5)
    const staleSeen = await stale.next(2)
    // relist: the cache lists again at the current RV and every watcher is closed (no ERROR)
    Deferred.unsafeDone(expire, Effect.void)
    expire = Deferred.unsafeMake<void>(Effect.runSync(Effect.fiberId))
    expect(await a.ended()).toEqual([])
    expect((await stale.ended()).every((e) => e.type !== "ERROR")).toBe(true)
    while (lists === listsAtStart || !cacher.internals.ready.isReady) await realSleep(5)
    expect(lists).toBeGreaterThan(listsAtStart)
    // a client that saw everything re-watches from its last RV and misses nothing
    const lastA = before[4]!.object as KubeObject
    const again = await Watching.start(cacher, "/pods/", {
      recursive: true,
      resourceVersion: lastA.metadata.resourceVersion
    })
    for (let i = 5; i < 8; i++) await run(store.create(`/pods/ns/a${i}`, pod("ns", `a${i}`)))
    const after = await again.next(3)
    expect([...before, ...after].map((e) => `${e.type} ${(e.object as KubeObject).metadata.name}`)).toEqual(
      Array.from({ length: 8 }, (_, i) => `ADDED a${i}`)
    )
    // one whose last RV is older than the relist cannot be served from the cache: 410, and it relists
    const behind = await Watching.start(cacher, "/pods/", {
      recursive: true,
      resourceVersion: (staleSeen[1]!.object as KubeObject).metadata.resourceVersion
    })
    const [e] = await behind.ended()
    expect(e).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } })
    await again.stop()
    await close()
  })

  it("10,000 watchers come and go (9,000 sinks, 1,000 Streams each read by a fiber): none is left behind", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store)
    const scope = Effect.runSync(Scope.make())
    let ended = 0
    let delivered = 0
    const sink = {
      push: (evs: ReadonlyArray<WatchEvent>) => ((delivered += evs.length), true),
      end: () => void ended++
    }
    await Effect.runPromise(
      Effect.forEach(
        Array.from({ length: 9_000 }, (_, i) => i),
        (i) =>
          Scope.extend(watchInto(cacher, `/pods/ns${i % 10}/`, { recursive: true, resourceVersion: "0" }, sink), scope),
        { discard: true }
      )
    )
    const fibers = await Effect.runPromise(
      Effect.forEach(
        Array.from({ length: 1_000 }, (_, i) => i),
        (i) =>
          Effect.flatMap(cacher.watch(`/pods/ns${i % 10}/`, { recursive: true, resourceVersion: "0" }), (s) =>
            Effect.forkIn(Stream.runDrain(s), scope)
          )
      )
    )
    expect(cacher.internals.watcherCount()).toBe(10_000)
    await run(store.create("/pods/ns1/x", pod("ns1", "x")))
    while (delivered < 900) await realSleep(5)
    expect(delivered).toBe(900)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    // every watcher forgotten, every sink ended once, every reading fiber done
    expect(cacher.internals.watcherCount()).toBe(0)
    expect(ended).toBe(9_000)
    expect(fibers.every((f) => f.unsafePoll() !== null)).toBe(true)
    await close()
  })
})
