/**
 * A watch loop that dies fails the program that provides its layer (failOnFatal, as `serve` runs the
 * member) with the loop's LoopDied, instead of leaving the store running without it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, TestClock } from "effect"
import { layerMemory } from "../../src/backend/memory.js"
import { failOnFatal, LoopDied } from "../../src/supervision/fatal.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { EventBatch } from "../../src/watch/event-batch.js"
import { WatchableStore } from "../../src/watch/watchable-store.js"
import { Victims } from "../../src/watch/victims.js"
import { WatcherGroups } from "../../src/watch/watcher-groups.js"
import { Watcher } from "../../src/watch/watcher.js"
import { b, put, watchLayer } from "./helpers.js"

const loopDied = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("watch loops are supervised", () => {
  it.effect("a defect in a sync round (history unreadable) fails the layer's program", () =>
    Effect.gen(function* () {
      const broken = { on: false }
      const layer = watchLayer({}, (store) => ({
        ...store,
        eventsBetween: (from, to, max) => {
          if (broken.on) throw new Error("history unreadable")
          return store.eventsBetween(from, to, max)
        }
      }))
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.scoped(
            Effect.gen(function* () {
              const ws = yield* (yield* WatchableStore).newWatchStream
              yield* put("k")
              yield* put("k")
              broken.on = true
              yield* ws.watch({ key: b("k"), startRev: 1 }) // unsynced: the loop reads history
              yield* TestClock.adjust("100 millis")
              return yield* Effect.never
            })
          ).pipe(Effect.provide(layer))
        )
      )
      const e = loopDied(exit)
      expect(e).toBeInstanceOf(LoopDied)
      expect(e).toMatchObject({ loop: "watch sync loop", message: "watch sync loop died: history unreadable" })
    })
  )

  it.effect("a defect in the victim loop (a sink that throws) fails the Victims layer's program", () =>
    Effect.gen(function* () {
      const layer = Victims.layer.pipe(
        Layer.provide(WatcherGroups.layer),
        Layer.provide(layerDefault.pipe(Layer.provide(layerMemory)))
      )
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.gen(function* () {
            const victims = yield* Victims
            const sink = {
              offer: () => {
                throw new Error("sink broken")
              }
            }
            victims.add(new Watcher("k", undefined, 0, 2, 1, 0, false, sink), EventBatch.of([]))
            return yield* Effect.never
          }).pipe(Effect.provide(layer))
        )
      )
      expect(loopDied(exit)).toMatchObject({
        _tag: "LoopDied",
        loop: "watch victim loop",
        message: "watch victim loop died: sink broken"
      })
    })
  )

  it.effect("without a failure, the program's own result stands and closing the scope is no death", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.scoped(
            Effect.gen(function* () {
              const ws = yield* (yield* WatchableStore).newWatchStream
              yield* ws.watch({ key: b("k") })
              yield* put("k")
              return yield* (yield* WatchableStore).syncWatchers
            })
          ).pipe(Effect.provide(watchLayer()))
        )
      )
      expect(exit).toEqual(Exit.succeed(0))
    })
  )
})
