/**
 * The loops' supervision (src/supervision/fatal.ts): which ends of a loop count as its death, what the
 * program that provides the member's layers sees (failOnFatal, as `serve` runs it), and the default
 * when nobody provides a Fatal (an error log line, not silence).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Exit, Layer, Logger, Option } from "effect"
import { failOnFatal, LoopDied, supervised } from "../../src/supervision/fatal.js"

class Probe extends Context.Tag("test/Probe")<Probe, { readonly die: Deferred.Deferred<void> }>() {}

/** A layer with one supervised loop that dies when the test says so; `released` records its scope closing. */
const loopLayer = (released: { done: boolean }) =>
  Layer.scoped(
    Probe,
    Effect.gen(function* () {
      const die = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Effect.sync(() => (released.done = true)))
      yield* Effect.forkScoped(
        supervised("test loop", Effect.zipRight(Deferred.await(die), Effect.dieMessage("disk on fire")))
      )
      return { die }
    })
  )

const failure = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("failOnFatal", () => {
  it.effect("a launched layer whose loop dies: the program fails with LoopDied and the layer is released", () =>
    Effect.gen(function* () {
      const released = { done: false }
      const layer = loopLayer(released)
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.flatMap(Probe, (p) => Effect.zipRight(Deferred.succeed(p.die, undefined), Effect.never)).pipe(
            Effect.provide(layer)
          )
        )
      )
      expect(failure(exit)).toEqual(new LoopDied({ loop: "test loop", message: "test loop died: disk on fire" }))
      expect(released.done).toBe(true)
    })
  )

  it.effect("Layer.launch, as serve runs the member: the same failure ends it", () =>
    Effect.gen(function* () {
      const released = { done: false }
      const layer = Layer.effectDiscard(Effect.void).pipe(
        Layer.provideMerge(
          Layer.scopedDiscard(Effect.forkScoped(supervised("launched loop", Effect.fail("typed failure" as const))))
        ),
        Layer.provideMerge(Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => (released.done = true)))))
      )
      const exit = yield* Effect.exit(failOnFatal(Layer.launch(layer)))
      expect(failure(exit)).toMatchObject({
        _tag: "LoopDied",
        loop: "launched loop",
        message: "launched loop died: typed failure"
      })
      expect(released.done).toBe(true)
    })
  )

  it.effect("a loop that returns is a death too; one interrupted by its scope closing is not", () =>
    Effect.gen(function* () {
      const returned = yield* Effect.exit(
        failOnFatal(
          Effect.scoped(Effect.zipRight(Effect.forkScoped(supervised("short loop", Effect.void)), Effect.never))
        )
      )
      expect(failure(returned)).toMatchObject({ loop: "short loop", message: "short loop died: it returned" })
      const closed = yield* Effect.exit(
        failOnFatal(Effect.scoped(Effect.as(Effect.forkScoped(supervised("long loop", Effect.never)), "done" as const)))
      )
      expect(closed).toEqual(Exit.succeed("done"))
    })
  )
})

describe("without failOnFatal", () => {
  it.effect("a dead loop is logged at error level", () =>
    Effect.gen(function* () {
      const lines: Array<{ level: string; message: unknown }> = []
      const logger = Logger.make(({ logLevel, message }) => {
        lines.push({ level: logLevel.label, message })
      })
      yield* Effect.scoped(
        Effect.gen(function* () {
          const fiber = yield* Effect.forkScoped(supervised("lonely loop", Effect.dieMessage("gone")))
          yield* fiber.await
        })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(lines).toEqual([{ level: "ERROR", message: ["lonely loop died: gone"] }])
    })
  )
})
