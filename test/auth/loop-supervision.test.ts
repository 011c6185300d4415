/**
 * Auth's token sweep is supervised (issue 30): a sweep that throws would leave expired tokens
 * valid; instead it fails the program run under failOnFatal (as `serve` runs the member) with its
 * LoopDied. Fails (the program never ends) when the sweep's `supervised` wrapper is removed.
 */
import { it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { describe, expect } from "vitest"
import { AuthStore, layer as authLayer } from "../../src/auth/auth-store.js"
import { simpleTokenProvider } from "../../src/auth/token-provider.js"
import { layerMemory } from "../../src/backend/memory.js"
import { failOnFatal } from "../../src/supervision/fatal.js"
import { endedWith } from "../support/loop-died.js"

describe("auth's token sweep is supervised", () => {
  it.effect("a sweep that throws fails the program with the sweep's LoopDied", () =>
    Effect.gen(function* () {
      const real = simpleTokenProvider(300_000)
      const broken = { on: false }
      const tokenProvider = {
        ...real,
        sweep: () => {
          if (broken.on) throw new Error("sweep exploded")
          real.sweep()
        }
      }
      const program = Effect.zipRight(AuthStore, Effect.never).pipe(
        Effect.provide(authLayer({ tokenProvider, bcryptCost: 4 }).pipe(Layer.provide(layerMemory)))
      )
      const fiber = yield* Effect.fork(failOnFatal(program))
      yield* TestClock.adjust("1 second")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true) // a sweep that works keeps it running
      broken.on = true
      yield* TestClock.adjust("1 second")
      expect(yield* endedWith(fiber)).toMatchObject({
        loop: "auth token sweep",
        message: "auth token sweep died: sweep exploded"
      })
    })
  )
})
