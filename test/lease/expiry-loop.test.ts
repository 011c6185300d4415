/**
 * The lessor's expiry loop is supervised: if it dies (here the clock it reads throws), leases would
 * never expire again, so the program that provides the lessor fails with LoopDied instead.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Option, TestClock } from "effect"
import { Lessor } from "../../src/lease/lessor.js"
import { failOnFatal } from "../../src/supervision/fatal.js"
import { memoryEnv } from "./helpers.js"

describe("lease expiry loop", () => {
  it.effect("a defect in an expiry round fails the lessor's program", () =>
    Effect.gen(function* () {
      const test = yield* TestClock.testClock()
      const broken = { on: false }
      // the TestClock, except that reading the time throws once the test says so
      const clock: Clock.Clock = {
        [Clock.ClockTypeId]: Clock.ClockTypeId,
        unsafeCurrentTimeMillis: () => test.unsafeCurrentTimeMillis(),
        currentTimeMillis: test.currentTimeMillis,
        unsafeCurrentTimeNanos: () => {
          if (broken.on) throw new Error("clock broken")
          return test.unsafeCurrentTimeNanos()
        },
        currentTimeNanos: test.currentTimeNanos,
        sleep: (d) => test.sleep(d)
      }
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.gen(function* () {
            const lessor = yield* Lessor
            yield* lessor.grant({ id: 1n, ttl: 5 })
            broken.on = true
            yield* test.adjust("500 millis")
            return yield* Effect.never
          }).pipe(Effect.provide(memoryEnv()), Effect.withClock(clock))
        )
      )
      const e = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(e).toMatchObject({
        _tag: "LoopDied",
        loop: "lease expiry loop",
        message: "lease expiry loop died: clock broken"
      })
    })
  )

  it.effect("with a working clock the same program keeps expiring leases", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.gen(function* () {
            const lessor = yield* Lessor
            yield* lessor.grant({ id: 1n, ttl: 5 })
            yield* TestClock.adjust("7 seconds")
            return (yield* lessor.timeToLive({ id: 1n })).ttl
          }).pipe(Effect.provide(memoryEnv()))
        )
      )
      expect(exit).toEqual(Exit.succeed(-1))
    })
  )
})
