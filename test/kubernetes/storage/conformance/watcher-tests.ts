/**
 * pkg/storage/testing/watcher_tests.go, ported: the watch guarantees every storage gives — ordered
 * events from the requested RV, predicate transitions (into the selector = ADDED, out of it =
 * DELETED at the new RV), initial events, bookmarks, errors delivered before the end, stop.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import { INITIAL_EVENTS_END_ANNOTATION, type WatchEvent } from "../../../../src/kubernetes/api/watch-event.js"
import type { ValueTransformer } from "../../../../src/kubernetes/storage/value/transformer.js"
import { identity } from "../../../../src/kubernetes/storage/value/transformer.js"
import { type Backend, contents, fails, pod, predicate, run, rv, Watching } from "./support.js"

const obj = (e: WatchEvent) => e.object as KubeObject
const summary = (events: ReadonlyArray<WatchEvent>) =>
  events.map((e) =>
    `${e.type} ${e.type === "ERROR" || e.type === "BOOKMARK" ? "" : `${obj(e).metadata.namespace}/${obj(e).metadata.name}`}`.trim()
  )

const update = (labels: Record<string, string>) => (o: KubeObject) =>
  Effect.succeed({ object: { ...o, metadata: { ...o.metadata, labels } } })

export const runWatchTests = (backend: () => Backend, options: { readonly cacher?: boolean } = {}) => {
  describe("Watch", () => {
    for (const recursive of [true, false]) {
      it(`RunTestWatch (recursive=${recursive}): ADDED, MODIFIED and predicate transitions from a list RV`, async () => {
        const { store } = backend().newStore()
        const key = recursive ? "/pods/test-ns/" : "/pods/test-ns/foo"
        const start = await run(store.getList(key, { recursive }))
        const w = await Watching.start(store, key, {
          recursive,
          resourceVersion: start.metadata.resourceVersion,
          predicate: predicate({ label: "a=b" })
        })
        // into the selector on create: ADDED
        const c = await run(store.create("/pods/test-ns/foo", pod("test-ns", "foo", { labels: { a: "b" } })))
        expect(await w.next(1)).toEqual([{ type: "ADDED", object: c }])
        // a plain update: MODIFIED
        const u = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "b", x: "y" }) }))
        expect(await w.next(1)).toEqual([{ type: "MODIFIED", object: u }])
        // out of the selector: DELETED with the old object at the new RV
        const out = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "c" }) }))
        const [d] = await w.next(1)
        expect(d!.type).toBe("DELETED")
        expect(contents(obj(d!))).toEqual(contents(u))
        expect(obj(d!).metadata.resourceVersion).toBe(out.metadata.resourceVersion)
        // back in: ADDED
        const back = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "b" }) }))
        expect(await w.next(1)).toEqual([{ type: "ADDED", object: back }])
        // another namespace: nothing
        await run(store.create("/pods/test-ns-bad/foo", pod("test-ns-bad", "foo", { labels: { a: "b" } })))
        await w.none(150)
        await w.stop()
        expect(await w.ended()).toEqual([])
      })
    }

    it("RunTestWatchFromZero: RV 0 starts with the current state; a compacted RV gives 410", async () => {
      const b = backend()
      const { store } = b.newStore()
      const c = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: "0" })
      expect(await w.next(1)).toEqual([{ type: "ADDED", object: c }])
      const u = await run(store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: update({ x: "1" }) }))
      expect(await w.next(1)).toEqual([{ type: "MODIFIED", object: u }])
      await w.stop()
      await b.compact(rv(u))
      const again = await Watching.start(store, "/pods/ns/foo", { resourceVersion: "0" })
      expect(await again.next(1)).toEqual([{ type: "ADDED", object: u }])
      await again.stop()
      const old = await Watching.start(store, "/pods/ns/foo", { resourceVersion: (rv(c) - 1n).toString() })
      const [e] = await old.ended()
      if (b.cacher === true) {
        // the watch cache's own wording (watch_cache_history.go)
        expect(e).toMatchObject({
          type: "ERROR",
          object: {
            code: 410,
            reason: "Expired",
            message: expect.stringMatching(/^too old resource version: \d+ \(\d+\)$/)
          }
        })
        return
      }
      expect(e).toEqual({
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: "The resourceVersion for the provided watch is too old.",
          reason: "Expired",
          code: 410
        }
      })
    })

    it("RunTestDeleteTriggerWatch: DELETED", async () => {
      const { store } = backend().newStore()
      const c = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: c.metadata.resourceVersion })
      const d = await run(store.delete("/pods/ns/foo"))
      expect(await w.next(1)).toEqual([{ type: "DELETED", object: d }])
      await w.stop()
    })

    it("RunTestWatchFromNonZero / WatchDeleteEventObjectHaveLatestRV: the exact stored objects", async () => {
      const { store } = backend().newStore()
      const c = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: c.metadata.resourceVersion })
      const u = await run(store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: update({ z: "1" }) }))
      const d = await run(store.delete("/pods/ns/foo"))
      const events = await w.next(2)
      expect(events).toEqual([
        { type: "MODIFIED", object: u },
        { type: "DELETED", object: d }
      ])
      expect(obj(events[1]!).metadata.resourceVersion).not.toBe(u.metadata.resourceVersion)
      await w.stop()
    })

    it("RunTestDelayedWatchDelivery: events queued before Stop are still delivered in order", async () => {
      const { store } = backend().newStore()
      const start = await run(store.getCurrentResourceVersion)
      for (let i = 0; i < 21; i++)
        await run(store.create(`/pods/ns/p${String(i).padStart(2, "0")}`, pod("ns", `p${i}`)))
      const w = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: start.toString() })
      const first = await w.next(1)
      await new Promise((r) => setTimeout(r, 1000))
      const all = [...first, ...(await w.next(20))]
      expect(all.map((e) => obj(e).metadata.name)).toEqual(Array.from({ length: 21 }, (_, i) => `p${i}`))
      await w.stop()
    })

    it.skipIf(options.cacher === true)(
      "RunTestWatchError: a value that does not decode ends the watch with ERROR",
      async () => {
        const b = backend()
        const failing: ValueTransformer = {
          fromStorage: () => ({ ok: false, error: "expected error" }),
          toStorage: identity.toStorage
        }
        const writer = b.newStore()
        const reader = { ...b.newStore({ transformer: failing }) }
        // the same keys: a second store over the writer's prefix
        const { Etcd3Store } = await import("../../../../src/kubernetes/storage/etcd3/store.js")
        const failingStore = Etcd3Store.makeWith(b.client, {
          pathPrefix: writer.pathPrefix,
          resourcePrefix: "/pods/",
          groupResource: { group: "", resource: "pods" },
          transformer: failing
        })
        void reader
        const start = await run(writer.store.getCurrentResourceVersion)
        const w = await Watching.start(failingStore, "/pods/ns/foo", { resourceVersion: start.toString() })
        await run(writer.store.create("/pods/ns/foo", pod("ns", "foo")))
        const [e, ...rest] = await w.ended()
        expect(e!.type).toBe("ERROR")
        expect(e!.object).toMatchObject({
          code: 500,
          reason: "InternalError",
          message: "Internal error occurred: expected error"
        })
        expect(rest).toEqual([])
      }
    )

    it("RunTestWatchContextCancel: stopping ends the stream without an error", async () => {
      const { store } = backend().newStore()
      const w = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: "0" })
      await w.stop()
      expect(w.isDone).toBe(true)
      expect(await w.ended()).toEqual([])
    })

    it("RunTestWatcherTimeout: 50 watchers that never read do not hold up one that does", async () => {
      const { store } = backend().newStore()
      const start = await run(store.getCurrentResourceVersion)
      const { Stream } = await import("effect")
      const idle = await Promise.all(
        Array.from({ length: 50 }, () =>
          run(store.watch("/pods/", { recursive: true, resourceVersion: start.toString() }))
        )
      )
      // subscribed but never pulled: their buffers fill and stay full
      const held = idle.map((s) =>
        Effect.runFork(Stream.runDrain(Stream.take(s, 1)).pipe(Effect.zipRight(Effect.never)))
      )
      const reader = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: start.toString() })
      for (let i = 0; i < 22; i++) await run(store.create(`/pods/ns/p${i}`, pod("ns", `p${i}`)))
      expect((await reader.next(22, 12_500)).length).toBe(22)
      await reader.stop()
      await Promise.all(
        held.map((f) =>
          Effect.runPromise(
            Effect.asVoid(Effect.interruptible(f.await)).pipe(Effect.timeout("1 millis"), Effect.ignore)
          )
        )
      )
      const { Fiber } = await import("effect")
      await Promise.all(held.map((f) => Effect.runPromise(Fiber.interrupt(f))))
    })

    it("RunTestClusterScopedWatch / NamespaceScopedWatch: name and namespace selectors", async () => {
      const { store } = backend().newStore()
      const start = await run(store.getCurrentResourceVersion)
      const byName = await Watching.start(store, "/pods/", {
        recursive: true,
        resourceVersion: start.toString(),
        predicate: predicate({ field: "metadata.name=foo" })
      })
      const byNs = await Watching.start(store, "/pods/ns1/", { recursive: true, resourceVersion: start.toString() })
      await run(store.create("/pods/ns1/foo", pod("ns1", "foo")))
      await run(store.create("/pods/ns1/bar", pod("ns1", "bar")))
      await run(store.create("/pods/ns2/foo", pod("ns2", "foo")))
      expect(summary(await byName.next(2))).toEqual(["ADDED ns1/foo", "ADDED ns2/foo"])
      expect(summary(await byNs.next(2))).toEqual(["ADDED ns1/foo", "ADDED ns1/bar"])
      await byName.none()
      await byNs.none()
      await byName.stop()
      await byNs.stop()
    })

    it("RunTestWatchSemantics: initial events, the end bookmark, and where streaming starts", async () => {
      const { store } = backend().newStore()
      const p1 = await run(store.create("/pods/ns/p1", pod("ns", "p1")))
      const p2 = await run(store.create("/pods/ns/p2", pod("ns", "p2")))
      const listRV = await run(store.getCurrentResourceVersion)
      const cases: Array<{ name: string; rv: string; s?: boolean; b: boolean; initial: Array<string> }> = [
        { name: "RV=0, legacy", rv: "0", b: false, initial: ["ADDED ns/p1", "ADDED ns/p2"] },
        { name: "RV='', legacy", rv: "", b: false, initial: ["ADDED ns/p1", "ADDED ns/p2"] },
        {
          name: "RV=0, sendInitialEvents, bookmarks",
          rv: "0",
          s: true,
          b: true,
          initial: ["ADDED ns/p1", "ADDED ns/p2", "BOOKMARK"]
        },
        {
          name: "RV='', sendInitialEvents, no bookmarks",
          rv: "",
          s: true,
          b: false,
          initial: ["ADDED ns/p1", "ADDED ns/p2"]
        },
        {
          name: "RV=N, sendInitialEvents, bookmarks",
          rv: p1.metadata.resourceVersion!,
          s: true,
          b: true,
          initial: ["ADDED ns/p1", "ADDED ns/p2", "BOOKMARK"]
        },
        { name: "RV=0, no initial events", rv: "0", s: false, b: true, initial: [] },
        { name: "RV=N: events after N only", rv: p1.metadata.resourceVersion!, b: false, initial: ["ADDED ns/p2"] }
      ]
      for (const c of cases) {
        const w = await Watching.start(store, "/pods/", {
          recursive: true,
          resourceVersion: c.rv,
          ...(c.s === undefined ? {} : { sendInitialEvents: c.s }),
          predicate: predicate({ bookmarks: c.b })
        })
        const initial = await w.next(c.initial.length)
        expect(summary(initial), c.name).toEqual(c.initial)
        const last = initial[initial.length - 1]
        if (last?.type === "BOOKMARK") {
          expect(obj(last).metadata.annotations).toEqual({ [INITIAL_EVENTS_END_ANNOTATION]: "true" })
          expect(BigInt(obj(last).metadata.resourceVersion!)).toBeGreaterThanOrEqual(listRV)
        }
        await w.none(100)
        await w.stop()
      }
      void p2
    })

    it("RunTestSendInitialEvents with a future RV: 504 Too large resource version", async () => {
      const { store } = backend().newStore()
      const current = await run(store.getCurrentResourceVersion)
      const w = await Watching.start(store, "/pods/", {
        recursive: true,
        resourceVersion: (current + 100n).toString(),
        sendInitialEvents: true
      })
      const [e] = await w.ended()
      expect(e!.type).toBe("ERROR")
      expect(e!.object).toMatchObject({
        code: 504,
        reason: "Timeout",
        details: { causes: [{ reason: "ResourceVersionTooLarge" }] }
      })
    })

    it.skipIf(options.cacher === true)(
      "RequestWatchProgress: a progress-notify watch gets a BOOKMARK at the current RV",
      async () => {
        const { store } = backend().newStore()
        const c = await run(store.create("/pods/ns/a", pod("ns", "a")))
        // from before the create: etcd 3.5 (and we) answer a progress request only once the store
        // has reached the watch's start revision
        const w = await Watching.start(store, "/pods/", {
          recursive: true,
          resourceVersion: (rv(c) - 1n).toString(),
          progressNotify: true
        })
        expect((await w.next(1))[0]!.type).toBe("ADDED")
        // the watch registers asynchronously: ask until the answer comes
        let got: Array<WatchEvent> = []
        for (let i = 0; i < 100 && got.length === 0; i++) {
          await run(store.requestWatchProgress)
          got = await w.next(1, 100).catch(() => [])
        }
        expect(got[0]!.type).toBe("BOOKMARK")
        expect(BigInt(obj(got[0]!).metadata.resourceVersion!)).toBeGreaterThanOrEqual(rv(c))
        expect(obj(got[0]!).kind).toBe("Pod")
        await w.stop()
      }
    )

    it("bad input: an invalid resourceVersion fails the call with the apiserver's error", async () => {
      const { store } = backend().newStore()
      const e = await fails(store.watch("/pods/", { recursive: true, resourceVersion: "abc" }))
      expect(e._tag).toBe("Invalid")
      expect(e.message).toBe(
        'pods "" is invalid: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
      )
    })
  })
}
