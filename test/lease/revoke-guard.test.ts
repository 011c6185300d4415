/**
 * Revocations the lessor makes on its own are refused while the member says so (the CORRUPT alarm:
 * etcd's applierV3Corrupt refuses the LeaseRevoke its lessor proposes for an expired lease). An
 * expired lease then keeps its keys and the revision stays; once the refusal is lifted, the next
 * round after the retry interval revokes it. Time is the TestClock's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import { Errors } from "../../src/errors.js"
import { Lessor } from "../../src/lease/lessor.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { b, liveKeys, memoryEnv, recordCommits } from "./helpers.js"

describe("lessor revocations under a refusal (CORRUPT)", () => {
  it.effect("an expired lease keeps its keys and the revision while refused; revoked once lifted", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      const commits = yield* recordCommits
      let corrupt = false
      lessor.guardRevocations(() => (corrupt ? Errors.corrupt() : undefined))
      yield* lessor.grant({ id: 7n, ttl: 5 })
      yield* store.put({ key: b("held"), value: b("v"), lease: 7n })
      const rev = store.rev()
      corrupt = true
      // well past the TTL, several expiry rounds and retry intervals
      yield* TestClock.adjust("20 seconds")
      expect(store.rev()).toBe(rev)
      expect(commits.filter((c) => c.rev > rev)).toEqual([])
      expect(yield* liveKeys).toEqual(new Map([["held", 7n]]))
      expect((yield* lessor.timeToLive({ id: 7n })).ttl).toBe(0)
      // a renew that finds it expired gets the refusal too, and revokes nothing
      expect(yield* Effect.exit(lessor.renew(7n))).toEqual(Exit.fail(Errors.corrupt()))
      expect(yield* liveKeys).toEqual(new Map([["held", 7n]]))
      // a lease that has not expired is renewed as ever
      yield* lessor.grant({ id: 8n, ttl: 60 })
      expect((yield* lessor.renew(8n)).ttl).toBe(60)

      corrupt = false
      // the next round after the retry interval (3 s) revokes it, in one revision
      yield* TestClock.adjust("3500 millis")
      expect(yield* liveKeys).toEqual(new Map())
      expect(store.rev()).toBe(rev + 1)
      expect((yield* lessor.timeToLive({ id: 7n })).ttl).toBe(-1)
    }).pipe(Effect.provide(memoryEnv()))
  )
})
