/**
 * `Quota.passes` (quota.ts), which lets Put and Txn take the write fast path (kv-server.ts), says
 * yes exactly when `Quota.check` would pass without raising anything: otherwise the request takes
 * the Effect path, where check refuses it and raises NOSPACE as etcd does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Logger, LogLevel } from "effect"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { AlarmType, makeAlarms } from "../../src/server/alarms.js"
import { makeQuota } from "../../src/server/quota.js"

describe("Quota.passes", () => {
  it.prop(
    "is true exactly when check(cost) succeeds, and then check raises no alarm",
    [fc.nat(4096), fc.nat(4096), fc.integer({ min: 1, max: 8192 }), fc.boolean()],
    ([inUse, cost, quotaBytes, noSpace]) => {
      const inner = makeMemoryBackend().backend
      const backend = { ...inner, sizeInUseBytes: () => inUse }
      const alarms = Effect.runSync(makeAlarms(backend))
      if (noSpace) Effect.runSync(alarms.activate("1", AlarmType.NOSPACE))
      const quota = makeQuota(backend, alarms, quotaBytes, 1n)
      const passes = quota.passes(cost)
      const before = alarms.list(AlarmType.NOSPACE).length
      const exit = Effect.runSyncExit(quota.check(cost).pipe(Logger.withMinimumLogLevel(LogLevel.None)))
      expect(passes).toBe(Exit.isSuccess(exit))
      if (passes) expect(alarms.list(AlarmType.NOSPACE).length).toBe(before)
    }
  )
})
