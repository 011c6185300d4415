/**
 * What `npm run bench:compare` measures: each scenario's load (full and --quick sizes) on each
 * instrument, its unit, which way is better, and issue 29's target (round 3) for ours against the
 * better of the etcds in the run.
 *
 * Two instruments drive the same loads: `bench` is src/bench (the `etcd-effect bench` generator,
 * in the bench:compare process), `etcd-tool` is etcd's own tools/benchmark (Go, clientv3 and
 * grpc-go, built by benchmarks/go/build.sh), a client nobody here wrote. Full sizes are chosen so
 * each timed phase lasts roughly 1–10 s on a 2-core machine. --quick sizes are a smoke run.
 */

/** The load generator's options minus the endpoints (a structural twin of src/bench's BenchOptions). */
export interface LoadOptions {
  readonly conns?: number
  readonly clients?: number
  readonly total?: number
  readonly keySize?: number
  readonly valSize?: number
  readonly keySpaceSize?: number
  readonly streams?: number
  readonly watchersPerStream?: number
  readonly putTotal?: number
  readonly putRate?: number
  readonly history?: number
  readonly prevKv?: boolean
}

/**
 * A target: for the ratio ours / the better etcd (`ratio`), or for our own figure (`absolute`, in
 * the scenario's unit), at least (higher is better) or at most (lower is better).
 */
export interface Target {
  readonly op: ">=" | "<="
  readonly ratio?: number
  readonly absolute?: number
}

export type LoadScenario = "put" | "txn-put" | "range" | "watch" | "watch-latency" | "watch-create" | "watch-catchup"

export type Instrument = "bench" | "etcd-tool"
export const INSTRUMENTS: ReadonlyArray<Instrument> = ["bench", "etcd-tool"]

/** How etcd's tools/benchmark runs a scenario: its arguments, and which figure of its report counts. */
export interface ToolSpec {
  /** global flags and the command, e.g. ["--conns", "8", "--clients", "32", "put", "--total", "10000"] */
  readonly args: ReadonlyArray<string>
  readonly quick: ReadonlyArray<string>
  /** a shorter run of the same load first, not recorded (as `warmUp`) */
  readonly warmUp?: ReadonlyArray<string>
  /** the report's summary to read (the tool prints one per phase), e.g. "Watch events summary" */
  readonly section?: string
  /** Requests/sec of that summary, or its 99th percentile (ms) */
  readonly metric: "rate" | "p99"
  /** a key to write before the run (range reads it) */
  readonly seedKey?: string
}

export interface ScenarioSpec {
  /** the name --only takes */
  readonly id: string
  readonly title: string
  /**
   * "run": one timed load; "idle-rss": RSS growth per idle watcher, read from /proc/<pid>/status;
   * "serve-rss": the server's VmRSS 3 s after it first answered, nothing else done
   */
  readonly kind: "run" | "idle-rss" | "serve-rss"
  /** the src/bench scenario (kind "run"); absent: not on this instrument */
  readonly bench?: LoadScenario
  readonly options: LoadOptions
  readonly quick: LoadOptions
  /**
   * kind "run": a shorter run of the same load on the same server first, not recorded (left out
   * with --quick). Every system gets it: a JIT-compiled server's first second runs interpreted
   * code, and a benchmark of the steady state should not time that (the "-cold" row does).
   */
  readonly warmUp?: LoadOptions
  /** etcd's tools/benchmark; absent: not on that instrument */
  readonly tool?: ToolSpec
  readonly unit: string
  readonly higherIsBetter: boolean
  /** absent: informational, no target */
  readonly target?: Target
  readonly describe: (o: LoadOptions) => string
}

const n = (x: number | undefined) => (x === undefined ? "default" : x.toLocaleString("en-US"))
const s = (x: number) => String(x)

/** The tool's unary loads: 32 clients over 8 connections, 8-byte keys, 256-byte values (ours alike). */
const unary = (command: string, total: number, extra: ReadonlyArray<string> = []) => [
  "--conns",
  "8",
  "--clients",
  "32",
  command,
  ...(command === "range" ? [] : ["--key-size", "8", "--val-size", "256"]),
  "--total",
  s(total),
  ...extra
]

const latencyTool = (rate: number, total: number) => [
  "watch-latency",
  "--streams",
  "10",
  "--watchers-per-stream",
  "10",
  "--put-total",
  s(total),
  "--put-rate",
  s(rate),
  "--val-size",
  "256"
]

const watchLatency = (id: string, rate: number, total: number, warm: boolean): ScenarioSpec => ({
  id,
  title: warm ? `watch latency at ${n(rate)} puts/s` : "watch latency, first seconds after start",
  kind: "run",
  bench: "watch-latency",
  options: { streams: 10, watchersPerStream: 10, putTotal: total, putRate: rate },
  ...(warm ? { warmUp: { streams: 10, watchersPerStream: 10, putTotal: Math.ceil(total / 3), putRate: rate } } : {}),
  quick: { streams: 2, watchersPerStream: 5, putTotal: 200, putRate: 200 },
  tool: {
    args: latencyTool(rate, total),
    quick: latencyTool(200, 200),
    ...(warm ? { warmUp: latencyTool(rate, Math.ceil(total / 3)) } : {}),
    section: "Watch events summary",
    metric: "p99"
  },
  unit: "ms (p99)",
  higherIsBetter: false,
  ...(warm ? { target: { op: "<=", ratio: 0.5 } } : {}),
  describe: (o) =>
    warm
      ? `${n(o.streams)} streams × ${n(o.watchersPerStream)} watchers, ${n(o.putTotal)} puts at ${n(o.putRate)}/s; put → event`
      : `as watch-latency-1000, without its warm-up: the first ${n(o.putTotal)} puts a fresh server serves (informational)`
})

const fanOutTool = (perStream: number, puts: number) => [
  "--conns",
  "1",
  "--clients",
  "1",
  "watch",
  "--streams",
  "10",
  "--watch-per-stream",
  s(perStream),
  "--put-total",
  s(puts),
  "--key-size",
  "8"
]

export const scenarios: ReadonlyArray<ScenarioSpec> = [
  {
    id: "watch",
    title: "watch fan-out",
    kind: "run",
    bench: "watch",
    options: { streams: 10, watchersPerStream: 1000, putTotal: 500, putRate: 0 },
    warmUp: { streams: 10, watchersPerStream: 1000, putTotal: 100, putRate: 0 },
    quick: { streams: 2, watchersPerStream: 50, putTotal: 50, putRate: 0 },
    tool: {
      args: fanOutTool(1000, 200),
      quick: fanOutTool(50, 50),
      section: "Watch events received summary",
      metric: "rate"
    },
    unit: "events/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 3 },
    describe: (o) =>
      `${n(o.streams)} streams × ${n(o.watchersPerStream)} watchers of one key, ${n(o.putTotal)} puts as fast as possible`
  },
  watchLatency("watch-latency-100", 100, 1000, true),
  watchLatency("watch-latency-1000", 1000, 5000, true),
  watchLatency("watch-latency-cold", 1000, 5000, false),
  {
    id: "watch-create",
    title: "watch creation",
    kind: "run",
    bench: "watch-create",
    options: { total: 20000 },
    warmUp: { total: 5000 },
    quick: { total: 1000 },
    unit: "watches/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 1 },
    describe: (o) => `${n(o.total)} watches on distinct keys, one stream`
  },
  {
    id: "watch-catchup",
    title: "watch catch-up",
    kind: "run",
    bench: "watch-catchup",
    options: { history: 100000, streams: 1, watchersPerStream: 10 },
    warmUp: { history: 10000, streams: 1, watchersPerStream: 10 },
    quick: { history: 2000, streams: 1, watchersPerStream: 2 },
    unit: "events/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 2 },
    describe: (o) =>
      `${n(o.history)} revisions of history replayed to ${n(o.streams)} stream × ${n(o.watchersPerStream)} prefix watchers`
  },
  {
    id: "put",
    title: "durable puts",
    kind: "run",
    bench: "put",
    options: { clients: 32, total: 10000 },
    warmUp: { clients: 32, total: 2000 },
    quick: { clients: 8, total: 300 },
    tool: { args: unary("put", 10000), quick: unary("put", 300), warmUp: unary("put", 2000), metric: "rate" },
    unit: "puts/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 1.5 },
    describe: (o) => `${n(o.clients)} clients, ${n(o.total)} puts, each acknowledged after fsync`
  },
  {
    id: "txn-put",
    title: "durable txn-puts",
    kind: "run",
    bench: "txn-put",
    options: { clients: 32, total: 10000 },
    warmUp: { clients: 32, total: 2000 },
    quick: { clients: 8, total: 300 },
    tool: {
      args: unary("txn-put", 10000),
      quick: unary("txn-put", 300),
      warmUp: unary("txn-put", 2000),
      metric: "rate"
    },
    unit: "txns/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 2 },
    describe: (o) => `${n(o.clients)} clients, ${n(o.total)} txns of one put, each acknowledged after fsync`
  },
  {
    id: "range",
    title: "linearizable range",
    kind: "run",
    bench: "range",
    options: { clients: 32, total: 10000 },
    warmUp: { clients: 32, total: 2000 },
    quick: { clients: 8, total: 500, keySpaceSize: 100 },
    tool: {
      args: unary("range", 10000, ["bench-range-key"]),
      quick: unary("range", 500, ["bench-range-key"]),
      warmUp: unary("range", 2000, ["bench-range-key"]),
      metric: "rate",
      seedKey: "bench-range-key"
    },
    unit: "ranges/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 2 },
    describe: (o) =>
      `${n(o.clients)} clients, ${n(o.total)} linearizable single-key ranges over ${n(o.keySpaceSize ?? 1000)} keys (etcd-tool: one key)`
  },
  {
    id: "watch-get",
    title: "serializable gets while 10,000 watchers catch up",
    kind: "run",
    options: {},
    quick: {},
    tool: {
      args: ["watch-get", "--watchers", "10000", "--streams", "1", "--events", "8"],
      quick: ["watch-get", "--watchers", "200", "--streams", "1", "--events", "8"],
      section: "Get during watch summary",
      metric: "rate"
    },
    unit: "gets/s",
    higherIsBetter: true,
    describe: () => "10,000 unsynced watchers on one stream, 8 events each, gets meanwhile (etcd-tool only)"
  },
  {
    id: "watch-idle",
    title: "idle watcher RSS, many per stream",
    kind: "idle-rss",
    options: { streams: 100, watchersPerStream: 100 },
    quick: { streams: 10, watchersPerStream: 10 },
    unit: "B/watcher",
    higherIsBetter: false,
    target: { op: "<=", ratio: 1 },
    describe: (o) => `${n(o.streams)} streams × ${n(o.watchersPerStream)} idle watchers on distinct keys; VmRSS growth`
  },
  {
    id: "watch-idle-streams",
    title: "idle watcher RSS, one per stream",
    kind: "idle-rss",
    options: { streams: 10000, watchersPerStream: 1 },
    quick: { streams: 100, watchersPerStream: 1 },
    unit: "B/watcher",
    higherIsBetter: false,
    target: { op: "<=", ratio: 1 },
    describe: (o) => `${n(o.streams)} streams × ${n(o.watchersPerStream)} idle watcher; VmRSS growth`
  },
  {
    id: "serve-idle",
    title: "idle server RSS",
    kind: "serve-rss",
    options: {},
    quick: {},
    unit: "MB",
    higherIsBetter: false,
    target: { op: "<=", absolute: 70 },
    describe: () => "VmRSS 3 s after the server first answered a Range, nothing else done"
  }
]

/** Whether a scenario runs on an instrument (the RSS scenarios belong to neither client: "bench"). */
export const runsOn = (spec: ScenarioSpec, instrument: Instrument): boolean =>
  instrument === "etcd-tool" ? spec.tool !== undefined : spec.kind !== "run" || spec.bench !== undefined

/** The scenarios --only names (comma-separated), in table order; unknown names are an error. */
export const selectScenarios = (only: string | undefined): ReadonlyArray<ScenarioSpec> | string => {
  if (only === undefined || only.trim() === "") return scenarios
  const wanted = only
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "")
  const unknown = wanted.filter((w) => !scenarios.some((x) => x.id === w))
  if (unknown.length > 0) {
    return `unknown scenario ${unknown.join(", ")} (known: ${scenarios.map((x) => x.id).join(", ")})`
  }
  return scenarios.filter((x) => wanted.includes(x.id))
}
