/**
 * The property test of issue 2: random sequences of put/delete/txn (nested, with compares)/
 * compact/historical range run against the store and against a reference model (full snapshots
 * per revision); every response, the commit listener's events, the lessor's attachments and, at the
 * end, the whole readable history must agree. LMDB runs fewer sequences, with reopens.
 * MVCC_PROP_RUNS / MVCC_LMDB_RUNS override the run counts (for local mutation checks).
 */
import { describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { type Cmd, checkHistory, close, cmdArb, type Harness, open, step } from "./driver.js"
import { lmdbStore, memoryStore, tempDir } from "./helpers.js"
import { Model } from "./model.js"

const runSequence = (cmds: ReadonlyArray<Cmd>, openLayer: () => ReturnType<typeof memoryStore>) =>
  Effect.gen(function* () {
    const m = new Model()
    let h: Harness = yield* open(openLayer())
    const reopen = () =>
      Effect.gen(function* () {
        yield* close(h)
        h = yield* open(openLayer(), h)
        // the restored store equals the model, history included
        yield* checkHistory(h, m)
      })
    try {
      for (const cmd of cmds) yield* step(h, m, cmd, reopen)
      yield* checkHistory(h, m)
    } finally {
      yield* close(h)
    }
  })

describe("MvccStore vs reference model", () => {
  it.live.prop(
    "memory backend",
    [fc.array(cmdArb(false), { minLength: 1, maxLength: 60 })],
    ([cmds]) => runSequence(cmds, () => memoryStore()),
    { fastCheck: { numRuns: Number(process.env.MVCC_PROP_RUNS ?? 600) } }
  )

  it.live.prop(
    "LMDB backend, with reopens",
    [fc.array(cmdArb(true), { minLength: 5, maxLength: 40 })],
    ([cmds]) => {
      const { dir, cleanup } = tempDir()
      return runSequence(cmds, () => lmdbStore(dir) as ReturnType<typeof memoryStore>).pipe(
        Effect.ensuring(Effect.sync(cleanup))
      )
    },
    { fastCheck: { numRuns: Number(process.env.MVCC_LMDB_RUNS ?? 40) } }
  )
})
