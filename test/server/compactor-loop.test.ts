/**
 * The auto-compactor is supervised: a defect in it (here a store whose compact dies) fails the
 * program running it, where a typed failure is only logged and retried (config-compactor.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, TestClock } from "effect"
import { failOnFatal } from "../../src/supervision/fatal.js"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { REVISION_CHECK_INTERVAL, runCompactor } from "../../src/server/compactor.js"

const store = (compact: MvccStoreShape["compact"]) => ({ rev: () => 10, compact }) as unknown as MvccStoreShape

describe("auto-compaction loop", () => {
  it.effect("a defect in a compaction fails the program running the compactor", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        failOnFatal(
          Effect.scoped(
            Effect.gen(function* () {
              yield* Effect.forkScoped(
                runCompactor(
                  store(() => Effect.dieMessage("store broken")),
                  { mode: "revision", retention: 5 }
                )
              )
              yield* TestClock.adjust(REVISION_CHECK_INTERVAL)
              return yield* Effect.never
            })
          )
        )
      )
      const e = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(e).toMatchObject({
        _tag: "LoopDied",
        loop: "auto-compaction loop",
        message: "auto-compaction loop died: store broken"
      })
    })
  )
})
