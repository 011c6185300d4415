/**
 * The load generator behind `etcd-effect bench` and `npm run bench:compare`: etcd's benchmark
 * scenarios against any etcd-compatible endpoint, over raw HTTP/2 gRPC (src/h2/grpc-client.ts) with
 * hand-encoded requests and shallow decoding, so the client is not what gets measured.
 *
 * ```ts
 * run("watch", { endpoints: ["127.0.0.1:2379"], streams: 10, watchersPerStream: 1000 })
 * // → Effect<BenchResult, BenchError>
 * ```
 *
 * @module etcd-effect/bench
 */
export { BenchError } from "./errors.js"
export type { LatencySummary } from "./latency.js"
export { type BenchOptions, type ScenarioName, scenarioNames } from "./options.js"
export { progressBar, renderJson, renderTable } from "./report.js"
export type { BenchResult, Progress } from "./result.js"
export { openIdleWatchers, run } from "./run.js"
