import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, TestClock } from "effect"
import { EventType } from "../../src/mvcc/key-value.js"
import { MvccStore, type MvccStoreShape } from "../../src/mvcc/kv.js"
import { WatchableStore } from "../../src/watch/watchable-store.js"
import { attachPrevKv } from "../../src/watch/watch-stream.js"
import { FilterType, type WatchId } from "../../src/watch/watcher.js"
import { b, del, drain, put, revs, s, settle, watchLayer } from "./helpers.js"

const errorOf = <A, E>(eff: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(eff), (exit) => (Exit.isFailure(exit) ? exit.cause : undefined))

const failure = <A>(eff: Effect.Effect<A, { reason: string; message: string }>) =>
  Effect.map(Effect.flip(eff), (e) => ({ reason: e.reason, message: e.message }))

describe("watchStream ids and errors", () => {
  it.scoped("custom and auto ids: 1→1, 1→duplicate, 0→0, 0→2; auto ids skip used ids and are never reused", () =>
    Effect.gen(function* () {
      const ws = yield* (yield* WatchableStore).newWatchStream
      expect(yield* ws.watch({ id: 1, key: b("foo") })).toBe(1)
      expect(yield* failure(ws.watch({ id: 1, key: b("foo") }))).toEqual({
        reason: "DuplicateId",
        message: "mvcc: duplicate watch ID provided on the WatchStream"
      })
      expect(yield* ws.watch({ id: 0, key: b("foo") })).toBe(0)
      expect(yield* ws.watch({ key: b("foo") })).toBe(2)
      yield* ws.cancel(2)
      expect(yield* ws.watch({ key: b("foo") })).toBe(3)
      expect(yield* ws.watch({ id: -7, key: b("foo") })).toBe(-7)
      expect([...ws.ids()].sort((x, y) => Number(x) - Number(y))).toEqual([-7, 0, 1, 3])
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("empty range, closed stream and unknown cancel give etcd's exact errors", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const ws = yield* store.newWatchStream
      const empty = { reason: "EmptyRange", message: "mvcc: watcher range is empty" }
      expect(yield* failure(ws.watch({ key: b("b"), end: b("a") }))).toEqual(empty)
      expect(yield* failure(ws.watch({ key: b("a"), end: b("a") }))).toEqual(empty)
      // an empty end means from-key: accepted
      expect(yield* ws.watch({ key: b("a"), end: new Uint8Array() })).toBe(0)
      expect(yield* failure(ws.cancel(42))).toEqual({ reason: "NotExist", message: "mvcc: watcher does not exist" })
      expect(yield* failure(ws.watch({ key: b("a"), startRev: -1 }))).toEqual({
        reason: "Compacted",
        message: "mvcc: required revision has been compacted"
      })
      yield* ws.close
      expect(yield* failure(ws.watch({ key: b("a") }))).toEqual({
        reason: "StreamClosed",
        message: "mvcc: watcher range is empty"
      })
      expect(store.watcherCount()).toBe(0)
      // takeAll on a closed stream returns done at once
      const [, done] = yield* ws.takeAll
      expect(done).toBe(true)
    }).pipe(Effect.provide(watchLayer()))
  )
})

describe("synced path", () => {
  it.scoped("start revision 0 sees only later revisions, one response per revision with header = event revision", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      yield* put("a")
      const ws = yield* store.newWatchStream
      const id = yield* ws.watch({ key: b("a") })
      expect(ws.rev()).toBe(2)
      yield* put("a")
      yield* put("b")
      yield* del("a")
      const got = yield* drain(ws)
      expect(got.map((r) => [r.watchId, r.revision, r.events.map((e) => [e.type, e.kv.modRevision])])).toEqual([
        [id, 3, [[EventType.PUT, 3]]],
        [id, 5, [[EventType.DELETE, 5]]]
      ])
      // DELETE kvs are tombstone-shaped
      expect(got[1]!.events[0]!.kv.createRevision).toBe(0)
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("a multi-key txn reaches a prefix watcher as one response holding the whole revision, in op order", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const ws = yield* (yield* WatchableStore).newWatchStream
      yield* ws.watch({ key: b("k"), end: b("l") })
      yield* ws.watch({ key: b("k2") })
      yield* st.txn({
        compare: [],
        success: [
          { _tag: "Put", request: { key: b("k3"), value: b("x") } },
          { _tag: "Put", request: { key: b("k1"), value: b("y") } },
          { _tag: "Put", request: { key: b("k2"), value: b("z") } }
        ],
        failure: []
      })
      const got = yield* drain(ws)
      expect(got.map((r) => [r.watchId, r.revision, r.events.map((e) => s(e.kv.key))])).toEqual([
        [0, 2, ["k3", "k1", "k2"]],
        [1, 2, ["k2"]]
      ])
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("future start revision: events from it only (TestWatchFutureRev), no progress until reached", () =>
    Effect.gen(function* () {
      const ws = yield* (yield* WatchableStore).newWatchStream
      const id = yield* ws.watch({ key: b("f"), startRev: 5 })
      for (let i = 0; i < 3; i++) yield* put("f")
      yield* ws.requestProgress(id)
      expect(yield* ws.requestProgressAll).toBe(false)
      expect(yield* drain(ws)).toEqual([])
      yield* put("f") // rev 5
      yield* ws.requestProgress(id)
      const got = yield* drain(ws)
      expect(got.map((r) => [r.revision, r.events.map((e) => e.kv.modRevision)])).toEqual([
        [5, [5]],
        [5, []]
      ])
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("filters NOPUT and NODELETE drop events without affecting later delivery", () =>
    Effect.gen(function* () {
      const ws = yield* (yield* WatchableStore).newWatchStream
      yield* ws.watch({ key: b("a"), filters: [FilterType.NOPUT] })
      yield* ws.watch({ key: b("a"), filters: [FilterType.NODELETE] })
      yield* put("a")
      yield* del("a")
      yield* put("a")
      const got = yield* drain(ws)
      expect(got.map((r) => [r.watchId, r.events[0]!.type, r.revision])).toEqual([
        [1, EventType.PUT, 2],
        [0, EventType.DELETE, 3],
        [1, EventType.PUT, 4]
      ])
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("attachPrevKv gives non-create events the key's value at rev-1", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const ws = yield* (yield* WatchableStore).newWatchStream
      const id = yield* ws.watch({ key: b("p"), prevKv: true })
      expect(ws.prevKv(id)).toBe(true)
      yield* put("p", "one")
      yield* put("p", "two")
      yield* del("p")
      const got = (yield* drain(ws)).map((r) => attachPrevKv(st.getAt, r))
      expect(got.map((r) => (r.events[0]!.prevKv === undefined ? null : s(r.events[0]!.prevKv.value)))).toEqual([
        null,
        "one",
        "two"
      ])
    }).pipe(Effect.provide(watchLayer()))
  )
})

describe("unsynced path and victims (TestClock)", () => {
  it.scoped("a past start revision replays inclusively once the 100 ms loop runs; header = current revision", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      yield* settle() // the loop's first pass (nothing unsynced) is done: it now sleeps 100 ms
      for (let i = 0; i < 5; i++) yield* put("a") // revs 2..6
      const ws = yield* store.newWatchStream
      yield* ws.watch({ key: b("a"), startRev: 3 })
      expect(store.unsyncedWatcherCount()).toBe(1)
      expect(store.slowWatcherCount()).toBe(1)
      yield* settle()
      expect(yield* drain(ws)).toEqual([])
      yield* TestClock.adjust("100 millis")
      yield* settle()
      const got = yield* drain(ws)
      expect(got.map((r) => [r.revision, r.events.map((e) => e.kv.modRevision)])).toEqual([[6, [3, 4, 5, 6]]])
      expect(store.syncedWatcherCount()).toBe(1)
      expect(store.slowWatcherCount()).toBe(0)
      yield* put("a")
      expect(revs(yield* drain(ws))).toEqual([[7]])
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped(
    "catch-up batches hold watchBatchMaxRevs revisions each (TestWatchBatchUnsynced), all stamped with the store revision",
    () =>
      Effect.gen(function* () {
        const store = yield* WatchableStore
        for (let i = 0; i < 10; i++) yield* put("a") // revs 2..11
        const ws = yield* store.newWatchStream
        yield* ws.watch({ key: b("a"), startRev: 2 })
        yield* TestClock.adjust("100 millis")
        yield* settle(10)
        const got = yield* drain(ws)
        expect(revs(got)).toEqual([
          [2, 3, 4, 5],
          [6, 7, 8, 9],
          [10, 11]
        ])
        expect(got.map((r) => r.revision)).toEqual([11, 11, 11])
        expect(yield* ws.requestProgressAll).toBe(true)
      }).pipe(Effect.provide(watchLayer({ watchBatchMaxRevs: 4, historyChunkRevs: 3 })))
  )

  it.scoped("compaction past a watcher's start: {compactRevision, revision 0}, then it is removed but cancelable", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const st = yield* MvccStore
      for (let i = 0; i < 5; i++) yield* put("a") // revs 2..6
      yield* st.compact(4, true)
      const ws = yield* store.newWatchStream
      const id = yield* ws.watch({ key: b("a"), startRev: 2 })
      const atCompact = yield* ws.watch({ key: b("a"), startRev: 4 })
      yield* TestClock.adjust("100 millis")
      yield* settle()
      const got = yield* drain(ws)
      expect(got).toContainEqual({ watchId: id, events: [], revision: 0, compactRevision: 4 })
      // a watch from exactly the compaction revision still gets revision 4 on
      expect(revs(got.filter((r) => r.watchId === atCompact))).toEqual([[4, 5, 6]])
      expect(store.slowWatcherCount()).toBe(0)
      expect(store.watcherCount()).toBe(2)
      yield* TestClock.adjust("1 second")
      yield* settle()
      expect(yield* drain(ws)).toEqual([]) // no duplicate compaction responses
      yield* ws.cancel(id)
      expect(store.watcherCount()).toBe(1)
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("a full channel makes watchers victims; they deliver in order once drained (TestWatchVictims)", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const ws = yield* store.newWatchStream
      yield* ws.watch({ key: b("v") })
      yield* ws.watch({ key: b("v"), end: b("w") })
      for (let i = 0; i < 6; i++) yield* put("v")
      expect(store.victimCount()).toBe(2)
      expect(store.pendingEventsCount()).toBe(2)
      const all: Array<{ watchId: WatchId; events: ReadonlyArray<{ kv: { modRevision: number } }> }> = []
      for (let round = 0; round < 40 && (all.length < 12 || store.slowWatcherCount() > 0); round++) {
        all.push(...(yield* drain(ws)))
        yield* TestClock.adjust("10 millis")
        yield* settle()
        if (round % 10 === 9) yield* TestClock.adjust("100 millis")
      }
      all.push(...(yield* drain(ws)))
      for (const id of [0, 1]) {
        expect(all.filter((r) => r.watchId === id).flatMap((r) => r.events.map((e) => e.kv.modRevision))).toEqual([
          2, 3, 4, 5, 6, 7
        ])
      }
      expect(store.slowWatcherCount()).toBe(0)
      expect(store.pendingEventsCount()).toBe(0)
      expect(store.eventsTotal()).toBe(12)
    }).pipe(Effect.provide(watchLayer({ chanBufLen: 2 })))
  )

  it.scoped("canceling a victim drops its held batch and nothing more arrives for it", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const ws = yield* store.newWatchStream
      const id = yield* ws.watch({ key: b("v") })
      yield* put("v")
      yield* put("v")
      expect(store.victimCount()).toBe(1)
      yield* ws.cancel(id)
      expect(store.victimCount()).toBe(0)
      expect(store.watcherCount()).toBe(0)
      yield* drain(ws)
      yield* TestClock.adjust("100 millis")
      yield* settle()
      expect(yield* drain(ws)).toEqual([])
    }).pipe(Effect.provide(watchLayer({ chanBufLen: 1 })))
  )
})

describe("sync round vs. compaction", () => {
  // The store as the watchable store sees it, except that the first history read of revision 3 or
  // later starts a physical compaction at 40: it lands between two chunks of the round.
  let fired = false
  const compactMidRound = (st: MvccStoreShape): MvccStoreShape => ({
    ...st,
    eventsBetween: (from, to, max) => {
      const out = st.eventsBetween(from, to, max)
      if (!fired && from >= 3) {
        fired = true
        Effect.runFork(st.compact(40, true))
      }
      return out
    }
  })

  it.scoped(
    "a physical compaction landing between history chunks ends the round's reads there: no gap, then the compaction response",
    () =>
      Effect.gen(function* () {
        fired = false
        const store = yield* WatchableStore
        for (let i = 0; i < 49; i++) yield* put("a", String(i)) // revs 2..50
        const ws = yield* store.newWatchStream
        const id = yield* ws.watch({ key: b("a"), startRev: 2 })
        yield* store.syncWatchers // one revision per chunk, an I/O turn between chunks
        expect(fired).toBe(true)
        yield* store.syncWatchers
        const got = yield* drain(ws)
        const events = got.filter((r) => r.compactRevision === 0).flatMap((r) => r.events.map((e) => e.kv.modRevision))
        // revisions 2..3 were read before the compaction; 4..39 are gone: no jump to 40
        expect(events).toEqual([2, 3])
        expect(got.filter((r) => r.compactRevision !== 0)).toEqual([
          { watchId: id, events: [], revision: 0, compactRevision: 40 }
        ])
      }).pipe(Effect.provide(watchLayer({ historyChunkRevs: 1 }, compactMidRound)))
  )
})

describe("progress", () => {
  it.scoped("RequestProgress answers for start 0, old and current revisions after sync; not for future ones", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      for (let i = 0; i < 3; i++) yield* put("x") // rev 4
      const ws = yield* store.newWatchStream
      const cases = [0, 2, 4, 5, 6]
      const ids: Array<WatchId> = []
      for (const startRev of cases) ids.push(yield* ws.watch({ key: b("k"), startRev }))
      // before the sync loop the past watcher is unsynced: no answer for it
      yield* ws.requestProgress(ids[1]!)
      expect(yield* drain(ws)).toEqual([])
      yield* TestClock.adjust("100 millis")
      yield* settle()
      for (const id of ids) yield* ws.requestProgress(id)
      const got = yield* drain(ws)
      expect(got).toEqual([0, 1, 2].map((i) => ({ watchId: ids[i], events: [], revision: 4, compactRevision: 0 })))
    }).pipe(Effect.provide(watchLayer()))
  )

  it.scoped("RequestProgressAll sends one watch_id -1 response only when every watcher is synced", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const ws = yield* store.newWatchStream
      expect(yield* ws.requestProgressAll).toBe(true) // no watchers: nothing sent
      expect(yield* drain(ws)).toEqual([])
      yield* put("a")
      yield* ws.watch({ key: b("a") })
      yield* ws.watch({ key: b("a"), startRev: 1 })
      expect(yield* ws.requestProgressAll).toBe(false)
      expect(yield* drain(ws)).toEqual([])
      yield* TestClock.adjust("100 millis")
      yield* settle()
      yield* drain(ws)
      expect(yield* ws.requestProgressAll).toBe(true)
      expect(yield* drain(ws)).toEqual([{ watchId: -1, events: [], revision: 2, compactRevision: 0 }])
    }).pipe(Effect.provide(watchLayer()))
  )
})

describe("loops", () => {
  it.scoped("more unsynced watchers than maxWatchersPerSync all catch up in successive immediate rounds", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      for (let i = 0; i < 3; i++) yield* put("a")
      const ws = yield* store.newWatchStream
      for (let i = 0; i < 7; i++) yield* ws.watch({ key: b("a"), startRev: 2 })
      yield* TestClock.adjust("100 millis")
      yield* settle(20)
      expect(store.unsyncedWatcherCount()).toBe(0)
      const got = yield* drain(ws)
      expect(got.length).toBe(7)
      expect(new Set(got.map((r) => r.watchId)).size).toBe(7)
    }).pipe(Effect.provide(watchLayer({ maxWatchersPerSync: 2 })))
  )

  it.scoped(
    "with etcd's pacing (immediateResync false) a round that made progress is followed sooner than 100 ms",
    () =>
      Effect.gen(function* () {
        const store = yield* WatchableStore
        yield* settle()
        yield* put("a")
        const ws = yield* store.newWatchStream
        for (let i = 0; i < 6; i++) yield* ws.watch({ key: b("a"), startRev: 2 })
        yield* TestClock.adjust("100 millis")
        // rounds of 2: the later ones wait the time the previous took (zero on the TestClock)
        yield* settle(10)
        expect(store.unsyncedWatcherCount()).toBe(0)
        expect((yield* drain(ws)).length).toBe(6)
      }).pipe(Effect.provide(watchLayer({ maxWatchersPerSync: 2, immediateResync: false })))
  )

  it.scoped("a round without progress (compaction response blocked by a full channel) retries after 100 ms", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const st = yield* MvccStore
      yield* settle()
      yield* put("a")
      yield* put("a")
      yield* st.compact(3)
      const ws = yield* store.newWatchStream
      const synced = yield* ws.watch({ key: b("z") })
      const behind = yield* ws.watch({ key: b("a"), startRev: 2 })
      yield* ws.requestProgress(synced) // fills the 1-slot channel
      yield* TestClock.adjust("100 millis")
      yield* settle()
      expect(yield* drain(ws)).toEqual([{ watchId: synced, events: [], revision: 3, compactRevision: 0 }])
      yield* TestClock.adjust("99 millis")
      yield* settle()
      expect(yield* drain(ws)).toEqual([])
      yield* TestClock.adjust("1 millis")
      yield* settle()
      expect(yield* drain(ws)).toEqual([{ watchId: behind, events: [], revision: 0, compactRevision: 3 }])
    }).pipe(Effect.provide(watchLayer({ chanBufLen: 1 })))
  )

  it.effect("closing the store layer interrupts its loops, drops the listener and closes open streams", () =>
    Effect.gen(function* () {
      const result = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* WatchableStore
          const ws = yield* store.newWatchStream
          yield* ws.watch({ key: b("a") })
          const taker = yield* Effect.fork(ws.takeAll)
          return { ws, taker }
        }).pipe(Effect.provide(watchLayer()))
      )
      // the stream was closed with the store: a pending takeAll ends with done
      const [, done] = yield* Fiber.join(result.taker)
      expect(done).toBe(true)
      expect(yield* errorOf(result.ws.watch({ key: b("a") }))).toBeDefined()
    })
  )
})
