/**
 * etcd's watch guarantees (reference §5.2, the robustness validator's rules) checked against the
 * persisted history of the real store over the memory backend: random writes and multi-key txns,
 * watchers starting at past/current/future revisions with filters and prev_kv, streams that stop
 * draining (victims), small channels, batches and sync rounds, compaction mid-stream, progress
 * requests. The driver is guarantee-run.ts, the checker history-check.ts; leases are in
 * lease-expiry.test.ts, the LMDB backend in guarantees-lmdb.test.ts.
 *
 * No test has a wall-clock budget: property() fails a case that makes no progress for STALL_MS
 * (test/support/stall.ts), and 1,500 cases take several times longer on a loaded machine.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { newCoverage, property } from "./guarantee-run.js"

const scenario = { leases: false, bursts: false }

describe("watch guarantees against the persisted history", () => {
  // Direct mode needs no clock: live, with loop periods of an hour so the loops stay out of the way
  // (the TestContext's fiber supervision makes each case's layer several times dearer).
  it.live(
    "ordered, unique, reliable, atomic, resumable, bookmarkable, IsCreate, prev_kv and filters hold (rounds driven directly), and the runs reached victims, compaction responses, multi-revision batches and future watchers",
    () => {
      // this test's own coverage: it holds whichever test of the file ran before it
      const coverage = newCoverage()
      return property({
        mode: "direct",
        scenario,
        backend: "memory",
        coverage,
        maxCommands: 60,
        numRuns: Number(process.env.WATCH_PROP_RUNS ?? 1500)
      }).pipe(
        Effect.andThen(() => {
          expect(coverage.runs).toBeGreaterThan(0)
          expect(coverage.victims).toBeGreaterThan(coverage.runs / 10)
          expect(coverage.compactionResponses).toBeGreaterThan(0)
          expect(coverage.multiRevisionBatches).toBeGreaterThan(0)
          expect(coverage.progressAll).toBeGreaterThan(0)
          expect(coverage.futureWatchers).toBeGreaterThan(0)
          expect(coverage.moreThanOneRound).toBeGreaterThan(0)
        })
      )
    },
    0
  )

  it.effect(
    "the same guarantees with the store's own loops on the TestClock",
    () =>
      property({
        mode: "clock",
        scenario,
        backend: "memory",
        coverage: newCoverage(),
        maxCommands: 40,
        numRuns: Number(process.env.WATCH_PROP_CLOCK_RUNS ?? 60)
      }),
    0
  )
})
