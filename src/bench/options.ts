/**
 * The bench's options and each scenario's defaults (etcd's tools/benchmark where it has them),
 * resolved into the effective settings a run uses and reports.
 */
import { BenchError } from "./errors.js"

/** The scenarios `run` knows, etcd's benchmark tool's (put, txn-put, range) and the watch ones. */
export const scenarioNames = [
  "put",
  "txn-put",
  "range",
  "watch",
  "watch-latency",
  "watch-create",
  "watch-catchup",
  "watch-idle"
] as const
/** One of `scenarioNames`. */
export type ScenarioName = (typeof scenarioNames)[number]

/**
 * What a benchmark runs against and how hard: endpoints, connections, clients, totals, key and
 * value sizes, and each scenario's own.
 */
export interface BenchOptions {
  /** "127.0.0.1:2379"; an "http://" prefix is accepted and stripped */
  readonly endpoints: ReadonlyArray<string>
  /** HTTP/2 connections: put/range 8 (spreads the requesters), watch scenarios 1 (as etcd's tool) */
  readonly conns?: number
  /** put/txn-put/range: concurrent requesters, each with one request in flight (32) */
  readonly clients?: number
  /** put 10000, range 10000, watch-create 10000 */
  readonly total?: number
  /** put/range key bytes (8) */
  readonly keySize?: number
  /** value bytes of every put (256; watch-latency at least 8: the send time) */
  readonly valSize?: number
  /** put: random keys in [0, n) (1); range: keys loaded first (1000); watch-catchup: keys cycled (100) */
  readonly keySpaceSize?: number
  /** watch scenarios: gRPC Watch streams (10; watch-catchup 1) */
  readonly streams?: number
  /** watchers per stream: watch 100, watch-latency 10, watch-catchup 10, watch-idle 100 */
  readonly watchersPerStream?: number
  /** watch / watch-latency: puts to the watched key (1000) */
  readonly putTotal?: number
  /** watch-latency: puts per second (100); watch: 0 = pipelined, 64 in flight */
  readonly putRate?: number
  /** watch-catchup: revisions written before the watchers start (100000) */
  readonly history?: number
  /** watch-latency: watchers ask for the previous kv (false) */
  readonly prevKv?: boolean
  /** fail with a BenchError when nothing progresses for this long (30000 ms) */
  readonly stallTimeoutMs?: number
}

/** Every option, resolved; what a scenario does not use is still there but not reported. */
export interface Settings {
  readonly endpoints: ReadonlyArray<string>
  readonly conns: number
  readonly clients: number
  readonly total: number
  readonly keySize: number
  readonly valSize: number
  readonly keySpaceSize: number
  readonly streams: number
  readonly watchersPerStream: number
  readonly putTotal: number
  readonly putRate: number
  readonly history: number
  readonly prevKv: boolean
  readonly stallTimeoutMs: number
}

/** The options each scenario reports as its parameters (its effective settings). */
export const reportedOptions: Record<ScenarioName, ReadonlyArray<keyof Settings>> = {
  put: ["conns", "clients", "total", "keySize", "valSize", "keySpaceSize"],
  "txn-put": ["conns", "clients", "total", "keySize", "valSize", "keySpaceSize"],
  range: ["conns", "clients", "total", "keySize", "valSize", "keySpaceSize"],
  watch: ["conns", "streams", "watchersPerStream", "putTotal", "putRate", "valSize"],
  "watch-latency": ["conns", "streams", "watchersPerStream", "putTotal", "putRate", "valSize", "prevKv"],
  "watch-create": ["total"],
  "watch-catchup": ["conns", "streams", "watchersPerStream", "history", "keySpaceSize", "valSize"],
  "watch-idle": ["conns", "streams", "watchersPerStream"]
}

const defaults = (scenario: ScenarioName): Omit<Settings, "endpoints"> => {
  const watchy = scenario !== "put" && scenario !== "txn-put" && scenario !== "range"
  return {
    conns: watchy ? 1 : 8,
    clients: 32,
    total: 10000,
    keySize: 8,
    valSize: 256,
    keySpaceSize: scenario === "range" ? 1000 : scenario === "watch-catchup" ? 100 : 1,
    streams: scenario === "watch-catchup" ? 1 : 10,
    watchersPerStream: scenario === "watch-latency" || scenario === "watch-catchup" ? 10 : 100,
    putTotal: 1000,
    putRate: scenario === "watch-latency" ? 100 : 0,
    history: 100000,
    prevKv: false,
    stallTimeoutMs: 30000
  }
}

/** "http://127.0.0.1:2379/" → "127.0.0.1:2379"; TLS endpoints are refused (the bench speaks h2c). */
export const normalizeEndpoint = (endpoint: string): string | BenchError => {
  const e = endpoint.trim()
  if (e.startsWith("https://") || e.startsWith("unixs://")) {
    return new BenchError({ reason: `endpoint ${e}: TLS is not supported by the bench (plain http:// only)` })
  }
  const bare = e.replace(/^http:\/\//, "").replace(/\/+$/, "")
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:/\s]+):\d+$/.test(bare)) {
    return new BenchError({ reason: `endpoint ${JSON.stringify(endpoint)}: expected host:port` })
  }
  return bare
}

const check = (name: string, value: number, min: number): BenchError | undefined =>
  Number.isInteger(value) && value >= min
    ? undefined
    : new BenchError({ reason: `${name} must be an integer ≥ ${min} (got ${value})` })

export const resolveSettings = (scenario: ScenarioName, options: BenchOptions): Settings | BenchError => {
  if (!scenarioNames.includes(scenario))
    return new BenchError({ reason: `unknown scenario ${JSON.stringify(scenario)}` })
  const endpoints: Array<string> = []
  for (const e of options.endpoints) {
    const n = normalizeEndpoint(e)
    if (n instanceof BenchError) return n
    endpoints.push(n)
  }
  if (endpoints.length === 0) return new BenchError({ reason: "no endpoints" })
  const d = defaults(scenario)
  const s: Settings = {
    endpoints,
    conns: options.conns ?? d.conns,
    clients: options.clients ?? d.clients,
    total: options.total ?? d.total,
    keySize: options.keySize ?? d.keySize,
    valSize: Math.max(scenario === "watch-latency" ? 8 : 0, options.valSize ?? d.valSize),
    keySpaceSize: options.keySpaceSize ?? d.keySpaceSize,
    streams: options.streams ?? d.streams,
    watchersPerStream: options.watchersPerStream ?? d.watchersPerStream,
    putTotal: options.putTotal ?? d.putTotal,
    putRate: options.putRate ?? d.putRate,
    history: options.history ?? d.history,
    prevKv: options.prevKv ?? d.prevKv,
    stallTimeoutMs: options.stallTimeoutMs ?? d.stallTimeoutMs
  }
  const problem =
    check("conns", s.conns, 1) ??
    check("clients", s.clients, 1) ??
    check("total", s.total, 1) ??
    check("key-size", s.keySize, 0) ??
    check("val-size", s.valSize, 0) ??
    check("key-space-size", s.keySpaceSize, 1) ??
    check("streams", s.streams, 1) ??
    check("watch-per-stream", s.watchersPerStream, 1) ??
    check("put-total", s.putTotal, 1) ??
    check("put-rate", s.putRate, scenario === "watch-latency" ? 1 : 0) ??
    check("history", s.history, 1) ??
    check("stall-timeout", s.stallTimeoutMs, 1)
  return problem ?? s
}

/**
 * put/range keys: the index zero-padded to `size` bytes (longer when the index needs more digits,
 * so keys stay distinct). Size 0 is the empty key, which servers must refuse (an error check).
 */
export const keyOf = (index: number, size: number): string => (size === 0 ? "" : String(index).padStart(size, "0"))
