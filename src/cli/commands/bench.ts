/**
 * `bench <scenario>`: etcd's tools/benchmark scenarios against any --endpoints (src/bench). Flags
 * keep etcd's benchmark names; an unset flag takes the scenario's default. A table on stdout by
 * default, one JSON line with `-w json`; a progress bar on stderr only when it is a terminal.
 * A run that cannot be measured prints `Error: <reason>` and exits 1; a run with errors prints its
 * result and exits 1 too (its numbers are suspect).
 */
import { Effect } from "effect"
import type { BenchOptions, ScenarioName } from "../../bench/index.js"
import type { benchFlags } from "../flags/bench-flags.js"
import { BENCH_SCENARIOS } from "../flags/bench-flags.js"
import type { ParsedRun } from "../flags/parse.js"
import { usage } from "./global.js"
import { write } from "./output.js"
import { UsageError, valuesOf } from "./usage.js"

const COUNTS = {
  conns: "conns",
  clients: "clients",
  total: "total",
  keySize: "key-size",
  valSize: "val-size",
  keySpaceSize: "key-space-size",
  streams: "streams",
  putTotal: "put-total",
  putRate: "put-rate",
  history: "history"
} as const

export const runBench = (p: ParsedRun): Effect.Effect<void> => {
  const o = valuesOf<typeof benchFlags>(p)
  const scenario = p.args[0]
  if (p.args.length !== 1 || !(BENCH_SCENARIOS as ReadonlyArray<string>).includes(scenario!)) {
    return usage(new UsageError(`bench command needs one scenario: ${BENCH_SCENARIOS.join(", ")}`))
  }
  const benchOptions: Record<string, unknown> = {
    endpoints: o.endpoints.map((e) => e.trim()).filter((e) => e !== ""),
    stallTimeoutMs: Math.max(1, Math.round(o["stall-timeout"]))
  }
  // an unset count takes the scenario's default
  for (const [field, flag] of Object.entries(COUNTS)) if (p.set.has(flag)) benchOptions[field] = o[flag]
  if (p.set.has("watch-per-stream")) benchOptions["watchersPerStream"] = o["watch-per-stream"]
  else if (p.set.has("watchers-per-stream")) benchOptions["watchersPerStream"] = o["watchers-per-stream"]
  if (o.prevkv) benchOptions["prevKv"] = true
  // the load generator is loaded on use (start-up time of the other commands)
  return Effect.flatMap(
    Effect.promise(() => import("../../bench/index.js")),
    ({ progressBar, renderJson, renderTable, run }) => {
      const bar = progressBar()
      return run(scenario as ScenarioName, benchOptions as unknown as BenchOptions, bar?.onProgress).pipe(
        Effect.ensuring(Effect.sync(() => bar?.clear())),
        Effect.matchEffect({
          onFailure: (e) => usage(new UsageError(e.reason, 1)),
          onSuccess: (r) =>
            Effect.sync(() => {
              write(o["write-out"] === "json" ? `${renderJson(r)}\n` : renderTable(r))
              if (r.errors > 0) process.exitCode = 1
            })
        })
      )
    }
  )
}
