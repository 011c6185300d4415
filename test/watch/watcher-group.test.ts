import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { EventType, type Event } from "../../src/mvcc/key-value.js"
import { EventBatch, newWatcherBatch } from "../../src/watch/event-batch.js"
import { WatcherGroup } from "../../src/watch/watcher-group.js"
import { filterMask, FilterType, type WatchResponse, Watcher } from "../../src/watch/watcher.js"

/** A sink recording offers, refusing once `capacity` responses are held (a tiny stand-in channel). */
const sink = (capacity = Infinity) => {
  const got: Array<WatchResponse> = []
  return { got, offer: (r: WatchResponse) => (got.length < capacity ? (got.push(r), true) : false) }
}

let nextId = 1
const watcher = (key: string, end: string | undefined, minRev = 1, s = sink(), filter = 0) =>
  new Watcher(key, end, minRev, minRev, nextId++, filter, false, s)

const put = (key: string, rev: number): Event => ({
  type: EventType.PUT,
  kv: {
    key: Buffer.from(key, "latin1"),
    createRevision: rev,
    modRevision: rev,
    version: 1,
    value: new Uint8Array(),
    lease: 0n
  }
})
const del = (key: string, rev: number): Event => ({
  type: EventType.DELETE,
  kv: {
    key: Buffer.from(key, "latin1"),
    createRevision: 0,
    modRevision: rev,
    version: 0,
    value: new Uint8Array(),
    lease: 0n
  }
})
const keyOf = (e: Event) => Buffer.from(e.kv.key).toString("latin1")

const spec = fc.record({
  key: fc.stringMatching(/^[ab]{1,2}$/),
  kind: fc.constantFrom("key", "range", "fromKey"),
  end: fc.stringMatching(/^[ab]{1,3}$/)
})

describe("WatcherGroup", () => {
  it.prop(
    "forEachMatch visits exactly the watchers whose range holds the key, once each, across adds and deletes (ordered or not)",
    [
      fc.array(spec, { maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      fc.stringMatching(/^[ab]{1,3}$/),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 10 })
    ],
    ([specs, deletions, point, ordered, readds]) => {
      const g = new WatcherGroup({ ordered })
      const all = specs
        .filter((s) => s.kind !== "range" || s.key < s.end)
        .map((s) => watcher(s.key, s.kind === "key" ? undefined : s.kind === "fromKey" ? "" : s.end))
      all.forEach((w) => g.add(w))
      const live = new Set(all)
      for (const d of deletions) {
        if (all.length === 0) break
        const w = all[d % all.length]!
        expect(g.delete(w)).toBe(live.delete(w))
      }
      // adding a member again changes nothing; adding a deleted one back makes it a member again
      for (const r of readds) {
        if (all.length === 0) break
        const w = all[r % all.length]!
        g.add(w)
        live.add(w)
      }
      expect(g.size).toBe(live.size)
      for (const w of all) expect(g.has(w)).toBe(live.has(w))
      expect(new Set(g.watchers)).toEqual(live)
      const seen: Array<Watcher> = []
      g.forEachMatch(point, (w) => seen.push(w))
      const want = [...live].filter((w) => w.matches(point))
      expect(new Set(seen).size).toBe(seen.length)
      expect(new Set(seen)).toEqual(new Set(want))
      expect(g.contains(point)).toBe(want.length > 0)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("watchers of the same interval share one tree node", () => {
    const g = new WatcherGroup()
    const ws = Array.from({ length: 5 }, () => watcher("a", "b"))
    ws.forEach((w) => g.add(w))
    g.add(watcher("a", ""))
    expect(g.intervalCount).toBe(2)
    ws.forEach((w) => g.delete(w))
    expect(g.intervalCount).toBe(1)
  })

  it("choose takes at most maxWatchers, rotates with requeue, and returns the minimum minRev", () => {
    const g = new WatcherGroup()
    const ws = [5, 3, 9, 4].map((r) => watcher("k", undefined, r))
    ws.forEach((w) => g.add(w))
    const first = g.choose(2, 10, -1)
    expect([...first.group.watchers]).toEqual([ws[0], ws[1]])
    expect(first.minRev).toBe(3)
    g.requeue(ws[0]!)
    g.requeue(ws[1]!)
    const second = g.choose(2, 10, -1)
    expect([...second.group.watchers]).toEqual([ws[2], ws[3]])
    expect(second.minRev).toBe(4)
    expect(g.choose(512, 10, -1).group.size).toBe(4)
  })

  it("choose sends the compaction response and removes compacted watchers from the group (etcd #22294 fixed)", () => {
    const g = new WatcherGroup()
    const full = sink(0)
    const behind = watcher("k", undefined, 2)
    const stuck = watcher("k", undefined, 3, full)
    const ok = watcher("k", undefined, 7)
    ;[behind, stuck, ok].forEach((w) => g.add(w))
    const { group, minRev, compacted } = g.choose(1, 10, 5)
    // only `behind` was chosen (max 1): it gets {compactRevision: 5, revision: 0} and leaves both groups
    expect(compacted).toBe(1)
    expect(group.size).toBe(0)
    expect(minRev).toBe(Number.MAX_SAFE_INTEGER)
    expect(g.has(behind)).toBe(false)
    expect(behind.state).toBe("compacted")
    expect((behind.sink as ReturnType<typeof sink>).got).toEqual([
      { watchId: behind.id, events: [], revision: 0, compactRevision: 5 }
    ])
    // `stuck` cannot get its response (full channel): it stays for a retry and is not counted in minRev
    const again = g.choose(512, 10, 5)
    expect(again.compacted).toBe(0)
    expect(g.has(stuck)).toBe(true)
    expect(again.minRev).toBe(7)
    // a second round does not send `behind` a duplicate
    expect((behind.sink as ReturnType<typeof sink>).got.length).toBe(1)
  })
})

describe("WatcherGroup.choose fairness", () => {
  it("watchers stuck on an unsendable compaction response move to the back and do not starve the others", () => {
    const g = new WatcherGroup()
    const stuck = [1, 2, 3].map(() => watcher("k", undefined, 2, sink(0)))
    const ok = watcher("k", undefined, 8)
    ;[...stuck, ok].forEach((w) => g.add(w))
    const first = g.choose(2, 10, 5)
    expect(first.group.size).toBe(0) // two stuck ones: nothing to read this round
    expect(first.minRev).toBe(Number.MAX_SAFE_INTEGER)
    const second = g.choose(2, 10, 5)
    expect(second.group.has(ok)).toBe(true)
    expect(second.minRev).toBe(8)
  })
})

describe("EventBatch", () => {
  it("holds at most maxRevs distinct revisions, never splits one, and records moreRev", () => {
    const eb = new EventBatch(2)
    for (const e of [put("a", 2), put("b", 2), put("a", 3), put("a", 4), put("b", 4), put("a", 5)]) eb.add(e)
    expect(eb.evs.map((e) => e.kv.modRevision)).toEqual([2, 2, 3])
    expect(eb.revs).toBe(3)
    expect(eb.moreRev).toBe(4)
    expect(eb.full).toBe(true)
  })

  it("newWatcherBatch maps events to matching watchers at or after their minRev (TestWatchBatchUnsynced shape)", () => {
    const g = new WatcherGroup()
    const a = watcher("a", undefined, 3)
    const all = watcher("a", "", 1)
    g.add(a)
    g.add(all)
    const evs = [put("a", 2), put("b", 2), put("a", 3), del("a", 4), put("b", 5)]
    const wb = newWatcherBatch(g, evs, keyOf, 4)
    expect(wb.get(a)!.evs.map((e) => e.kv.modRevision)).toEqual([3, 4])
    expect(wb.get(all)!.evs.length).toBe(5)
    expect(wb.get(all)!.revs).toBe(4)
  })

  it("watcher.send applies NOPUT/NODELETE and treats an all-filtered response as delivered without sending", () => {
    const s = sink()
    const noPut = watcher("a", undefined, 1, s, filterMask([FilterType.NOPUT, 7]))
    expect(noPut.send([put("a", 2)], 2)).toBe(true)
    expect(s.got).toEqual([])
    expect(noPut.send([put("a", 3), del("a", 3)], 3)).toBe(true)
    expect(s.got.map((r) => r.events.map((e) => e.type))).toEqual([[EventType.DELETE]])
    const none = watcher("a", undefined, 1, sink(0), filterMask([FilterType.NODELETE]))
    expect(none.send([del("a", 2)], 2)).toBe(true)
    expect(none.send([put("a", 2)], 2)).toBe(false)
    // an empty (progress) response is always offered
    expect(none.send([], 2)).toBe(false)
  })
})
