/**
 * etcd's flag value syntax (Go durations, auto-compaction retention, client URLs) and the
 * auto-compactor's schedule in both modes, driven by TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { Errors } from "../../src/errors.js"
import { runCompactor } from "../../src/server/compactor.js"
import { parseAutoCompaction, parseClientUrl, parseGoDuration } from "../../src/server/config.js"

describe("flag values", () => {
  it("parses Go durations", () => {
    const ms = (s: string) => {
      const d = parseGoDuration(s)
      return d === undefined ? undefined : Duration.toMillis(d)
    }
    expect(ms("10m")).toBe(600_000)
    expect(ms("100ms")).toBe(100)
    expect(ms("1h30m")).toBe(5_400_000)
    expect(ms("1.5s")).toBe(1500)
    expect(ms("0")).toBe(0)
    expect(ms("250us")).toBe(0.25)
    expect(ms("10")).toBeUndefined()
    expect(ms("10x")).toBeUndefined()
    expect(ms("")).toBeUndefined()
    expect(ms("-1s")).toBeUndefined()
  })

  it("reads auto-compaction retention as etcd does", () => {
    expect(parseAutoCompaction("periodic", "0")).toBeUndefined()
    expect(parseAutoCompaction("periodic", "2")).toEqual({ mode: "periodic", retention: Duration.hours(2) })
    expect(parseAutoCompaction("periodic", "30m")).toEqual({ mode: "periodic", retention: Duration.millis(1_800_000) })
    expect(parseAutoCompaction("revision", "1000")).toEqual({ mode: "revision", retention: 1000 })
    expect(parseAutoCompaction("revision", "1h")).toMatch(/not a revision count/)
    expect(parseAutoCompaction("periodic", "soon")).toMatch(/invalid duration/)
    expect(parseAutoCompaction("weekly", "1")).toBe('unknown auto-compaction-mode "weekly"')
  })

  it("accepts http and https client URLs", () => {
    expect(parseClientUrl("http://127.0.0.1:2379")).toEqual({
      url: "http://127.0.0.1:2379",
      host: "127.0.0.1",
      port: 2379,
      https: false
    })
    expect(parseClientUrl("http://[::1]:0")).toMatchObject({ host: "[::1]", port: 0 })
    expect(parseClientUrl("https://127.0.0.1:2379")).toMatchObject({ host: "127.0.0.1", port: 2379, https: true })
    expect(parseClientUrl("unix:///tmp/sock")).toMatch(/scheme/)
    expect(parseClientUrl("http://127.0.0.1")).toMatch(/missing port/)
    expect(parseClientUrl("localhost:2379")).toMatch(/scheme|invalid/)
  })
})

/** A store whose revision the test sets; compactions are recorded. */
const fakeStore = () => {
  const state = { rev: 1, compactRev: -1, compactions: [] as Array<number> }
  const store = {
    rev: () => state.rev,
    compact: (r: number) =>
      Effect.suspend(() => {
        if (r <= state.compactRev) return Effect.fail(Errors.compacted())
        state.compactRev = r
        state.compactions.push(r)
        return Effect.succeed({ header: { revision: state.rev } })
      })
  } as unknown as MvccStoreShape
  return { state, store }
}

describe("auto-compaction", () => {
  it.effect("revision mode: every 5 minutes at current - retention, skipping repeats and revisions <= 0", () =>
    Effect.gen(function* () {
      const { state, store } = fakeStore()
      const fiber = yield* Effect.fork(runCompactor(store, { mode: "revision", retention: 10 }))
      state.rev = 5
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([])
      state.rev = 30
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([20])
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([20])
      state.rev = 45
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([20, 35])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("periodic mode: first after one period at the revision from a period ago, then every period (<= 1h)", () =>
    Effect.gen(function* () {
      const { state, store } = fakeStore()
      const fiber = yield* Effect.fork(runCompactor(store, { mode: "periodic", retention: Duration.minutes(10) }))
      yield* Effect.yieldNow() // the compactor takes its first sample (rev 1) at 0m
      // the revision grows by 100 a minute: at minute m it is 1 + 100m
      for (let minute = 1; minute <= 25; minute++) {
        state.rev = 1 + minute * 100
        yield* TestClock.adjust("1 minute")
      }
      // samples every period/10; at 10m it compacts at the sample from 0m, at 20m at the oldest
      // of the last 11 samples (9m): at least one period of history is always kept
      expect(state.compactions).toEqual([1, 901])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("an 'already compacted' answer counts as success; other failures are retried", () =>
    Effect.gen(function* () {
      const { state, store } = fakeStore()
      state.compactRev = 1000
      const fiber = yield* Effect.fork(runCompactor(store, { mode: "revision", retention: 1 }))
      state.rev = 500
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([])
      state.rev = 2000
      yield* TestClock.adjust("5 minutes")
      expect(state.compactions).toEqual([1999])
      yield* Fiber.interrupt(fiber)
    })
  )
})
