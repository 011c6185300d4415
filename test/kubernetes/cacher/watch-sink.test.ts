/**
 * Cache watches into a sink (no fiber per watcher), on our server: the same events as the Stream
 * face; a full sink gets nothing until it resumes and then everything in order; a sink that never
 * resumes is terminated (end, no ERROR) while the others get every event; errors are one ERROR and
 * the end; closing the scope ends the watch; 10,000 sink watchers each get every event.
 */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import type { ListOptions, StorageShape, WatchHandle } from "../../../src/kubernetes/storage/interfaces.js"
import { watchInto } from "../../../src/kubernetes/storage/watch-sink.js"
import { onOurServer } from "../storage/conformance/backend.js"
import { pod, predicate, run, Watching } from "../storage/conformance/support.js"
import { cacherOver } from "./support.js"

/** a sink that records, says "full" when told to, and can be resumed */
class Recorder {
  readonly events: Array<WatchEvent> = []
  ends = 0
  full = false
  handle: WatchHandle | undefined
  readonly sink = {
    push: (evs: ReadonlyArray<WatchEvent>) => {
      this.events.push(...evs)
      return !this.full
    },
    end: () => void this.ends++
  }
  names = () => this.events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name ?? ""}`)
}

const until = async (cond: () => boolean, what: string, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

describe("Cacher watches into a sink", () => {
  const ours = onOurServer()

  const sinkWatch = async (storage: StorageShape, rec: Recorder, options: ListOptions, key = "/pods/") => {
    const scope = Effect.runSync(Scope.make())
    rec.handle = await Effect.runPromise(
      Scope.extend(watchInto(storage, key, { recursive: true, ...options }, rec.sink), scope)
    )
    return () => Effect.runPromise(Scope.close(scope, Exit.void))
  }

  it("a sink gets what the Stream face gets; a full sink waits for resume, then gets the rest in order", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store)
    await run(store.create("/pods/ns/a", pod("ns", "a", { labels: { color: "red" } })))
    const rv = (await run(cacher.getCurrentResourceVersion)).toString()
    const pred = predicate({ label: "color=red" })
    const streamed = await Watching.start(cacher, "/pods/", { recursive: true, resourceVersion: "0", predicate: pred })
    const eager = new Recorder()
    const slow = new Recorder()
    slow.full = true
    const stopEager = await sinkWatch(cacher, eager, { resourceVersion: "0", predicate: pred })
    const stopSlow = await sinkWatch(cacher, slow, { resourceVersion: rv, predicate: pred })
    for (let i = 0; i < 8; i++) {
      const color = i % 3 === 0 ? "blue" : "red"
      await run(
        store.guaranteedUpdate("/pods/ns/a", {
          tryUpdate: (o) =>
            Effect.succeed({ object: { ...o, metadata: { ...o.metadata, labels: { color } }, spec: { n: i } } })
        })
      )
    }
    await run(store.delete("/pods/ns/a"))
    // ADDED a; each update leaves, enters or stays in the selector (8 events); the delete
    const expected = await streamed.next(1 + 8 + 1, 15_000)
    await until(() => eager.events.length >= expected.length, "the eager sink")
    expect(eager.events.map((e) => [e.type, (e.object as KubeObject).metadata.resourceVersion])).toEqual(
      expected.map((e) => [e.type, (e.object as KubeObject).metadata.resourceVersion])
    )
    // the full sink took the first event it was given and nothing after it
    await until(() => slow.events.length >= 1, "the slow sink's first event")
    await new Promise((r) => setTimeout(r, 100))
    expect(slow.events).toHaveLength(1)
    slow.full = false
    slow.handle!.resume()
    await until(() => slow.events.length >= expected.length - 1, "the slow sink after resume")
    expect(slow.events.map((e) => e.type)).toEqual(expected.slice(1).map((e) => e.type))
    expect(eager.ends + slow.ends).toBe(0)
    await stopEager()
    await stopSlow()
    expect([eager.ends, slow.ends]).toEqual([1, 1])
    expect(cacher.internals.watcherCount()).toBe(1)
    await streamed.stop()
    await close()
  })

  it("a sink that never resumes is terminated without an ERROR; the others get every event", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store)
    const rv = (await run(cacher.getCurrentResourceVersion)).toString()
    const reader = new Recorder()
    const stuck = new Recorder()
    stuck.full = true
    const stops = [
      await sinkWatch(cacher, reader, { resourceVersion: rv }),
      await sinkWatch(cacher, stuck, { resourceVersion: rv })
    ]
    for (let i = 0; i < 300; i++) await run(store.create(`/pods/ns/p${String(i).padStart(3, "0")}`, pod("ns", `p${i}`)))
    await until(() => reader.events.length >= 300, "the reader")
    expect(reader.names()).toEqual(Array.from({ length: 300 }, (_, i) => `ADDED p${i}`))
    expect(stuck.ends).toBe(1)
    expect(stuck.events.every((e) => e.type !== "ERROR")).toBe(true)
    // 1 pushed, then at most input + result capacity waiting: never more
    expect(stuck.events.length).toBe(1)
    expect(cacher.internals.terminatedCount()).toBe(1)
    expect(cacher.internals.watcherCount()).toBe(1)
    for (const s of stops) await s()
    await close()
  })

  it("an RV the cache cannot serve is one ERROR and the end; closing the Cacher ends every sink", async () => {
    const { store } = ours().newStore()
    // a write first: the cache lists above RV 1 whatever ran on the server before (alone or
    // first in a shuffled run, the server was at 1, and RV 1 was servable)
    await run(store.create("/pods/ns/first", pod("ns", "first")))
    const { cacher, close } = await cacherOver(store)
    const tooOld = new Recorder()
    await sinkWatch(cacher, tooOld, { resourceVersion: "1" })
    expect(tooOld.events).toHaveLength(1)
    expect(tooOld.events[0]).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } })
    expect(tooOld.ends).toBe(1)
    const open = Array.from({ length: 3 }, () => new Recorder())
    for (const r of open) await sinkWatch(cacher, r, { resourceVersion: "0" })
    await close()
    expect(open.map((r) => r.ends)).toEqual([1, 1, 1])
    expect(cacher.internals.watcherCount()).toBe(0)
  })

  it("a Storage without a sink face (the etcd3 store) is watched into a sink by one fiber that waits for resume", async () => {
    const { store } = ours().newStore()
    const rv = (await run(store.getCurrentResourceVersion)).toString()
    const rec = new Recorder()
    rec.full = true
    const stop = await sinkWatch(store, rec, { resourceVersion: rv })
    await run(store.create("/pods/ns/q0", pod("ns", "q0")))
    await until(() => rec.events.length >= 1, "the first push")
    const before = rec.events.length
    for (let i = 1; i < 6; i++) await run(store.create(`/pods/ns/q${i}`, pod("ns", `q${i}`)))
    await new Promise((r) => setTimeout(r, 200))
    expect(rec.events.length).toBe(before)
    rec.full = false
    rec.handle!.resume()
    await until(() => rec.events.length >= 6, "the rest")
    expect(rec.names()).toEqual(Array.from({ length: 6 }, (_, i) => `ADDED q${i}`))
    await stop()
    expect(rec.ends).toBe(1)
  })

  it("10,000 sink watchers over 10 namespaces each get every event of theirs, in order", async () => {
    const { store } = ours().newStore()
    const { cacher, close } = await cacherOver(store)
    const rv = (await run(cacher.getCurrentResourceVersion)).toString()
    const recs = Array.from({ length: 10_000 }, () => new Recorder())
    const stops = await Promise.all(
      recs.map((r, i) => sinkWatch(cacher, r, { resourceVersion: rv }, `/pods/ns${i % 10}/`))
    )
    expect(cacher.internals.watcherCount()).toBe(10_000)
    for (let i = 0; i < 50; i++)
      await run(store.create(`/pods/ns${i % 10}/o${String(i).padStart(2, "0")}`, pod(`ns${i % 10}`, `o${i}`)))
    await until(() => recs.every((r) => r.events.length >= 5), "every watcher's 5 events")
    recs.forEach((r, i) =>
      expect(r.names()).toEqual(Array.from({ length: 5 }, (_, k) => `ADDED o${(i % 10) + 10 * k}`))
    )
    await Promise.all(stops.map((s) => s()))
    expect(cacher.internals.watcherCount()).toBe(0)
    await close()
  })
})
