/**
 * The storage conformance watch tests that need no etcd3-only feature (pkg/storage/testing
 * watcher_tests.go: RunTestWatch, WatchFromZero, DeleteTriggerWatch, WatchFromNonZero,
 * DelayedWatchDelivery, WatchContextCancel, Cluster/NamespaceScopedWatch, plus WatcherTimeout and
 * the legacy rows of WatchSemantics), and the store calls they rely on, run on the etcd2 store over
 * etcd 3.4 --enable-v2. The shared suite (test/kubernetes/storage/conformance) is written around an
 * etcd3 Backend (compaction, EtcdClient, the etcd3 store for WatchError), so these are the same
 * assertions over the shared helpers; where v2 differs (no compaction: the 1000-event window; the
 * v2 error text in the 410) the test says so.
 */
import { Effect, Fiber, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { INITIAL_EVENTS_END_ANNOTATION, type WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import type { KeysClientShape } from "../../../src/kubernetes/etcd2/keys-client.js"
import { type EtcdProcess, skipEtcd } from "../../support/etcd.js"
import { contents, fails, pod, predicate, run, rv, Watching } from "../storage/conformance/support.js"
import { keysClient, newStore, runKeys, startEtcdV2 } from "./support.js"

const obj = (e: WatchEvent) => e.object as KubeObject
const summary = (events: ReadonlyArray<WatchEvent>) =>
  events.map((e) =>
    `${e.type} ${e.type === "ERROR" || e.type === "BOOKMARK" ? "" : `${obj(e).metadata.namespace}/${obj(e).metadata.name}`}`.trim()
  )
const update = (labels: Record<string, string>) => (o: KubeObject) =>
  Effect.succeed({ object: { ...o, metadata: { ...o.metadata, labels } } })

describe.skipIf(skipEtcd)("storage conformance: etcd2 store on etcd 3.4 --enable-v2", () => {
  let etcd: EtcdProcess
  let keys: KeysClientShape
  beforeAll(async () => {
    etcd = await startEtcdV2()
    keys = keysClient(etcd.clientUrl)
  })
  afterAll(async () => {
    await etcd?.dispose()
  })
  const fresh = () => newStore(keys)

  describe("Watch", () => {
    for (const recursive of [true, false]) {
      it(`RunTestWatch (recursive=${recursive}): ADDED, MODIFIED and predicate transitions from a list RV`, async () => {
        const { store } = fresh()
        const key = recursive ? "/pods/test-ns/" : "/pods/test-ns/foo"
        const start = await run(store.getList(key, { recursive }))
        const w = await Watching.start(store, key, {
          recursive,
          resourceVersion: start.metadata.resourceVersion,
          predicate: predicate({ label: "a=b" })
        })
        const c = await run(store.create("/pods/test-ns/foo", pod("test-ns", "foo", { labels: { a: "b" } })))
        expect(await w.next(1)).toEqual([{ type: "ADDED", object: c }])
        const u = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "b", x: "y" }) }))
        expect(await w.next(1)).toEqual([{ type: "MODIFIED", object: u }])
        const out = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "c" }) }))
        const [d] = await w.next(1)
        expect(d!.type).toBe("DELETED")
        expect(contents(obj(d!))).toEqual(contents(u))
        expect(obj(d!).metadata.resourceVersion).toBe(out.metadata.resourceVersion)
        const back = await run(store.guaranteedUpdate("/pods/test-ns/foo", { tryUpdate: update({ a: "b" }) }))
        expect(await w.next(1)).toEqual([{ type: "ADDED", object: back }])
        const gone = await run(store.delete("/pods/test-ns/foo"))
        expect(await w.next(1)).toEqual([{ type: "DELETED", object: gone }])
        await run(store.create("/pods/test-ns-bad/foo", pod("test-ns-bad", "foo", { labels: { a: "b" } })))
        await w.none(150)
        await w.stop()
        expect(await w.ended()).toEqual([])
      })
    }

    it("RunTestWatchFromZero: RV 0 starts with the current state (an updated object MODIFIED, as seed 001's sendAdd); an RV out of v2's 1000-event window gives 410", async () => {
      const t = fresh()
      const { store } = t
      const c = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: "0" })
      expect(await w.next(1)).toEqual([{ type: "ADDED", object: c }])
      const u = await run(store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: update({ x: "1" }) }))
      expect(await w.next(1)).toEqual([{ type: "MODIFIED", object: u }])
      await w.stop()
      // v2 has no compaction: its history is the last 1000 events
      for (let i = 0; i < 1005; i++) await runKeys(keys.set(`${t.pathPrefix}-filler`, String(i)))
      const again = await Watching.start(store, "/pods/ns/foo", { resourceVersion: "0" })
      expect(await again.next(1)).toEqual([{ type: "MODIFIED", object: u }])
      await again.stop()
      const old = await Watching.start(store, "/pods/ns/foo", { resourceVersion: (rv(c) - 1n).toString() })
      const [e, ...rest] = await old.ended()
      expect(rest).toEqual([])
      expect(e!.type).toBe("ERROR")
      expect(e!.object).toMatchObject({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        reason: "Expired",
        code: 410
      })
      expect((e!.object as { message: string }).message).toMatch(
        /^401: The event in requested index is outdated and cleared/
      )
    })

    it("RunTestDeleteTriggerWatch: DELETED", async () => {
      const { store } = fresh()
      const c = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: c.metadata.resourceVersion })
      const d = await run(store.delete("/pods/ns/foo"))
      expect(await w.next(1)).toEqual([{ type: "DELETED", object: d }])
      await w.stop()
    })

    it("RunTestWatchFromNonZero / WatchDeleteEventObjectHaveLatestRV: the exact stored objects", async () => {
      const { store } = fresh()
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
      const { store } = fresh()
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

    it("RunTestWatchContextCancel: stopping ends the stream without an error", async () => {
      const { store } = fresh()
      const w = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: "0" })
      await w.stop()
      expect(w.isDone).toBe(true)
      expect(await w.ended()).toEqual([])
    })

    it("RunTestWatcherTimeout: 50 watchers that never read do not hold up one that does", async () => {
      const { store } = fresh()
      const start = await run(store.getCurrentResourceVersion)
      const idle = await Promise.all(
        Array.from({ length: 50 }, () =>
          run(store.watch("/pods/", { recursive: true, resourceVersion: start.toString() }))
        )
      )
      const held = idle.map((s) =>
        Effect.runFork(Stream.runDrain(Stream.take(s, 1)).pipe(Effect.zipRight(Effect.never)))
      )
      const reader = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: start.toString() })
      for (let i = 0; i < 22; i++) await run(store.create(`/pods/ns/p${i}`, pod("ns", `p${i}`)))
      expect((await reader.next(22, 12_500)).length).toBe(22)
      await reader.stop()
      await Promise.all(held.map((f) => Effect.runPromise(Fiber.interrupt(f))))
    })

    it("RunTestClusterScopedWatch / NamespaceScopedWatch: name and namespace selectors", async () => {
      const { store } = fresh()
      const start = await run(store.getCurrentResourceVersion)
      const byName = await Watching.start(store, "/pods/", {
        recursive: true,
        resourceVersion: start.toString(),
        predicate: predicate({ field: "metadata.name=foo" })
      })
      const byNs = await Watching.start(store, "/pods/ns1/", { recursive: true, resourceVersion: start.toString() })
      const byNode = await Watching.start(store, "/pods/", {
        recursive: true,
        resourceVersion: start.toString(),
        predicate: predicate({ field: "spec.nodeName=n1" })
      })
      await run(store.create("/pods/ns1/foo", pod("ns1", "foo")))
      await run(store.create("/pods/ns1/bar", pod("ns1", "bar")))
      await run(store.create("/pods/ns2/foo", pod("ns2", "foo")))
      // scheduled onto n1: enters the nodeName selector (ADDED), then leaves it (DELETED)
      await run(
        store.guaranteedUpdate("/pods/ns1/bar", {
          tryUpdate: (o) => Effect.succeed({ object: { ...o, spec: { nodeName: "n1" } } })
        })
      )
      await run(
        store.guaranteedUpdate("/pods/ns1/bar", {
          tryUpdate: (o) => Effect.succeed({ object: { ...o, spec: { nodeName: "n2" } } })
        })
      )
      expect(summary(await byName.next(2))).toEqual(["ADDED ns1/foo", "ADDED ns2/foo"])
      expect(summary(await byNs.next(4))).toEqual([
        "ADDED ns1/foo",
        "ADDED ns1/bar",
        "MODIFIED ns1/bar",
        "MODIFIED ns1/bar"
      ])
      expect(summary(await byNode.next(2))).toEqual(["ADDED ns1/bar", "DELETED ns1/bar"])
      for (const w of [byName, byNs, byNode]) {
        await w.none()
        await w.stop()
      }
    })

    it("RunTestWatchSemantics (legacy and watch-list rows): initial events, the end bookmark, where streaming starts", async () => {
      const { store } = fresh()
      const p1 = await run(store.create("/pods/ns/p1", pod("ns", "p1")))
      await run(store.create("/pods/ns/p2", pod("ns", "p2")))
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
          expect(obj(last).kind).toBe("Pod")
        }
        await w.none(100)
        await w.stop()
      }
    })

    it("sendInitialEvents with a future RV: 504 Too large resource version", async () => {
      const { store } = fresh()
      const current = await run(store.getCurrentResourceVersion)
      const w = await Watching.start(store, "/pods/", {
        recursive: true,
        resourceVersion: (current + 100n).toString(),
        sendInitialEvents: true
      })
      const [e] = await w.ended()
      expect(e!.object).toMatchObject({
        code: 504,
        reason: "Timeout",
        details: { causes: [{ reason: "ResourceVersionTooLarge" }] }
      })
    })

    it("bad input: an invalid resourceVersion fails the call with the apiserver's error", async () => {
      const { store } = fresh()
      const e = await fails(store.watch("/pods/", { recursive: true, resourceVersion: "abc" }))
      expect(e._tag).toBe("Invalid")
      expect(e.message).toBe(
        'pods "" is invalid: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
      )
      expect((await fails(store.watch("/nodes/", { recursive: true })))._tag).toBe("InternalError")
    })
  })

  describe("Store (the calls the watch tests use)", () => {
    it("Create / Get / AlreadyExists / NotFound / set resourceVersion refused", async () => {
      const { store } = fresh()
      const created = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      expect(rv(created)).toBeGreaterThan(0n)
      expect(await run(store.get("/pods/ns/foo"))).toEqual(created)
      expect((await fails(store.create("/pods/ns/foo", pod("ns", "foo")))).message).toBe('pods "foo" already exists')
      expect((await fails(store.get("/pods/ns/nope"))).message).toBe('pods "nope" not found')
      expect(await run(store.get("/pods/ns/nope", { ignoreNotFound: true }))).toBeUndefined()
      const e = await fails(
        store.create("/pods/ns/bar", { ...pod("ns", "bar"), metadata: { name: "bar", resourceVersion: "5" } })
      )
      expect(e.message).toContain("resourceVersion should not be set on objects to be created")
      const tooLarge = await fails(store.get("/pods/ns/foo", { resourceVersion: "9223372036854775807" }))
      expect(tooLarge._tag).toBe("Timeout")
    })

    it("Create with a TTL: the object expires and a watch sees DELETED", async () => {
      const { store } = fresh()
      const created = await run(store.create("/pods/ns/foo", pod("ns", "foo"), 1))
      const w = await Watching.start(store, "/pods/ns/foo", { resourceVersion: created.metadata.resourceVersion })
      const [e] = await w.next(1, 10_000)
      expect(e!.type).toBe("DELETED")
      expect(contents(obj(e!))).toEqual(contents(created))
      await w.stop()
    })

    it("GetList: a recursive get at X-Etcd-Index, filtered by the predicate; a continue token is refused", async () => {
      const { store } = fresh()
      const empty = await run(store.getList("/pods/", { recursive: true }))
      expect(empty.items).toEqual([])
      expect(BigInt(empty.metadata.resourceVersion!)).toBeGreaterThan(0n)
      const a = await run(store.create("/pods/ns1/a", pod("ns1", "a", { labels: { x: "1" } })))
      const b = await run(store.create("/pods/ns2/b", pod("ns2", "b")))
      const all = await run(store.getList("/pods/", { recursive: true }))
      expect([...all.items].sort((x, y) => x.metadata.name!.localeCompare(y.metadata.name!))).toEqual([a, b])
      expect(BigInt(all.metadata.resourceVersion!)).toBeGreaterThanOrEqual(rv(b))
      expect(
        (await run(store.getList("/pods/", { recursive: true, predicate: predicate({ label: "x=1" }) }))).items
      ).toEqual([a])
      expect((await run(store.getList("/pods/ns2/", { recursive: true }))).items).toEqual([b])
      expect(
        (await fails(store.getList("/pods/", { recursive: true, predicate: predicate({ continue: "abc" }) })))._tag
      ).toBe("BadRequest")
      expect((await run(store.stats("/pods/"))).objectCount).toBe(2)
    })

    it("GuaranteedUpdate: compareAndSwap on the modifiedIndex, retried with the fresh object when someone else wrote", async () => {
      const { store } = fresh()
      const created = await run(store.create("/pods/ns/foo", pod("ns", "foo")))
      let calls = 0
      const u = await run(
        store.guaranteedUpdate("/pods/ns/foo", {
          cachedExistingObject: created,
          tryUpdate: (o) =>
            Effect.gen(function* () {
              calls++
              // a concurrent writer on the first attempt: the swap must fail and retry
              if (calls === 1)
                yield* Effect.orDie(store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: update({ other: "writer" }) }))
              return { object: { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, mine: "yes" } } } }
            })
        })
      )
      expect(calls).toBe(2)
      expect(u.metadata.labels).toEqual({ other: "writer", mine: "yes" })
      expect(await run(store.get("/pods/ns/foo"))).toEqual(u)
      // nothing changed: no write, same RV
      const same = await run(
        store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: (o) => Effect.succeed({ object: o }) })
      )
      expect(same.metadata.resourceVersion).toBe(u.metadata.resourceVersion)
      // ignoreNotFound creates
      const made = await run(
        store.guaranteedUpdate("/pods/ns/new", {
          ignoreNotFound: true,
          tryUpdate: () => Effect.succeed({ object: pod("ns", "new") })
        })
      )
      expect(await run(store.get("/pods/ns/new"))).toEqual(made)
      expect(
        (await fails(store.guaranteedUpdate("/pods/ns/missing", { tryUpdate: (o) => Effect.succeed({ object: o }) })))
          ._tag
      ).toBe("NotFound")
      // preconditions
      const pre = await fails(
        store.guaranteedUpdate("/pods/ns/foo", {
          preconditions: { uid: "nope" },
          tryUpdate: (o) => Effect.succeed({ object: o })
        })
      )
      expect(pre._tag).toBe("Conflict")
      expect(pre.message).toContain("Precondition failed: UID in precondition: nope")
    })

    it("GuaranteedUpdate from many fibers at once: no update is lost", async () => {
      const { store } = fresh()
      await run(store.create("/pods/ns/c", { ...pod("ns", "c"), count: 0 }))
      const inc = (o: KubeObject) => Effect.succeed({ object: { ...o, count: (o["count"] as number) + 1 } })
      await Promise.all(Array.from({ length: 20 }, () => run(store.guaranteedUpdate("/pods/ns/c", { tryUpdate: inc }))))
      expect((await run(store.get("/pods/ns/c")))!["count"]).toBe(20)
    })

    it("Delete: compareAndDelete on the modifiedIndex; the deleted object at the deletion index; preconditions; NotFound", async () => {
      const { store } = fresh()
      const created = await run(
        store.create("/pods/ns/foo", { ...pod("ns", "foo"), metadata: { name: "foo", namespace: "ns", uid: "u1" } })
      )
      const pre = await fails(store.delete("/pods/ns/foo", { preconditions: { uid: "u2" } }))
      expect(pre._tag).toBe("Conflict")
      const stale = await run(store.guaranteedUpdate("/pods/ns/foo", { tryUpdate: update({ v: "2" }) }))
      // a stale cached object: the compareAndDelete fails and the delete retries with the current one
      const d = await run(store.delete("/pods/ns/foo", { cachedExistingObject: created }))
      expect(contents(d)).toEqual(contents(stale))
      expect(rv(d)).toBeGreaterThan(rv(stale))
      expect((await fails(store.delete("/pods/ns/foo")))._tag).toBe("NotFound")
    })

    it("members v2 does not have: RequestWatchProgress fails clearly, CompactRevision is 0, readiness works", async () => {
      const { store } = fresh()
      const e = await fails(store.requestWatchProgress)
      expect(e._tag).toBe("InternalError")
      expect(e.message).toContain("not supported by the etcd2 storage")
      expect(await Effect.runPromise(store.compactRevision)).toBe(0n)
      await run(store.readinessCheck)
      expect(await run(store.getCurrentResourceVersion)).toBeGreaterThan(0n)
    })
  })
})
