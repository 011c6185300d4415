/**
 * The etcd2 watcher on etcd 3.4 --enable-v2: each v2 action (create, set, compareAndSwap, delete,
 * compareAndDelete, expire) with and without a predicate, initial state at RV 0, TTL expiry, the
 * 401 → 410 ERROR, resuming after dropped connections, and the bounded buffers with their
 * high-water marks.
 */
import { Effect, Fiber, Logger, LogLevel, Metric, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encodeObject } from "../../../src/kubernetes/api/codec.js"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import { etcdWatcher, INCOMING_BUF_SIZE, OUTGOING_BUF_SIZE } from "../../../src/kubernetes/etcd2/etcd-watcher.js"
import {
  incomingHighWaterMarkGauge,
  makeWatcherMarks,
  outgoingHighWaterMarkGauge
} from "../../../src/kubernetes/etcd2/high-water-mark.js"
import type { KeysClientShape } from "../../../src/kubernetes/etcd2/keys-client.js"
import type { ListOptions } from "../../../src/kubernetes/storage/interfaces.js"
import { type EtcdProcess, skipEtcd } from "../../support/etcd.js"
import { FaultProxy } from "../../support/fault-proxy.js"
import { Everything, pod, predicate, Watching } from "../storage/conformance/support.js"
import { keysClient, newStore, runKeys, startEtcdV2, until } from "./support.js"

const text = (o: KubeObject) => new TextDecoder().decode(encodeObject(o))
const at = (o: KubeObject, index: number): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, resourceVersion: String(index) }
})
const labelled = (name: string, labels: Record<string, string>) => pod("ns", name, { labels })

let dirs = 0
const freshDir = () => `/etcd2-watch-${Date.now().toString(36)}-${dirs++}`

const watch = (keys: KeysClientShape, dir: string, rv: number, options: ListOptions = {}) =>
  new Watching(etcdWatcher({ keys }, dir, rv, { recursive: true, ...options }))

describe.skipIf(skipEtcd)("etcd2 watcher on etcd 3.4 --enable-v2", () => {
  let etcd: EtcdProcess
  let keys: KeysClientShape
  beforeAll(async () => {
    etcd = await startEtcdV2()
    keys = keysClient(etcd.clientUrl)
  })
  afterAll(async () => {
    await etcd?.dispose()
  })

  /** the index a watch "from now" starts after */
  const now = async () => (await runKeys(keys.set("/etcd2-clock", "t"))).node.modifiedIndex

  it("every action without a predicate: create/set(new) ADDED, set/compareAndSwap MODIFIED, delete/compareAndDelete/expire DELETED", async () => {
    const dir = freshDir()
    const w = watch(keys, dir, await now())
    const a1 = pod("ns", "a")
    const a2 = labelled("a", { v: "2" })
    const a3 = labelled("a", { v: "3" })
    const c = await runKeys(keys.create(`${dir}/a`, text(a1)))
    const s = await runKeys(keys.set(`${dir}/a`, text(a2)))
    const cas = await runKeys(keys.compareAndSwap(`${dir}/a`, text(a3), { prevIndex: s.node.modifiedIndex }))
    const b = pod("ns", "b")
    const sb = await runKeys(keys.set(`${dir}/b`, text(b)))
    const d = await runKeys(keys.delete(`${dir}/a`))
    const cad = await runKeys(keys.compareAndDelete(`${dir}/b`, { prevIndex: sb.node.modifiedIndex }))
    const t = pod("ns", "t")
    const ct = await runKeys(keys.create(`${dir}/t`, text(t), { ttl: 1 }))
    const events = await w.next(8)
    const expire = events[7]!
    expect(events.slice(0, 7)).toEqual<Array<WatchEvent>>([
      { type: "ADDED", object: at(a1, c.node.modifiedIndex) },
      { type: "MODIFIED", object: at(a2, s.node.modifiedIndex) },
      { type: "MODIFIED", object: at(a3, cas.node.modifiedIndex) },
      { type: "ADDED", object: at(b, sb.node.modifiedIndex) },
      { type: "DELETED", object: at(a3, d.node.modifiedIndex) },
      { type: "DELETED", object: at(b, cad.node.modifiedIndex) },
      { type: "ADDED", object: at(t, ct.node.modifiedIndex) }
    ])
    // TTL expiry: DELETED with the last state at the expiry's index
    expect(expire.type).toBe("DELETED")
    expect(BigInt((expire.object as KubeObject).metadata.resourceVersion!)).toBeGreaterThan(
      BigInt(ct.node.modifiedIndex)
    )
    expect({
      ...(expire.object as KubeObject),
      metadata: { ...(expire.object as KubeObject).metadata, resourceVersion: undefined }
    }).toEqual({ ...t, metadata: { ...t.metadata, resourceVersion: undefined } })
    await w.none(100)
    await w.stop()
  })

  it("every action with a predicate: entering is ADDED, leaving is DELETED (old object at the new index), outside is nothing", async () => {
    const dir = freshDir()
    const w = watch(keys, dir, await now(), { predicate: predicate({ label: "in=yes" }) })
    const yes = (name: string, v = "1") => labelled(name, { in: "yes", v })
    const no = (name: string, v = "1") => labelled(name, { in: "no", v })
    await runKeys(keys.create(`${dir}/out`, text(no("out")))) // create outside: nothing
    const c = await runKeys(keys.create(`${dir}/a`, text(yes("a")))) // create inside: ADDED
    const s1 = await runKeys(keys.set(`${dir}/a`, text(yes("a", "2")))) // set in → in: MODIFIED
    const s2 = await runKeys(keys.set(`${dir}/a`, text(no("a", "3")))) // set in → out: DELETED(old)
    await runKeys(keys.set(`${dir}/a`, text(no("a", "4")))) // set out → out: nothing
    const cas1 = await runKeys(keys.compareAndSwap(`${dir}/a`, text(yes("a", "5")), { prevValue: text(no("a", "4")) })) // out → in: ADDED
    const cas2 = await runKeys(
      keys.compareAndSwap(`${dir}/a`, text(no("a", "6")), { prevIndex: cas1.node.modifiedIndex })
    ) // in → out: DELETED
    const cas3 = await runKeys(
      keys.compareAndSwap(`${dir}/a`, text(yes("a", "7")), { prevIndex: cas2.node.modifiedIndex })
    ) // out → in: ADDED
    const d = await runKeys(keys.delete(`${dir}/a`)) // delete inside: DELETED
    await runKeys(keys.compareAndDelete(`${dir}/out`, { prevValue: text(no("out")) })) // delete outside: nothing
    await runKeys(keys.create(`${dir}/tno`, text(no("tno")), { ttl: 1 })) // expires outside: nothing
    const ty = await runKeys(keys.create(`${dir}/tyes`, text(yes("tyes")), { ttl: 1 })) // ADDED, then expiry DELETED
    const events = await w.next(8)
    expect(events.slice(0, 7)).toEqual<Array<WatchEvent>>([
      { type: "ADDED", object: at(yes("a"), c.node.modifiedIndex) },
      { type: "MODIFIED", object: at(yes("a", "2"), s1.node.modifiedIndex) },
      { type: "DELETED", object: at(yes("a", "2"), s2.node.modifiedIndex) },
      { type: "ADDED", object: at(yes("a", "5"), cas1.node.modifiedIndex) },
      { type: "DELETED", object: at(yes("a", "5"), cas2.node.modifiedIndex) },
      { type: "ADDED", object: at(yes("a", "7"), cas3.node.modifiedIndex) },
      { type: "DELETED", object: at(yes("a", "7"), d.node.modifiedIndex) }
    ])
    expect(events[7]!.type).toBe("ADDED")
    expect((events[7]!.object as KubeObject).metadata.name).toBe("tyes")
    const [expired] = await w.next(1)
    expect(expired!.type).toBe("DELETED")
    expect((expired!.object as KubeObject).metadata.name).toBe("tyes")
    expect(Number((expired!.object as KubeObject).metadata.resourceVersion)).toBeGreaterThan(ty.node.modifiedIndex)
    await w.none(100)
    await w.stop()
  })

  it("resourceVersion 0: the current objects in key order (each at its modifiedIndex; ADDED, or MODIFIED when changed since created, as seed 001's sendAdd), then changes after the list's X-Etcd-Index", async () => {
    const dir = freshDir()
    const a = await runKeys(keys.create(`${dir}/ns/a`, text(pod("ns", "a"))))
    const b0 = await runKeys(keys.create(`${dir}/ns/b`, text(pod("ns", "b"))))
    const b1 = await runKeys(
      keys.compareAndSwap(`${dir}/ns/b`, text(labelled("b", { x: "1" })), { prevIndex: b0.node.modifiedIndex })
    )
    const w = watch(keys, dir, 0)
    // in key order (a sorted recursive get)
    expect(await w.next(2)).toEqual([
      { type: "ADDED", object: at(pod("ns", "a"), a.node.modifiedIndex) },
      { type: "MODIFIED", object: at(labelled("b", { x: "1" }), b1.node.modifiedIndex) }
    ])
    const d = await runKeys(keys.delete(`${dir}/ns/a`))
    expect(await w.next(1)).toEqual([{ type: "DELETED", object: at(pod("ns", "a"), d.node.modifiedIndex) }])
    await w.stop()
    // an empty (absent) directory: no initial events, the index of the "not found" answer
    const empty = watch(keys, freshDir(), 0)
    await empty.none(100)
    await empty.stop()
  })

  it("a list watch leaves out its own directory key (etcd_helper's include = exceptKey): a value written at it is no event", async () => {
    const t = newStore(keys)
    const start = await Effect.runPromise(t.store.getCurrentResourceVersion)
    const w = await Watching.start(t.store, "/pods/", { recursive: true, resourceVersion: start.toString() })
    // the directory's own key as a plain value (v2 reports it to a recursive watch of that key)
    await runKeys(keys.set(`${t.pathPrefix}/pods`, text(pod("ns", "dir"))))
    await runKeys(keys.delete(`${t.pathPrefix}/pods`))
    const c = await Effect.runPromise(t.store.create("/pods/ns/a", pod("ns", "a")))
    expect(await w.next(1)).toEqual([{ type: "ADDED", object: c }])
    await w.none(100)
    await w.stop()
  })

  it("a waitIndex older than etcd's 1000-event history: one ERROR with 410 Expired, then the end", async () => {
    const dir = freshDir()
    const start = await now()
    await runKeys(keys.create(`${dir}/a`, text(pod("ns", "a"))))
    for (let i = 0; i < 1005; i++) await runKeys(keys.set("/etcd2-filler", String(i)))
    const w = watch(keys, dir, start + 1) // the create at start+1 is out of the window too
    const events = await w.ended()
    expect(events).toHaveLength(1)
    expect(events[0]!.type).toBe("ERROR")
    const status = events[0]!.object as { code: number; reason: string; status: string; message: string }
    expect(status).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", code: 410, reason: "Expired" })
    expect(status.message).toMatch(
      /^401: The event in requested index is outdated and cleared \(the requested history has been cleared \[\d+\/\d+\]\) \[\d+\]$/
    )
  })

  it("dropped connections mid-wait and torn responses: the watch resumes from the right index, nothing lost or repeated", async () => {
    const proxy = await FaultProxy.start("127.0.0.1", etcd.clientPort)
    try {
      const viaProxy = keysClient(`http://${proxy.endpoint}`)
      const dir = freshDir()
      const w = watch(viaProxy, dir, await now())
      const written: Array<number> = []
      const events: Array<WatchEvent> = []
      for (let i = 0; i < 20; i++) {
        written.push((await runKeys(keys.create(`${dir}/p${i}`, text(pod("ns", `p${i}`))))).node.modifiedIndex)
        events.push(...(await w.next(1)))
        // the next long poll is in flight: cut it; the next event must come through a new one from the same index
        await until(() => proxy.openConnections > 0, 20_000, "a long poll in flight")
        proxy.cutAll()
      }
      const cutsBefore = proxy.stats.cuts
      // then responses torn in the middle (headers or body)
      const stop = proxy.cutEachConnection({ seed: 7, minBytes: 100, maxBytes: 2500 })
      for (let i = 20; i < 40; i++)
        written.push((await runKeys(keys.create(`${dir}/p${i}`, text(pod("ns", `p${i}`))))).node.modifiedIndex)
      events.push(...(await w.next(20)))
      stop()
      expect(events.map((e) => e.type)).toEqual(Array(40).fill("ADDED"))
      expect(events.map((e) => Number((e.object as KubeObject).metadata.resourceVersion))).toEqual(written)
      expect(events.map((e) => (e.object as KubeObject).metadata.name)).toEqual(
        Array.from({ length: 40 }, (_, i) => `p${i}`)
      )
      await w.none(100)
      await w.stop()
      expect(cutsBefore).toBeGreaterThanOrEqual(20)
      expect(proxy.stats.cuts).toBeGreaterThan(cutsBefore)
    } finally {
      await proxy.close()
    }
  })

  it("buffers: a consumer that stops reading blocks the producer (bounded), each new high-water mark is logged once", async () => {
    const dir = freshDir()
    let polls = 0
    const counting: KeysClientShape = {
      ...keys,
      watch: (k, o) => Effect.tap(keys.watch(k, o), () => Effect.sync(() => polls++))
    }
    const marks = makeWatcherMarks()
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logs.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    const start = await now()
    const stream = etcdWatcher({ keys: counting, marks, typeMeta: { kind: "Pod" } }, dir, start, {
      recursive: true,
      predicate: Everything
    })
    // the consumer reads one event, then stops reading (it still holds the watch)
    const received: Array<WatchEvent> = []
    let reading = true
    let resume: () => void = () => {}
    const consumer = Effect.runFork(
      Stream.runForEach(stream, (e) =>
        Effect.suspend(() => {
          received.push(e)
          if (!reading) return Effect.void
          reading = false
          return Effect.async<void>((k) => {
            resume = () => k(Effect.void)
          })
        })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)), Logger.withMinimumLogLevel(LogLevel.Debug))
    )
    const total = 600
    const names = Array.from({ length: total }, (_, i) => `p${String(i).padStart(3, "0")}`)
    for (const name of names) await runKeys(keys.create(`${dir}/${name}`, text(pod("ns", name))))
    // outgoing fills up (translate then waits in emit), etcdIncoming behind it, and the producer stops asking etcd
    await until(() => marks.outgoing.value === OUTGOING_BUF_SIZE, 30_000, "the outgoing buffer full")
    await until(
      async () => {
        const before = polls
        await new Promise((r) => setTimeout(r, 200))
        return polls === before
      },
      30_000,
      "the producer to block"
    )
    // what is held: outgoing + the consumer's chunk + translate's batch + etcdIncoming + the poll being offered
    expect(polls).toBeLessThanOrEqual(OUTGOING_BUF_SIZE + OUTGOING_BUF_SIZE + 2 * INCOMING_BUF_SIZE + 1)
    expect(polls).toBeLessThan(total)
    expect(received).toHaveLength(1)
    // reading again: everything arrives, in order, once
    resume()
    await until(() => received.length === total, 30_000, "all events")
    expect(received.map((e) => (e.object as KubeObject).metadata.name)).toEqual(names)
    expect(polls).toBe(total)
    // translate found etcdIncoming full when it could take again
    expect(marks.incoming.value).toBe(INCOMING_BUF_SIZE - 1)
    // each new mark is logged once, rising
    const marksLogged = (re: RegExp) =>
      logs.flatMap((l) => {
        const m = re.exec(l)
        return m === null ? [] : [Number(m[1])]
      })
    const inc = marksLogged(/^watch: (\d+) objects queued in incoming channel\.$/)
    const out = marksLogged(/^watch \(Pod\): (\d+) objects queued in outgoing channel\.$/)
    for (const series of [inc, out]) {
      expect(series.length).toBeGreaterThan(0)
      for (let i = 1; i < series.length; i++) expect(series[i]!).toBeGreaterThan(series[i - 1]!)
    }
    expect(inc[inc.length - 1]).toBe(marks.incoming.value)
    expect(out[out.length - 1]).toBe(OUTGOING_BUF_SIZE)
    // and the process gauges report at least this watcher's marks
    expect((await Effect.runPromise(Metric.value(incomingHighWaterMarkGauge))).value).toBeGreaterThanOrEqual(
      marks.incoming.value
    )
    expect((await Effect.runPromise(Metric.value(outgoingHighWaterMarkGauge))).value).toBe(OUTGOING_BUF_SIZE)
    await Effect.runPromise(Fiber.interrupt(consumer))
  })
})
