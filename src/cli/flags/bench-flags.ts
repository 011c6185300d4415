/**
 * `bench`'s flags: etcd's benchmark tool's names (pflag); an unset count takes the scenario's
 * default (src/bench/options.ts).
 */
import type { CommandSpec } from "./command.js"
import { bool, choice, duration, int, strings } from "./flag.js"

/** the scenarios of src/bench (bench/options.ts `scenarioNames`, which loads more than the bin may) */
export const BENCH_SCENARIOS = [
  "put",
  "txn-put",
  "range",
  "watch",
  "watch-latency",
  "watch-create",
  "watch-catchup",
  "watch-idle"
] as const

const count = (description: string) => int({ description, shownDefault: "n" })

export const benchFlags = {
  endpoints: strings({ default: ["127.0.0.1:2379"], description: "gRPC endpoints" }),
  "write-out": choice({
    short: "w",
    choices: ["table", "json"],
    default: "table",
    description: "set the output format (table, json)"
  }),
  conns: count("HTTP/2 connections (put/range 8, watch scenarios 1)"),
  clients: count("put, txn-put, range: concurrent clients, one request each (32)"),
  total: count("put, txn-put, range: requests; watch-create: watches (10000)"),
  "key-size": count("put, txn-put, range: key size in bytes (8)"),
  "val-size": count("value size in bytes (256; watch-latency at least 8)"),
  "key-space-size": count("keys: put [0, n) (1), range (1000), watch-catchup (100)"),
  streams: count("watch scenarios: Watch streams (10; watch-catchup 1)"),
  "watch-per-stream": count("watchers per stream (watch 100, the others 10)"),
  "watchers-per-stream": { ...count("the same as --watch-per-stream"), hidden: true },
  "put-total": count("watch/watch-latency: puts to the watched key (1000)"),
  "put-rate": count("puts/s (watch-latency 100; watch 0: pipelined, 64 in flight)"),
  history: count("watch-catchup: revisions written first (100000)"),
  prevkv: bool({ description: "watch-latency: watchers ask for the previous kv" }),
  "stall-timeout": duration({ default: "30s", description: "fail when nothing progresses for this long" })
} as const

export const bench: CommandSpec = {
  path: "bench",
  summary: "Measures a server as etcd's benchmark tool does",
  usage: "[options] <scenario>",
  details: [`<scenario>: ${BENCH_SCENARIOS.join(", ")}.`],
  flags: benchFlags,
  globals: false,
  dialect: "pflag",
  runs: "server"
}
