/**
 * The Victims service on its own layer: over WatcherGroups and a real store (for its revision), with
 * no watchable store; the TestClock drives syncVictimsLoop's retry period.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { layerMemory } from "../../src/backend/memory.js"
import { EventType, type Event } from "../../src/mvcc/key-value.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { EventBatch } from "../../src/watch/event-batch.js"
import { VictimBatches, Victims } from "../../src/watch/victims.js"
import { WatcherGroup } from "../../src/watch/watcher-group.js"
import { WatcherGroups } from "../../src/watch/watcher-groups.js"
import { type WatchResponse, Watcher } from "../../src/watch/watcher.js"

const layer = Victims.layerWith({ retryPeriod: "10 millis" }).pipe(
  Layer.provideMerge(WatcherGroups.layer),
  Layer.provide(layerDefault.pipe(Layer.provide(layerMemory)))
)

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

/** A channel stand-in that refuses while `open` is false. */
const gate = () => {
  const got: Array<WatchResponse> = []
  const s = { open: false, got, offer: (r: WatchResponse) => (s.open ? (got.push(r), true) : false) }
  return s
}

/** Gives forked fibers turns until `cond` holds (bounded: fails the test rather than hang). */
const until = (cond: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000 && !cond(); i++) yield* Effect.yieldNow()
    expect(cond()).toBe(true)
  })

/** Gives forked fibers a fixed number of turns (to show that nothing happens). */
const turns = (n = 50) => Effect.repeatN(Effect.yieldNow(), n)

describe("Victims on its own layer", () => {
  it.scoped(
    "a refused batch is retried every retry period on the TestClock, then the watcher rejoins the synced group",
    () =>
      Effect.gen(function* () {
        const victims = yield* Victims
        const { synced, unsynced } = yield* WatcherGroups
        const sink = gate()
        // the store is at revision 1; the watcher has seen up to revision 2 in this batch
        const w = new Watcher("k", undefined, 0, 3, 7, 0, false, sink)
        victims.add(w, EventBatch.of([put("k", 2)]))
        expect(w.state).toBe("victim")
        expect(victims.size()).toBe(1)
        expect(victims.heldEvents()).toBe(1)
        yield* turns() // the loop woke, retried once (refused) and sleeps for the period
        sink.open = true
        yield* turns()
        expect(sink.got).toEqual([]) // no retry before the period is over
        yield* TestClock.adjust("9 millis")
        yield* turns()
        expect(sink.got).toEqual([])
        yield* TestClock.adjust("1 millis")
        yield* until(() => sink.got.length === 1)
        expect(sink.got[0]).toMatchObject({ watchId: 7, revision: 2, compactRevision: 0 })
        expect(sink.got[0]!.events.map((e) => e.kv.modRevision)).toEqual([2])
        expect(victims.size()).toBe(0)
        expect(w.state).toBe("synced")
        expect(synced.has(w)).toBe(true)
        expect(unsynced.size).toBe(0)
      }).pipe(Effect.provide(layer))
  )

  it.scoped("an idle loop waits for add: a batch the channel takes is delivered without the clock moving", () =>
    Effect.gen(function* () {
      const victims = yield* Victims
      const { unsynced } = yield* WatcherGroups
      yield* turns() // the loop found no victims and waits for a signal
      const sink = gate()
      sink.open = true
      // a batch cut at revision 1 resumes there: behind the store's revision 1, so unsynced
      const eb = EventBatch.of([])
      eb.moreRev = 1
      const w = new Watcher("k", "l", 0, 1, 1, 0, false, sink)
      victims.add(w, eb)
      yield* until(() => victims.size() === 0)
      expect(w.state).toBe("unsynced")
      expect(unsynced.has(w)).toBe(true)
      expect(w.minRev).toBe(1)
    }).pipe(Effect.provide(layer))
  )

  it.scoped("moveVictims is one pass now; a deleted victim is never retried", () =>
    Effect.gen(function* () {
      const victims = yield* Victims
      const { synced } = yield* WatcherGroups
      const a = gate()
      const b = gate()
      const wa = new Watcher("a", undefined, 0, 5, 1, 0, false, a)
      const wb = new Watcher("b", undefined, 0, 5, 2, 0, false, b)
      victims.add(wa, EventBatch.of([put("a", 4)]))
      victims.add(wb, EventBatch.of([put("b", 4)]))
      expect(victims.delete(wb)).toBe(true)
      a.open = true
      b.open = true
      expect(victims.moveVictims()).toBe(1)
      expect(a.got.length).toBe(1)
      expect(b.got).toEqual([])
      expect(synced.has(wa)).toBe(true)
      expect(synced.has(wb)).toBe(false)
      expect(victims.moveVictims()).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it("a pass skips the victims of a sink that refused, and offers to each sink until it refuses", () => {
    const batches = new VictimBatches()
    const synced = new WatcherGroup()
    const unsynced = new WatcherGroup()
    // a channel with room for `room` responses; refusing once it refused, until `take`
    const channel = (room: number) => {
      const s = {
        room,
        refusing: false,
        offers: 0,
        offer: (_r: WatchResponse) => {
          s.offers++
          if (s.refusing || s.room === 0) return !(s.refusing = true)
          s.room--
          return true
        },
        take: (n: number) => {
          s.room = n
          s.refusing = false
        }
      }
      return s
    }
    const full = channel(0)
    const roomy = channel(2)
    const ws = [full, roomy].flatMap((sink, i) =>
      Array.from({ length: 1000 }, (_, j) => new Watcher(`k${i}-${j}`, undefined, 0, 3, j, 0, false, sink))
    )
    for (const w of ws) batches.add(w, EventBatch.of([put(w.key, 2)]))
    expect(batches.size).toBe(2000)
    full.refusing = true
    // how often a pass looks at the full sink: once, not once per victim
    let looks = 0
    const fullState = full as { refusing: boolean }
    let refusing = true
    Object.defineProperty(fullState, "refusing", {
      get: () => (looks++, refusing),
      set: (v: boolean) => (refusing = v)
    })
    expect(batches.retry(() => 1, synced, unsynced)).toBe(2)
    expect(looks).toBe(1)
    // the full channel was never offered to; the roomy one twice and refused once
    expect([full.offers, roomy.offers]).toEqual([0, 3])
    expect(batches.size).toBe(1998)
    expect(synced.size).toBe(2)
    expect(batches.retry(() => 1, synced, unsynced)).toBe(0)
    expect([full.offers, roomy.offers]).toEqual([0, 3])
    // once a channel takes, its victims are offered again
    full.take(1000)
    roomy.take(1000)
    expect(batches.retry(() => 1, synced, unsynced)).toBe(1998)
    expect(batches.size).toBe(0)
    expect(batches.heldEvents()).toBe(0)
    expect(synced.size).toBe(2000)
    expect(ws.every((w) => w.state === "synced")).toBe(true)
  })
})
