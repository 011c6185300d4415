/**
 * `bench <scenario>`: etcd's tools/benchmark scenarios against any --endpoints (src/bench). Flags
 * keep etcd's benchmark names; an unset flag takes the scenario's default. A table on stdout by
 * default, one JSON line with `-w json`; a progress bar on stderr only when it is a terminal.
 * A run that cannot be measured prints `Error: <reason>` and exits 1; a run with errors prints its
 * result and exits 1 too (its numbers are suspect).
 */
import { Args, Command, Options } from "@effect/cli"
import { Duration, Effect, Option } from "effect"
import type { BenchOptions, ScenarioName } from "../../bench/index.js"
import { scenarioNames } from "../../bench/options.js"
import { globalOptions, parseDuration, usage } from "./global.js"
import { write } from "./output.js"

const count = (name: string, description: string) =>
  Options.integer(name).pipe(Options.withDescription(description), Options.optional)

const options = {
  endpoints: globalOptions.endpoints,
  writeOut: Options.choice("write-out", ["table", "json"]).pipe(
    Options.withAlias("w"),
    Options.withDescription("set the output format (table, json)"),
    Options.withDefault("table" as const)
  ),
  scenario: Args.choice(
    scenarioNames.map((n) => [n, n] as [string, ScenarioName]),
    { name: "scenario" }
  ),
  conns: count("conns", "HTTP/2 connections (put/range 8, watch scenarios 1)"),
  clients: count("clients", "put/range: concurrent requesters, one request in flight each (32)"),
  total: count("total", "put/range: requests (10000); watch-create: watches created (10000)"),
  keySize: count("key-size", "put/range: key size in bytes (8)"),
  valSize: count("val-size", "value size in bytes (256; watch-latency at least 8)"),
  keySpaceSize: count(
    "key-space-size",
    "put: random keys in [0, n) (1); range: keys loaded first (1000); watch-catchup: keys (100)"
  ),
  streams: count("streams", "watch scenarios: Watch streams (10; watch-catchup 1)"),
  watchersPerStream: count(
    "watch-per-stream",
    "watchers per stream (watch 100, watch-latency 10, watch-catchup 10)"
  ).pipe(Options.withAlias("watchers-per-stream")),
  putTotal: count("put-total", "watch/watch-latency: puts to the watched key (1000)"),
  putRate: count("put-rate", "puts per second (watch-latency 100; watch 0 = pipelined, 64 in flight)"),
  history: count("history", "watch-catchup: revisions written before the watchers start (100000)"),
  prevKv: Options.boolean("prevkv").pipe(Options.withDescription("watch-latency: watchers ask for the previous kv")),
  stallTimeout: Options.text("stall-timeout").pipe(
    Options.withDescription("fail when nothing progresses for this long (e.g. 30s)"),
    Options.withDefault("30s")
  )
}

const field = <K extends string>(key: K, value: Option.Option<number>): { [P in K]?: number } =>
  (Option.isSome(value) ? { [key]: value.value } : {}) as { [P in K]?: number }

export const bench = Command.make("bench", options, (o) => {
  const stall = parseDuration(o.stallTimeout)
  if (stall === undefined) return usage(`bad --stall-timeout ${JSON.stringify(o.stallTimeout)} (e.g. 30s, 500ms)`)
  const benchOptions: BenchOptions = {
    endpoints: o.endpoints
      .split(",")
      .map((e) => e.trim())
      .filter((e) => e !== ""),
    ...field("conns", o.conns),
    ...field("clients", o.clients),
    ...field("total", o.total),
    ...field("keySize", o.keySize),
    ...field("valSize", o.valSize),
    ...field("keySpaceSize", o.keySpaceSize),
    ...field("streams", o.streams),
    ...field("watchersPerStream", o.watchersPerStream),
    ...field("putTotal", o.putTotal),
    ...field("putRate", o.putRate),
    ...field("history", o.history),
    ...(o.prevKv ? { prevKv: true } : {}),
    stallTimeoutMs: Math.max(1, Math.round(Duration.toMillis(stall)))
  }
  // the load generator is loaded on use (start-up time of the other commands)
  return Effect.flatMap(
    Effect.promise(() => import("../../bench/index.js")),
    ({ progressBar, renderJson, renderTable, run }) => {
      const bar = progressBar()
      return run(o.scenario, benchOptions, bar?.onProgress).pipe(
        Effect.ensuring(Effect.sync(() => bar?.clear())),
        Effect.matchEffect({
          onFailure: (e) => usage(e.reason),
          onSuccess: (r) =>
            Effect.sync(() => {
              write(o.writeOut === "json" ? `${renderJson(r)}\n` : renderTable(r))
              if (r.errors > 0) process.exitCode = 1
            })
        })
      )
    }
  )
}).pipe(
  Command.withDescription(
    "Measures a server like etcd's benchmark tool: put, txn-put, range, watch, watch-latency, watch-create, watch-catchup, watch-idle"
  )
)
