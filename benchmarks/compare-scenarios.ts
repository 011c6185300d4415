/**
 * What `npm run bench:compare` measures: each scenario's load (full and --quick sizes), its unit,
 * which way is better, and the issue-6 target for the ratio etcd-effect / etcd.
 *
 * Full sizes are chosen so each timed phase lasts roughly 1–10 s against etcd 3.4.23 on a 2-core
 * machine (etcd there: ~4 M events/s to 10k watchers, ~13k watch creations/s, ~0.77 M catch-up
 * events/s, ~4k durable puts/s with 32 writers). --quick sizes are a smoke run, not a measurement.
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

/** A target for the ratio etcd-effect / etcd: at least (higher is better) or at most (lower is better). */
export interface Target {
  readonly op: ">=" | "<="
  readonly ratio: number
}

export type LoadScenario = "put" | "range" | "watch" | "watch-latency" | "watch-create" | "watch-catchup"

export interface ScenarioSpec {
  /** the name --only takes */
  readonly id: string
  readonly title: string
  /** "run": one Bench.run; "idle-rss": RSS growth per idle watcher, read from /proc/<pid>/status */
  readonly kind: "run" | "idle-rss"
  /** the load generator's scenario (kind "run") */
  readonly bench?: LoadScenario
  readonly options: LoadOptions
  readonly quick: LoadOptions
  /**
   * kind "run": a shorter run of the same load on the same server first, not recorded (left out
   * with --quick). Both systems get it: a JIT-compiled server's first second runs interpreted code,
   * and a benchmark of the steady state should not time that (the "-cold" row below does).
   */
  readonly warmUp?: LoadOptions
  readonly unit: string
  readonly higherIsBetter: boolean
  /** absent: informational, no target */
  readonly target?: Target
  readonly describe: (o: LoadOptions) => string
}

const n = (x: number | undefined) => (x === undefined ? "default" : x.toLocaleString("en-US"))

export const scenarios: ReadonlyArray<ScenarioSpec> = [
  {
    id: "watch",
    title: "watch fan-out",
    kind: "run",
    bench: "watch",
    options: { streams: 10, watchersPerStream: 1000, putTotal: 500, putRate: 0 },
    warmUp: { streams: 10, watchersPerStream: 1000, putTotal: 100, putRate: 0 },
    quick: { streams: 2, watchersPerStream: 50, putTotal: 50, putRate: 0 },
    unit: "events/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 1 },
    describe: (o) =>
      `${n(o.streams)} streams × ${n(o.watchersPerStream)} watchers of one key, ${n(o.putTotal)} puts as fast as possible`
  },
  {
    id: "watch-latency",
    title: "watch latency",
    kind: "run",
    bench: "watch-latency",
    options: { streams: 10, watchersPerStream: 10, putTotal: 2500, putRate: 500 },
    warmUp: { streams: 10, watchersPerStream: 10, putTotal: 1000, putRate: 500 },
    quick: { streams: 2, watchersPerStream: 5, putTotal: 200, putRate: 200 },
    unit: "ms (p99)",
    higherIsBetter: false,
    target: { op: "<=", ratio: 1 },
    describe: (o) =>
      `${n(o.streams)} streams × ${n(o.watchersPerStream)} watchers, ${n(o.putTotal)} puts at ${n(o.putRate)}/s; put → event`
  },
  {
    id: "watch-latency-cold",
    title: "watch latency, first seconds after start",
    kind: "run",
    bench: "watch-latency",
    options: { streams: 10, watchersPerStream: 10, putTotal: 2500, putRate: 500 },
    quick: { streams: 2, watchersPerStream: 5, putTotal: 200, putRate: 200 },
    unit: "ms (p99)",
    higherIsBetter: false,
    describe: (o) =>
      `as watch-latency, without its warm-up: the first ${n(o.putTotal)} puts a fresh server serves (informational)`
  },
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
    unit: "puts/s",
    higherIsBetter: true,
    target: { op: ">=", ratio: 1 },
    describe: (o) => `${n(o.clients)} clients, ${n(o.total)} puts, each acknowledged after fsync`
  },
  {
    id: "range",
    title: "range",
    kind: "run",
    bench: "range",
    options: { clients: 32, total: 10000 },
    warmUp: { clients: 32, total: 2000 },
    quick: { clients: 8, total: 500, keySpaceSize: 100 },
    unit: "ranges/s",
    higherIsBetter: true,
    describe: (o) =>
      `${n(o.clients)} clients, ${n(o.total)} linearizable single-key ranges over ${n(o.keySpaceSize ?? 1000)} keys`
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
  }
]

/** The scenarios --only names (comma-separated), in table order; unknown names are an error. */
export const selectScenarios = (only: string | undefined): ReadonlyArray<ScenarioSpec> | string => {
  if (only === undefined || only.trim() === "") return scenarios
  const wanted = only
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const unknown = wanted.filter((w) => !scenarios.some((s) => s.id === w))
  if (unknown.length > 0) {
    return `unknown scenario ${unknown.join(", ")} (known: ${scenarios.map((s) => s.id).join(", ")})`
  }
  return scenarios.filter((s) => wanted.includes(s.id))
}
