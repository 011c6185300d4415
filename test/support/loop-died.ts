/**
 * For the loop-supervision tests: the failure a program run under failOnFatal ended with, read
 * once its loops have run what they could — `undefined` (and a failed expectation) while it still runs.
 */
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import { expect } from "vitest"

export const endedWith = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<E | undefined> =>
  Effect.gen(function* () {
    const exit = yield* Fiber.poll(fiber)
    expect(Option.isSome(exit), "the program still runs: the loop died silently").toBe(true)
    return Option.isSome(exit) && Exit.isFailure(exit.value)
      ? Option.getOrUndefined(Cause.failureOption(exit.value.cause))
      : undefined
  })
