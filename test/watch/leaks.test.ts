/**
 * No leaks: after streams are closed (explicitly, by scope, or with watchers in every state), the
 * store's watcher/stream/slow/pending gauges and its live fibers return to their baseline. Also
 * more than maxWatchersPerSync (512) unsynced watchers, with compaction in the middle.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Scope, Exit, Supervisor, TestClock } from "effect"
import { MvccStore } from "../../src/mvcc/kv.js"
import { WatchableStore } from "../../src/watch/watchable-store.js"
import type { WatchId } from "../../src/watch/watcher.js"
import { b, drain, put, settle, watchLayer } from "./helpers.js"

const gauges = (store: WatchableStore["Type"]) => ({
  watchers: store.watcherCount(),
  streams: store.streamCount(),
  slow: store.slowWatcherCount(),
  pending: store.pendingEventsCount(),
  synced: store.syncedWatcherCount(),
  unsynced: store.unsyncedWatcherCount(),
  victims: store.victimCount()
})

const zero = { watchers: 0, streams: 0, slow: 0, pending: 0, synced: 0, unsynced: 0, victims: 0 }

describe("no leaks", () => {
  it.scoped(
    "closing N streams with synced, unsynced, victim and compacted watchers returns every gauge and fiber count to baseline",
    () =>
      Effect.gen(function* () {
        const supervisor = yield* Supervisor.track
        yield* Effect.gen(function* () {
          const store = yield* WatchableStore
          const st = yield* MvccStore
          yield* settle()
          const baselineFibers = new Set((yield* supervisor.value).filter((f) => f.unsafePoll() === null))
          expect(gauges(store)).toEqual(zero)
          for (let i = 0; i < 20; i++) yield* put(`k${i % 4}`)
          for (let round = 0; round < 3; round++) {
            const scopes: Array<Scope.CloseableScope> = []
            for (let n = 0; n < 50; n++) {
              const scope = yield* Scope.make()
              scopes.push(scope)
              const ws = yield* Scope.extend(store.newWatchStream, scope)
              yield* ws.watch({ key: b("k1") }) // synced; a victim after two puts (channel of 1)
              yield* ws.watch({ key: b("k"), end: b("l"), startRev: 3 }) // unsynced
              yield* ws.watch({ key: b("k2"), startRev: 2 }) // compacted below
              yield* ws.watch({ key: b("k3"), startRev: 1000 }) // future
              if (n % 2 === 0) {
                const id = yield* ws.watch({ key: b("x") })
                yield* ws.cancel(id)
              }
            }
            yield* put("k1")
            yield* put("k1")
            yield* st.compact(st.rev() - 1).pipe(Effect.ignore)
            yield* TestClock.adjust("100 millis")
            yield* settle()
            expect(store.watcherCount()).toBe(200)
            expect(store.streamCount()).toBe(50)
            expect(store.victimCount()).toBeGreaterThan(0)
            // half closed explicitly through their scope, the rest with one close each
            for (const scope of scopes) yield* Scope.close(scope, Exit.void)
            expect(gauges(store)).toEqual(zero)
          }
          yield* TestClock.adjust("1 second")
          yield* settle()
          // no fiber started since the baseline is still alive (the store's own loops are)
          const liveFibers = (yield* supervisor.value).filter((f) => f.unsafePoll() === null)
          expect(liveFibers.filter((f) => !baselineFibers.has(f))).toEqual([])
          expect(liveFibers.length).toBeGreaterThanOrEqual(2)
        }).pipe(Effect.provide(watchLayer({ chanBufLen: 1 })), Effect.supervised(supervisor))
      })
  )

  it.effect("closing the store layer ends its two loops", () =>
    Effect.gen(function* () {
      const supervisor = yield* Supervisor.track
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* WatchableStore
          yield* settle()
          const ws = yield* store.newWatchStream
          yield* ws.watch({ key: b("a"), startRev: 1 })
        }).pipe(Effect.provide(watchLayer()))
      ).pipe(Effect.supervised(supervisor))
      yield* settle()
      const alive = (yield* supervisor.value).filter((f) => f.unsafePoll() === null)
      expect(alive).toEqual([])
    })
  )

  it.scoped("more than 512 unsynced watchers all catch up, and compacted ones are answered once and removed", () =>
    Effect.gen(function* () {
      const store = yield* WatchableStore
      const st = yield* MvccStore
      yield* settle()
      for (let i = 0; i < 30; i++) yield* put(`p${i % 3}`, String(i)) // revs 2..31
      yield* st.compact(10)
      const ws = yield* store.newWatchStream
      const ids: Array<WatchId> = []
      for (let i = 0; i < 1200; i++)
        ids.push(yield* ws.watch({ key: b("p"), end: b("q"), startRev: i % 3 === 0 ? 5 : 12 }))
      expect(store.unsyncedWatcherCount()).toBe(1200)
      const got: Array<{ watchId: WatchId; compactRevision: number; events: ReadonlyArray<unknown> }> = []
      const taker = yield* Effect.fork(
        Effect.forever(Effect.flatMap(ws.takeAll, ([c]) => Effect.sync(() => got.push(...c))))
      )
      for (let i = 0; i < 40 && store.slowWatcherCount() > 0; i++) {
        yield* TestClock.adjust("100 millis")
        yield* settle(5)
      }
      expect(store.slowWatcherCount()).toBe(0)
      yield* TestClock.adjust("1 second") // more rounds: no duplicate compaction responses (#22294)
      yield* settle(5)
      yield* Fiber.interrupt(taker)
      got.push(...(yield* drain(ws)))
      const compactions = got.filter((r) => r.compactRevision === 10).map((r) => r.watchId)
      expect(compactions.length).toBe(400)
      expect(new Set(compactions).size).toBe(400)
      const caughtUp = got.filter((r) => r.compactRevision === 0)
      expect(caughtUp.length).toBe(800)
      for (const r of caughtUp) expect(r.events.length).toBe(20) // revisions 12..31
      expect(store.syncedWatcherCount()).toBe(800)
      expect(store.watcherCount()).toBe(1200) // compacted ids stay until their client cancels them
      for (const id of compactions) yield* ws.cancel(id)
      expect(store.watcherCount()).toBe(800)
    }).pipe(Effect.provide(watchLayer()))
  )
})
