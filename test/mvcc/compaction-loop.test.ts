/**
 * The store's compaction worker is supervised: a defect in it (here a backend whose write throws
 * during the physical compaction) fails the program that provides the store, instead of leaving
 * every later compaction waiting forever.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { Backend } from "../../src/backend/backend.js"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { failOnFatal } from "../../src/supervision/fatal.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"

const b = (s: string) => new Uint8Array(Buffer.from(s))

describe("mvcc compaction loop", () => {
  it.effect("a backend that throws while compacting kills the worker: the store's program fails with LoopDied", () =>
    Effect.gen(function* () {
      const broken = { on: false }
      const inner = makeMemoryBackend().backend
      const backend = Layer.succeed(Backend, {
        ...inner,
        write: (ops) => {
          // only the sweep's deletes of superseded revisions throw
          if (broken.on && ops.some((op) => op.bucket === "key" && op.value === undefined)) throw new Error("disk gone")
          return inner.write(ops)
        }
      })
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.gen(function* () {
            const store = yield* MvccStore
            for (let i = 0; i < 3; i++) yield* store.put({ key: b("k"), value: b(`v${i}`) })
            broken.on = true
            yield* store.compact(3)
            return yield* Effect.never
          }).pipe(Effect.provide(layerDefault.pipe(Layer.provide(backend))))
        )
      )
      const e = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(e).toMatchObject({
        _tag: "LoopDied",
        loop: "mvcc compaction loop",
        message: "mvcc compaction loop died: disk gone"
      })
    })
  )

  it.effect("the same compaction with a working backend finishes, and the program's result stands", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.gen(function* () {
            const store = yield* MvccStore
            for (let i = 0; i < 3; i++) yield* store.put({ key: b("k"), value: b(`v${i}`) })
            yield* store.compact(3, true)
            return store.compactRevision()
          }).pipe(Effect.provide(layerDefault.pipe(Layer.provide(Layer.succeed(Backend, makeMemoryBackend().backend)))))
        )
      )
      expect(exit).toEqual(Exit.succeed(3))
    })
  )
})
