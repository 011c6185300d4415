/**
 * etcd's watch guarantees with leases in play (memory backend, the store's own loops and the
 * lessor's expiry fiber on the TestClock): lease grants (TTL 2–5 s), puts and txns attached to
 * leases, revokes, keep-alives and clock advances that let leases expire. Every watcher (past,
 * current and future start revisions, single-key and ranges, prev_kv, filters) must see each
 * expiry as the DELETE events of ONE revision in sorted key order, and every other guarantee must
 * still hold against the persisted history; the lessor and the store must match the test's lease
 * model after every step (expiry exactly at the expiry fiber's first check after it).
 */
import { describe, expect, it } from "@effect/vitest"
import { newCoverage, property } from "./guarantee-run.js"

const coverage = newCoverage()

// no test has a wall-clock budget: property() fails a case that makes no progress for STALL_MS
/** the rounds driven directly, with leases and bursts: random draws, and one fixed draw */
const direct = {
  mode: "direct",
  scenario: { leases: true, bursts: true },
  backend: "memory",
  coverage,
  maxCommands: 50
} as const

// the last test checks what the runs before it covered: a shuffled run keeps their order
describe("watch guarantees with lease expiry", { shuffle: false }, () => {
  it.effect(
    "expiries reach every watcher as one sorted DELETE revision; ordered, unique, reliable, atomic, resumable, bookmarkable, IsCreate, prev_kv and filters hold (rounds driven directly)",
    () => property({ ...direct, numRuns: Number(process.env.WATCH_LEASE_PROP_RUNS ?? 120) }),
    0
  )

  it.effect(
    "the same with the store's own loops on the TestClock",
    () =>
      property({
        mode: "clock",
        scenario: { leases: true, bursts: false },
        backend: "memory",
        coverage,
        maxCommands: 40,
        numRuns: Number(process.env.WATCH_LEASE_PROP_CLOCK_RUNS ?? 6)
      }),
    0
  )

  // the rare cases the check below wants (an expiry replayed to a watcher created after it, say)
  // came in all but one of many random draws: these runs are always the same ones, so the check
  // holds whatever the random runs above drew (CI at a33b49f drew no replay in 126 runs)
  it.effect(
    "the same over a fixed draw (seed 24), so the coverage below never depends on luck",
    () => property({ ...direct, numRuns: 40, seed: 24 }),
    0
  )

  it("the generated runs reached expiries (multi-key, replayed, future watchers, prev_kv), revokes and keep-alives", () => {
    const l = coverage.leases
    const runs = coverage.runs
    expect(runs).toBeGreaterThan(0)
    // expiries with keys (several in one revision), and leases that expired holding none
    expect(l.expiries).toBeGreaterThan(runs / 3)
    // (thresholds with room for the seed: fast-check draws a new one every run; 9 of 126 was seen)
    expect(l.multiKeyExpiries).toBeGreaterThan(runs / 25)
    expect(l.emptyExpiries).toBeGreaterThan(0)
    // watchers saw them live, replayed from history (start at or before the expiry, created
    // after it), through sync rounds, from future start revisions, with prev_kv
    expect(l.expiryDeliveries).toBeGreaterThan(runs / 5)
    expect(l.expiryReplays).toBeGreaterThan(0)
    expect(l.expiryCatchUps).toBeGreaterThan(0)
    expect(l.expiryFutureWatchers).toBeGreaterThan(0)
    expect(l.expiryPrevKvs).toBeGreaterThan(runs / 25)
    // the other ways leases end or live on
    expect(l.revokes).toBeGreaterThan(0)
    expect(l.keepAliveRevokes).toBeGreaterThan(0)
    expect(l.renewals).toBeGreaterThan(runs / 10)
    expect(l.rejectedPuts).toBeGreaterThan(0)
    // and the watch paths the lease-free properties reach
    expect(coverage.victims).toBeGreaterThan(runs / 20)
    expect(coverage.compactionResponses).toBeGreaterThan(0)
    expect(coverage.multiRevisionBatches).toBeGreaterThan(0)
  })
})
