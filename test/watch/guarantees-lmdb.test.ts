/**
 * A bounded subset of the watch guarantee properties over the LMDB backend (a fresh data dir per
 * case, removed after): every write waits for a real fsync and concurrent puts are group-committed,
 * so a revision becomes visible to watchers only after it is durable while sync rounds, victims and
 * the lessor's expiry revokes interleave with writes still in flight. The checks are the memory
 * properties' own (guarantee-run.ts); expiry timing is checked within a window here, since a
 * revoke waiting for the disk delays the expiry fiber's next check.
 */
import { describe, expect, it } from "@effect/vitest"
import { newCoverage, property } from "./guarantee-run.js"

const coverage = newCoverage()

// no test has a wall-clock budget: property() fails a case that makes no progress for STALL_MS

// the last test checks what the runs before it covered: a shuffled run keeps their order
describe("watch guarantees over LMDB", { shuffle: false }, () => {
  it.effect(
    "with leases, expiry and put bursts (rounds driven directly, the lessor on the TestClock)",
    () =>
      property({
        mode: "direct",
        scenario: { leases: true, bursts: true },
        backend: "lmdb",
        coverage,
        maxCommands: 50,
        numRuns: Number(process.env.WATCH_LMDB_PROP_RUNS ?? 30)
      }),
    0
  )

  it.effect(
    "with the store's own loops on the TestClock",
    () =>
      property({
        mode: "clock",
        scenario: { leases: false, bursts: true },
        backend: "lmdb",
        coverage,
        maxCommands: 40,
        numRuns: Number(process.env.WATCH_LMDB_PROP_CLOCK_RUNS ?? 10)
      }),
    0
  )

  it("the runs reached expiries, victims and group commits", () => {
    expect(coverage.runs).toBeGreaterThan(0)
    expect(coverage.leases.expiries).toBeGreaterThan(0)
    expect(coverage.leases.expiryDeliveries).toBeGreaterThan(0)
    expect(coverage.victims).toBeGreaterThan(0)
    // group commit: batches staged while a commit was in flight went into one transaction
    expect(coverage.lmdbCommits).toBeGreaterThan(0)
    expect(coverage.lmdbCommits).toBeLessThan(coverage.lmdbBatches)
  })
})
