/**
 * Our server alone under bench:compare's two watch loads (issue 12, levers 3e–3i), measured the way
 * a shared machine allows:
 *
 *   npm run build && node dist/benchmarks/watch-probe.js [--rounds 3] [--dist DIR ...]
 *
 * - fan-out: 10 streams × 1,000 watchers of one key, 500 puts of 256 B (bench:compare's `watch`):
 *   events/s and the server's CPU time for the run (user + system from /proc/<pid>/stat);
 * - idle: 100 streams × 100 idle watchers on distinct keys (bench:compare's `watch-idle`): VmRSS
 *   growth per watcher, after the same warm-up and settling.
 *
 * Each `--dist` is a built checkout (default: this one), so an old and a new build
 * alternate within each round. `NODE_ARGS` (space-separated) are passed to the server's node.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import * as Bench from "../src/bench/index.js"
import { freePort, sleep } from "./etcd.js"
import { readRss } from "./compare-servers.js"

const argv = process.argv.slice(2)
const rounds = Number(argv[argv.indexOf("--rounds") + 1] ?? 3) || 3
const here = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..")
const dists = argv.flatMap((a, i) => (argv[i - 1] === "--dist" ? [path.resolve(a)] : []))
if (dists.length === 0) dists.push(here)
const TICK_S = 0.01

const cpuSeconds = (pid: number): number => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(f[11]) + Number(f[12])) * TICK_S
}

const withServer = async <A>(dist: string, body: (pid: number, endpoints: Array<string>) => Promise<A>) => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "watch-probe-"))
  const port = await freePort()
  const args = [
    ...(process.env.NODE_ARGS ?? "").split(" ").filter((a) => a !== ""),
    path.join(dist, "cli", "main.js"),
    "serve",
    "--name",
    "probe",
    "--data-dir",
    path.join(data, "d"),
    "--listen-client-urls",
    `http://127.0.0.1:${port}`,
    "--log-level",
    "warn"
  ]
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] })
  const endpoints = [`127.0.0.1:${port}`]
  try {
    for (let i = 0; ; i++) {
      const up = await Effect.runPromise(
        Effect.scoped(Bench.openIdleWatchers({ endpoints, streams: 1, watchersPerStream: 10 })).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
      )
      if (up) break
      if (i > 150) throw new Error("serve did not start")
      await sleep(200)
    }
    return await body(child.pid!, endpoints)
  } finally {
    child.kill("SIGTERM")
    await new Promise((r) => child.once("exit", r))
    fs.rmSync(data, { recursive: true, force: true })
  }
}

const fanOut = (dist: string) =>
  withServer(dist, async (pid, endpoints) => {
    const before = cpuSeconds(pid)
    const r = await Effect.runPromise(
      Bench.run("watch", { endpoints, streams: 10, watchersPerStream: 1000, putTotal: 500, putRate: 0 })
    )
    return `${Math.round(r.value).toLocaleString("en-US")} events/s, server CPU ${(cpuSeconds(pid) - before).toFixed(2)} s${r.errors > 0 ? `, ${r.errors} errors` : ""}`
  })

const idle = (dist: string) =>
  withServer(dist, async (pid, endpoints) => {
    await sleep(1000)
    const before = readRss(pid)
    const { n, after } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const n = yield* Bench.openIdleWatchers({ endpoints, streams: 100, watchersPerStream: 100 })
          yield* Effect.sleep("2 seconds")
          return { n, after: readRss(pid) }
        })
      )
    )
    return `${Math.round((after - before) / n).toLocaleString("en-US")} B RSS per idle watcher`
  })

for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? dists : [...dists].reverse()
  for (const dist of order) {
    const name = path.relative(process.cwd(), dist) || "."
    console.log(
      `round ${round} ${name} fan-out: ${await fanOut(path.join(dist, "dist"))} (load ${os.loadavg()[0]!.toFixed(2)})`
    )
    console.log(
      `round ${round} ${name} idle: ${await idle(path.join(dist, "dist"))} (load ${os.loadavg()[0]!.toFixed(2)})`
    )
  }
}
