/**
 * serverWatchStream over raw gRPC: the response kinds of etcd's v3rpc/watch.go field by field,
 * cancel flows, progress (requested and periodic), fragments, prev_kv, filters, half-close, and
 * the end of a stream at client cancel and at shutdown.
 */
import { Chunk } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventType } from "../../src/mvcc/key-value.js"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { makeHeader } from "../../src/server/header.js"
import { StreamState } from "../../src/server/watch-server.js"
import { FrameWriter } from "../../src/server/watch-wire.js"
import { serviceDefinition } from "../../src/proto/load.js"

const deserializeWatchResponse = serviceDefinition("Watch")["Watch"]!.responseDeserialize
import type { WatchResponse } from "../../src/watch/watcher.js"
import {
  call,
  eventually,
  type InProcessServer,
  rawClient,
  sleep,
  startInProcess,
  startMember
} from "./support/in-process.js"
import { RawWatch, text } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)

describe("Watch service", () => {
  let srv: InProcessServer
  let kv: ReturnType<typeof rawClient>
  const streams: Array<RawWatch> = []
  const open = () => {
    const w = new RawWatch(srv.endpoint)
    streams.push(w)
    return w
  }
  const put = async (k: string, v: string) =>
    Number((await call(kv, "Put", { key: b(k), value: b(v) })).header.revision)
  const rev = async () => Number((await call(kv, "Range", { key: b("\0") })).header.revision)

  beforeAll(async () => {
    srv = await startInProcess({ progressNotifyInterval: "250 millis" })
    kv = rawClient("KV", srv.endpoint)
  })
  afterAll(async () => {
    for (const w of streams) w.close()
    kv.close()
    await srv.close()
  })

  const expectHeader = (r: any, revision: number) => {
    expect(r.header.cluster_id).toBe(srv.server.clusterId.toString())
    expect(r.header.member_id).toBe(srv.server.memberId.toString())
    expect(r.header.raft_term).toBe("2")
    expect(r.header.revision).toBe(String(revision))
  }

  it("create OK, then synced events one revision per response", async () => {
    const w = open()
    const current = await rev()
    w.create({ key: b("s/"), range_end: b("s0") })
    const [created] = await w.waitFor(1)
    expect(created).toMatchObject({
      watch_id: "0",
      created: true,
      canceled: false,
      compact_revision: "0",
      cancel_reason: "",
      events: []
    })
    expectHeader(created, current)
    const r1 = await put("s/a", "1")
    const r2 = await put("s/b", "2")
    const [, e1, e2] = await w.waitFor(3)
    expectHeader(e1, r1)
    expectHeader(e2, r2)
    expect(e1).toMatchObject({ watch_id: "0", created: false, canceled: false })
    expect(e1.events).toHaveLength(1)
    expect(e1.events[0].type).toBe(EventType.PUT)
    expect(text(e1.events[0].kv.key)).toBe("s/a")
    expect(e1.events[0].kv.mod_revision).toBe(String(r1))
    expect(e1.events[0].kv.create_revision).toBe(String(r1))
    expect(e1.events[0].prev_kv).toBeNull()
  })

  it("catches up from a start revision: whole history in one batch stamped with the store revision", async () => {
    const first = await put("h/a", "1")
    await put("h/b", "2")
    await put("h/a", "3")
    const last = await put("other", "x")
    const w = open()
    w.create({ key: b("h/"), range_end: b("h0"), start_revision: first })
    const [created, batch] = await w.waitFor(2)
    expect(created.created).toBe(true)
    expectHeader(batch, last)
    expect(batch.events.map((e: any) => [text(e.kv.key), text(e.kv.value)])).toEqual([
      ["h/a", "1"],
      ["h/b", "2"],
      ["h/a", "3"]
    ])
  })

  it("fills prev_kv at send time for every event but a create, and applies filters", async () => {
    const w = open()
    w.create({ key: b("pk"), prev_kv: true, watch_id: 7 })
    w.create({ key: b("pk"), filters: [0], watch_id: 8 }) // NOPUT: deletes only
    await w.waitFor(2)
    await put("pk", "a")
    await put("pk", "b")
    await call(kv, "DeleteRange", { key: b("pk") })
    await w.waitForEvents(4)
    const of = (id: string) => w.responses.filter((r) => r.watch_id === id).flatMap((r) => r.events)
    const seven = of("7")
    expect(seven.map((e: any) => e.type)).toEqual([0, 0, 1])
    expect(seven[0].prev_kv).toBeNull()
    expect(text(seven[1].prev_kv.value)).toBe("a")
    expect(text(seven[2].prev_kv.value)).toBe("b")
    expect(seven[2].kv.create_revision).toBe("0")
    const eight = of("8")
    expect(eight.map((e: any) => e.type)).toEqual([1])
  })

  it("failed creates: negative revision, empty range, duplicate id — created+canceled, watch id -1", async () => {
    const w = open()
    const current = await rev()
    w.create({ key: b("x"), start_revision: -1 })
    w.create({ key: b("z"), range_end: b("a") })
    w.create({ key: b("x"), watch_id: 5 })
    w.create({ key: b("y"), watch_id: 5 })
    const [neg, empty, ok, dup] = await w.waitFor(4)
    expect(neg).toMatchObject({
      watch_id: "-1",
      created: true,
      canceled: true,
      cancel_reason: "etcdserver: mvcc: required revision has been compacted"
    })
    expectHeader(neg, current)
    expect(empty).toMatchObject({
      watch_id: "-1",
      created: true,
      canceled: true,
      cancel_reason: "mvcc: watcher range is empty"
    })
    expect(ok).toMatchObject({ watch_id: "5", created: true, canceled: false })
    expect(dup).toMatchObject({
      watch_id: "-1",
      created: true,
      canceled: true,
      cancel_reason: "mvcc: duplicate watch ID provided on the WatchStream"
    })
  })

  it("cancel: acknowledged with the store revision, nothing after it; an unknown id gets no response", async () => {
    const w = open()
    w.create({ key: b("c/"), range_end: b("c0") })
    await w.waitFor(1)
    await put("c/1", "x")
    await w.waitFor(2)
    w.cancel(99) // unknown: no answer
    w.cancel(0)
    const [, , ack] = await w.waitFor(3)
    const current = await rev()
    expect(ack).toMatchObject({ watch_id: "0", created: false, canceled: true, events: [] })
    expectHeader(ack, current)
    await put("c/2", "y")
    // a second, live watcher proves the stream still works and nothing came for the cancelled one
    w.create({ key: b("c/"), range_end: b("c0") })
    await w.waitFor(4)
    await put("c/3", "z")
    await w.waitFor(5)
    await sleep(50)
    expect(w.responses).toHaveLength(5)
    expect(w.responses[3]).toMatchObject({ watch_id: "1", created: true })
    expect(text(w.responses[4].events[0].kv.key)).toBe("c/3")
  })

  it("compaction: created first, then canceled with compact_revision and header revision 0", async () => {
    const r1 = await put("cmp", "1")
    await put("cmp", "2")
    const r3 = await put("cmp", "3")
    await call(kv, "Compact", { revision: r3 })
    const w = open()
    w.create({ key: b("cmp"), start_revision: r1 })
    const [created, compacted] = await w.waitFor(2)
    expect(created).toMatchObject({ watch_id: "0", created: true, canceled: false })
    expect(compacted).toMatchObject({
      watch_id: "0",
      created: false,
      canceled: true,
      compact_revision: String(r3),
      events: []
    })
    expect(compacted.header.revision).toBe("0")
    expect(compacted.header.member_id).toBe(srv.server.memberId.toString())
  })

  it("requested progress: one watch id -1 response when every watcher is synced, none otherwise", async () => {
    const none = open()
    none.progress() // a stream without watchers gets nothing
    const w = open()
    w.create({ key: b("prog") })
    await w.waitFor(1)
    const r = await put("unrelated", "1")
    w.progress()
    const [, progress] = await w.waitFor(2)
    expect(progress).toMatchObject({ watch_id: "-1", created: false, canceled: false, events: [] })
    expectHeader(progress, r)

    const future = open()
    future.create({ key: b("prog"), start_revision: r + 1000 })
    await future.waitFor(1)
    future.progress() // its watcher waits for a future revision: not synced, so nothing
    await sleep(300)
    expect(future.responses).toHaveLength(1)
    expect(none.responses).toHaveLength(0)
  })

  it("periodic progress per watcher, skipped for a watcher that got events in the interval", async () => {
    const w = open()
    w.create({ key: b("quiet"), progress_notify: true, watch_id: 1 })
    w.create({ key: b("busy"), progress_notify: true, watch_id: 2 })
    await w.waitFor(2)
    let busy = true
    const writer = (async () => {
      while (busy) {
        await put("busy", "x")
        await sleep(20)
      }
    })()
    // ticks every 250 ms (+ up to 25 ms jitter); the busy key changes every ~20 ms. Three of the
    // quiet watcher's progress responses are waited for (a loaded machine ticks late, not never).
    const quietProgress = () => w.responses.filter((r) => r.watch_id === "1" && !r.created && r.events.length === 0)
    while (quietProgress().length < 3) await sleep(20)
    busy = false
    await writer
    const busyProgress = w.responses.filter((r) => r.watch_id === "2" && !r.created && r.events.length === 0)
    expect(busyProgress.length).toBe(0)
    for (const p of quietProgress()) expect(Number(p.header.revision)).toBeGreaterThan(0)
  })

  it("keeps serving after the client half-closes its side", async () => {
    const w = open()
    w.create({ key: b("hc") })
    await w.waitFor(1)
    w.call.end()
    await sleep(50)
    await put("hc", "1")
    const [, ev] = await w.waitFor(2)
    expect(text(ev.events[0].kv.value)).toBe("1")
    expect(w.ended).toBe(false)
  })

  it("many watchers on one stream: created responses in request order with ids 0, 1, 2, …", async () => {
    const w = open()
    for (let i = 0; i < 50; i++) w.create({ key: b(`many/${i}`) })
    const rs = await w.waitFor(50)
    expect(rs.map((r) => r.watch_id)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)))
    await call(kv, "Txn", {
      success: Array.from({ length: 50 }, (_, i) => ({ request_put: { key: b(`many/${i}`), value: b("v") } }))
    })
    await w.waitFor(100)
    const ids = w.responses
      .slice(50)
      .map((r) => Number(r.watch_id))
      .sort((a, c) => a - c)
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => i))
  })

  it("client cancel ends the server side of the stream", async () => {
    const before = srv.server.calls().streams
    const w = new RawWatch(srv.endpoint)
    w.create({ key: b("bye") })
    await w.waitFor(1)
    expect(srv.server.calls().streams).toBe(before + 1)
    w.close()
    await eventually(() => srv.server.calls().streams === before, 2000, "stream fiber to end")
  })
})

describe("Watch fragments", () => {
  it("splits a response larger than max-request-bytes + 512 KiB when asked to, ≥ 1 event per piece", async () => {
    const srv = await startInProcess({ maxRequestBytes: 200_000 })
    const kv = rawClient("KV", srv.endpoint)
    const value = Buffer.alloc(1500, 120)
    try {
      // one revision per 100 keys: fragments may split a revision
      for (let t = 0; t < 6; t++) {
        await call(kv, "Txn", {
          success: Array.from({ length: 100 }, (_, i) => ({
            request_put: { key: b(`f/${String(t * 100 + i).padStart(3, "0")}`), value }
          }))
        })
      }
      const whole = new RawWatch(srv.endpoint)
      const pieces = new RawWatch(srv.endpoint, { bytes: true })
      try {
        whole.create({ key: b("f/"), range_end: b("f0"), start_revision: 1 })
        pieces.create({ key: b("f/"), range_end: b("f0"), start_revision: 1, fragment: true })
        await whole.waitForEvents(600)
        await pieces.waitForEvents(600)
        expect(whole.responses).toHaveLength(2)
        const frags = pieces.responses.slice(1)
        expect(frags.length).toBeGreaterThan(1)
        expect(frags.map((r) => r.fragment)).toEqual([...frags.slice(1).map(() => true), false])
        const limit = 200_000 + 512 * 1024
        frags.forEach((f, i) => {
          expect(f.events.length).toBeGreaterThanOrEqual(1)
          expect(f.header.revision).toBe(frags[0].header.revision)
          expect(f.watch_id).toBe("0")
          // every piece stays under the limit, and could not have taken one more event
          const size = pieces.sizes[i + 1]!
          expect(size).toBeLessThan(limit)
          if (i < frags.length - 1) expect(size + 1500 + 20).toBeGreaterThanOrEqual(limit)
        })
        const keys = frags.flatMap((r) => r.events.map((e: any) => text(e.kv.key)))
        expect(keys).toEqual(whole.responses[1].events.map((e: any) => text(e.kv.key)))
      } finally {
        whole.close()
        pieces.close()
      }
    } finally {
      kv.close()
      await srv.close()
    }
  })
})

describe("Watch at shutdown", () => {
  it("ends open streams with Unavailable 'etcdserver: server stopped'", async () => {
    const srv = await startInProcess()
    const w = new RawWatch(srv.endpoint)
    w.create({ key: b("k") })
    await w.waitFor(1)
    await srv.close()
    await eventually(() => w.error !== undefined, 3000, "stream error")
    expect(w.error!.code).toBe(14)
    expect(w.error!.details).toBe("etcdserver: server stopped")
    w.close()
  })
})

describe("send-loop ordering (StreamState)", () => {
  const store = { getAt: () => undefined } as unknown as MvccStoreShape
  const header = makeHeader({ clusterId: 1n, memberId: 2n, raftTerm: 3n })
  const ev = (id: number, rev: number): WatchResponse => ({
    watchId: id,
    revision: rev,
    compactRevision: 0,
    events: [
      { type: 0, kv: { key: b("k"), createRevision: rev, modRevision: rev, version: 1, value: b("v"), lease: 0n } }
    ]
  })

  const live = new Set<number>()
  const watchers = { ids: () => [...live], prevKv: () => false }

  /** What the StreamState wrote, decoded as a client would (ids as numbers). */
  const collect = () => {
    const out = new FrameWriter()
    const got: Array<{ watch_id: number; created: boolean; canceled: boolean; events: Array<unknown> }> = []
    const list = () => {
      for (const m of out.takeMessages()) {
        const r = deserializeWatchResponse(m) as any
        got.push({ ...r, watch_id: Number(r.watch_id) })
      }
      return got
    }
    return { out, list }
  }

  it("holds responses until the created response, drops them after the cancel response, never holds -1", () => {
    const s = new StreamState(watchers, store, header, 1 << 20)
    const { out, list } = collect()
    live.add(3)
    s.onEvents(Chunk.make(ev(3, 5), ev(3, 6), { watchId: -1, revision: 6, compactRevision: 0, events: [] }), out)
    expect(list().map((r) => r.watch_id)).toEqual([-1])
    s.onCtrl(3, "created", { watch_id: 3, created: true }, out)
    expect(list().map((r) => [r.watch_id, r.created, r.events.length])).toEqual([
      [-1, false, 0],
      [3, true, 0],
      [3, false, 1],
      [3, false, 1]
    ])
    s.onEvents(Chunk.make(ev(3, 7)), out)
    expect(list()).toHaveLength(5)
    live.delete(3)
    s.onCtrl(3, "canceled", { watch_id: 3, canceled: true }, out)
    s.onEvents(Chunk.make(ev(3, 8)), out)
    expect(list()).toHaveLength(6)
    expect(s.pending.size).toBe(0)
  })

  it("progress flags: an event response clears the flag, a tick asks only quiet watchers and resets all", () => {
    const s = new StreamState(watchers, store, header, 1 << 20)
    const { out } = collect()
    live.add(1).add(2)
    s.announced.add(1).add(2)
    s.progress.set(1, true).set(2, true)
    s.onEvents(Chunk.make(ev(2, 5)), out)
    expect(s.onTick()).toEqual([1])
    expect(s.onTick()).toEqual([1, 2])
  })
})

describe("Watch back-pressure", () => {
  it("a client that stops reading holds the send loop; its watcher becomes slow, then catches up losing nothing", async () => {
    const m = await startMember()
    const kv = rawClient("KV", m.endpoint)
    const w = new RawWatch(m.endpoint)
    try {
      w.create({ key: b("bp/"), range_end: b("bp0") })
      await w.waitFor(1)
      w.call.pause()
      const value = Buffer.alloc(4096, 97)
      const writes = 400
      for (let i = 0; i < writes; i++) await call(kv, "Put", { key: b(`bp/${i % 10}`), value })
      // the send loop is blocked on 'drain': the channel filled and the watcher left the synced group
      expect(m.watchable.slowWatcherCount()).toBe(1)
      expect(m.watchable.pendingEventsCount()).toBeLessThanOrEqual(128)
      expect(w.responses.length).toBeLessThan(writes)
      w.call.resume()
      const events = await w.waitForEvents(writes, 10_000)
      const revs = events.map((e: any) => Number(e.kv.mod_revision))
      expect(revs).toEqual([...revs].sort((x, y) => x - y))
      expect(new Set(revs).size).toBe(writes)
      expect(revs[revs.length - 1]! - revs[0]!).toBe(writes - 1)
      await eventually(() => m.watchable.slowWatcherCount() === 0, 5000, "watcher to be synced again")
    } finally {
      w.close()
      kv.close()
      await m.close()
    }
  })
})
