/** The WatcherGroups service on its own layer (no store), and a watchable store over given groups. */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { layerMemory } from "../../src/backend/memory.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { layer, layerOver, WatchableStore } from "../../src/watch/watchable-store.js"
import { Victims } from "../../src/watch/victims.js"
import { WatcherGroups } from "../../src/watch/watcher-groups.js"
import { type WatchResponse, Watcher } from "../../src/watch/watcher.js"
import { b, drain, put, revs } from "./helpers.js"

const sink = { offer: (_: WatchResponse) => true }

describe("WatcherGroups on its own layer", () => {
  it.effect("two distinct groups, empty and new for each build of the layer", () =>
    Effect.gen(function* () {
      const first = yield* Effect.provide(WatcherGroups, WatcherGroups.layer)
      const second = yield* Effect.provide(WatcherGroups, WatcherGroups.layer)
      expect(first.synced).not.toBe(first.unsynced)
      const w = new Watcher("k", undefined, 0, 1, 1, 0, false, sink)
      first.synced.add(w)
      const seen: Array<Watcher> = []
      first.synced.forEachMatch("k", (x) => seen.push(x))
      expect(seen).toEqual([w])
      expect(first.unsynced.size).toBe(0)
      expect(second.synced.size).toBe(0)
    })
  )

  it.scoped("a watchable store built over provided groups files its watchers there", () =>
    Effect.gen(function* () {
      const { synced, unsynced } = yield* WatcherGroups
      const ws = yield* (yield* WatchableStore).newWatchStream
      yield* put("k")
      yield* ws.watch({ key: b("k") })
      yield* ws.watch({ key: b("k"), startRev: 1 })
      expect(synced.size).toBe(1)
      expect(unsynced.size).toBe(1)
      expect(synced.contains("k")).toBe(true)
    }).pipe(
      Effect.provide(
        layerOver().pipe(
          Layer.provideMerge(Victims.layer),
          Layer.provideMerge(WatcherGroups.layer),
          Layer.provideMerge(layerDefault.pipe(Layer.provide(layerMemory)))
        )
      )
    )
  )
})

describe("two WatchableStores over one store", () => {
  it.scoped("each gets every revision: commit listeners are subscriptions, not one slot", () =>
    Effect.gen(function* () {
      const store = layerDefault.pipe(Layer.provide(layerMemory))
      const stores = yield* Layer.build(store)
      // two watchable stores, each built on its own (in this test's scope) over the same MvccStore
      const build = Effect.map(Layer.build(layer.pipe(Layer.provide(Layer.succeedContext(stores)))), (ctx) =>
        Context.get(ctx, WatchableStore)
      )
      const first = yield* build
      const second = yield* build
      const a = yield* first.newWatchStream
      const c = yield* second.newWatchStream
      yield* a.watch({ key: b("k") })
      yield* c.watch({ key: b("k") })
      const writes = Effect.provide(
        Effect.forEach([1, 2, 3], (i) => put("k", `v${i}`)),
        Layer.succeedContext(stores)
      )
      yield* writes
      expect(revs(yield* drain(a)).flat()).toEqual([2, 3, 4])
      expect(revs(yield* drain(c)).flat()).toEqual([2, 3, 4])
    })
  )
})
