import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Backend, Errors, Mvcc, Watch } from "../src/index.js"

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

describe("public API (src/index.ts)", () => {
  const store = Mvcc.layerDefault.pipe(Layer.provide(Backend.layerMemory))

  it.scoped("an embedded store and an in-process watch compose from the exported layers", () =>
    Effect.gen(function* () {
      const kv = yield* Mvcc.MvccStore
      const watchable = yield* Watch.WatchableStore
      const stream = yield* watchable.newWatchStream
      const id = yield* stream.watch({ id: 0, key: enc("a"), end: enc("b"), startRev: 0 })
      const put = yield* kv.put({ key: enc("a1"), value: enc("v") })
      expect(put.header.revision).toBe(2)
      const range = yield* kv.range({ key: enc("a"), rangeEnd: enc("b") })
      expect(range.kvs.map((x) => dec(x.value))).toEqual(["v"])
      const [responses] = yield* stream.takeAll
      const events = [...responses].filter((r) => r.watchId === id).flatMap((r) => [...r.events])
      expect(events.map((e) => [e.type, dec(e.kv.key), e.kv.modRevision])).toEqual([[Mvcc.EventType.PUT, "a1", 2]])
      const failure = yield* Effect.flip(kv.put({ key: new Uint8Array(0), value: enc("x") }))
      expect(failure).toEqual(Errors.emptyKey())
    }).pipe(Effect.provide(Watch.layer.pipe(Layer.provideMerge(store))))
  )
})
