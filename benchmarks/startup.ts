/**
 * `npm run bench:startup` (issue 46 item 6: envtest starts an etcd per test suite): the time from
 * exec to the first healthy answer, ours beside etcd 3.4 (Debian) and etcd 3.6 (benchmarks/go) in
 * the same run, median of N alternating rounds (the order rotates each round, so every system goes
 * first as often and all see the same load).
 *
 *   npm run bench:startup [-- --rounds N] [--only serve-empty,serve-1m,apiserver] [--keys N]
 *                            [--prepare] [--cpu-prof DIR]
 *
 * serve-empty  `etcd-effect serve` / `etcd` on an empty data dir: exec → GET /health 200 {"health":"true"}
 * serve-1m     the same on a data dir holding --keys keys (default 1,000,000; 100-byte values),
 *              written once through each server by etcd's benchmark tool and kept in
 *              ~/.cache/etcd-effect/startup/ (--prepare writes them anew)
 * apiserver    `etcd-effect apiserver` (embedded store, empty data dir; and on a fresh etcd 3.6)
 *              and Kubernetes' kube-apiserver on a fresh etcd 3.6: exec → GET /readyz 200
 *              (kube-apiserver when test/go/kubernetes/build.sh has it cached; else ours alone)
 *
 * --cpu-prof DIR runs `etcd-effect serve` once more per data dir under node --cpu-prof and leaves
 * its profile (written when it stops) in DIR.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { benchArgs, positiveInt } from "./bench-args.js"
import { cleanEnv, cleanup, etcdVersion, ourMain, projectRoot } from "./compare-servers.js"
import { median } from "./compare-stats.js"
import { ETCD_BIN, etcdMemberArgs, freePort, sleep } from "./etcd.js"
import { goInstruments, runTool } from "./etcd-tool.js"
import { kubeApiServerArgs, writeKubeApiServerFiles } from "./kube-apiserver-process.js"

process.on("exit", () => cleanup.now())
for (const s of ["SIGINT", "SIGTERM"] as const) {
  process.on(s, () => {
    cleanup.now()
    process.exit(130)
  })
}

const usage = `usage: npm run bench:startup [-- options]
  --rounds N        alternating rounds (default 5)
  --only a,b        serve-empty, serve-1m, apiserver (default all three)
  --keys N          keys in the serve-1m data dirs (default 1000000)
  --prepare         write the serve-1m data dirs anew (else the cached ones are reused)
  --cpu-prof DIR    one more start of serve per data dir under node --cpu-prof, profiles in DIR`
const values = benchArgs("bench:startup", usage, () =>
  parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      rounds: { type: "string", default: "5" },
      only: { type: "string", default: "serve-empty,serve-1m,apiserver" },
      keys: { type: "string", default: "1000000" },
      prepare: { type: "boolean", default: false },
      "cpu-prof": { type: "string" }
    }
  })
)
const rounds = positiveInt("bench:startup", "--rounds", values.rounds)
const keys = positiveInt("bench:startup", "--keys", values.keys)
const only = new Set(values.only.split(",").map((x) => x.trim()))
for (const o of only) {
  if (!["serve-empty", "serve-1m", "apiserver"].includes(o)) {
    process.stderr.write(`bench:startup: --only: unknown scenario ${o} (serve-empty, serve-1m, apiserver)\n`)
    process.exit(1)
  }
}
/** the scenario's name in the table: serve-1m for the default 1,000,000 keys */
const keysLabel = `serve-${keys % 1_000_000 === 0 ? `${keys / 1_000_000}m` : keys}`
const say = (line: string) => process.stderr.write(`bench:startup: ${line}\n`)

const root = projectRoot()
const go = goInstruments(root)
const ETCD36 = go.bins["ETCD_36_BIN"]
const TOOL = go.bins["ETCD_BENCHMARK_BIN"]
if (ETCD36 === undefined || TOOL === undefined) {
  say(`etcd 3.6 is not built: run \`bash benchmarks/go/build.sh\` first (${go.problem ?? ""})`)
  process.exit(1)
}
if (!fs.existsSync(ourMain())) {
  say(`${ourMain()} is missing: run \`npm run build\` first`)
  process.exit(1)
}
const kubeApiServer = ((): string | undefined => {
  try {
    const out = execFileSync("bash", [path.join(root, "test/go/kubernetes/build.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 60_000
    })
    return /^KUBE_APISERVER=(.+)$/m.exec(out)?.[1]
  } catch {
    return undefined
  }
})()

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-startup-"))
cleanup.dirs.add(tmp)

// ---- processes and readiness ------------------------------------------------------------------------

interface Started {
  readonly child: ChildProcess
  /** ms from just before the exec to the first healthy answer */
  readonly readyMs: number
  readonly stop: () => Promise<void>
}

/** One GET; the status and body, or undefined when nothing answers. */
const get = (url: string): Promise<{ status: number; body: string } | undefined> =>
  new Promise((resolve) => {
    const mod = url.startsWith("https:") ? https : http
    const req = mod.get(url, { agent: false, timeout: 1000, rejectUnauthorized: false }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => (body += d))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      res.on("error", () => resolve(undefined))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(undefined))
  })

const healthy = (r: { status: number; body: string } | undefined): boolean => {
  if (r?.status !== 200) return false
  try {
    return (JSON.parse(r.body) as { health?: unknown }).health === "true"
  } catch {
    return false
  }
}
const readyz = (r: { status: number; body: string } | undefined): boolean => r?.status === 200

/** Execs `file args` and polls `url` every 5 ms until `ok`; the time is taken from just before the exec. */
const startTimed = async (
  file: string,
  args: ReadonlyArray<string>,
  url: string,
  ok: (r: { status: number; body: string } | undefined) => boolean,
  what: string,
  timeoutMs = 120_000
): Promise<Started> => {
  const log: Array<string> = []
  const t0 = performance.now()
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env: cleanEnv() })
  if (child.pid !== undefined) cleanup.pids.add(child.pid)
  const keep = (d: Buffer) => {
    log.push(d.toString())
    if (log.length > 50) log.shift()
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  const exited = new Promise<void>((r) => child.once("exit", () => r()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      if (await Promise.race([exited.then(() => false), sleep(60_000).then(() => true)])) {
        child.kill("SIGKILL")
        await exited
      }
    }
    if (child.pid !== undefined) cleanup.pids.delete(child.pid)
  }
  for (;;) {
    const answer = await get(url)
    if (ok(answer)) return { child, readyMs: performance.now() - t0, stop }
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited during start-up: ${log.join("").split("\n").slice(-6).join(" | ")}`)
    }
    if (performance.now() - t0 > timeoutMs) {
      await stop()
      throw new Error(`${what}: not ready within ${timeoutMs / 1000} s`)
    }
    await sleep(5)
  }
}

type Serve = "etcd-3.4" | "etcd-3.6" | "etcd-effect"
const SERVES: ReadonlyArray<Serve> = ["etcd-3.4", "etcd-3.6", "etcd-effect"]
const etcdBin = (s: Serve) => (s === "etcd-3.4" ? ETCD_BIN : ETCD36)

/** One server on `dataDir`, timed from exec to /health; `node` flags go before ours' main. */
const startServe = async (system: Serve, dataDir: string, nodeFlags: ReadonlyArray<string> = []): Promise<Started> => {
  const client = await freePort()
  const url = `http://127.0.0.1:${client}/health`
  if (system === "etcd-effect") {
    const metrics = await freePort()
    return startTimed(
      process.execPath,
      [
        ...nodeFlags,
        ourMain(),
        "serve",
        "--name",
        "bench",
        "--data-dir",
        dataDir,
        "--listen-client-urls",
        `http://127.0.0.1:${client}`,
        "--listen-metrics-urls",
        `http://127.0.0.1:${metrics}`,
        "--log-level",
        "warn"
      ],
      url,
      healthy,
      system
    )
  }
  return startTimed(etcdBin(system), etcdMemberArgs(dataDir, client, await freePort()), url, healthy, system)
}

// ---- the 1M-key data dirs, written once --------------------------------------------------------------

const cacheRoot = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "etcd-effect", "startup")
/** ours' key: the data dir layout lives in src/backend (its tree's hash at HEAD) */
const oursKey = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD:src/backend"], { cwd: root, encoding: "utf8" }).trim().slice(0, 12)
  } catch {
    return "unknown"
  }
}
const preparedDir = (system: Serve): string =>
  path.join(
    cacheRoot,
    `${system}-${keys}-${system === "etcd-effect" ? oursKey() : etcdVersion(etcdBin(system)).split(" ")[0]}`
  )

const prepare = async (system: Serve): Promise<string> => {
  const dir = preparedDir(system)
  if (!values.prepare && fs.existsSync(path.join(dir, "complete"))) return path.join(dir, "data")
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  say(`writing ${keys.toLocaleString("en")} keys through ${system} into ${dir} (once)`)
  const server = await startServe(system, path.join(dir, "data"))
  try {
    const endpoint = new URL(server.child.spawnargs[server.child.spawnargs.indexOf("--listen-client-urls") + 1]!).host
    const t0 = performance.now()
    const { summary } = await runTool(
      TOOL,
      endpoint,
      [
        "--clients",
        "64",
        "--conns",
        "8",
        "put",
        "--total",
        String(keys),
        "--key-space-size",
        String(keys),
        "--sequential-keys",
        "--key-size",
        "16",
        "--val-size",
        "100"
      ],
      {
        timeoutMs: 3_600_000,
        onSpawn: (pid) => cleanup.pids.add(pid),
        onExit: (pid) => cleanup.pids.delete(pid)
      }
    )
    if (summary.errors > 0) throw new Error(`${system}: ${summary.errors} failed puts: ${summary.firstError}`)
    say(`${system}: ${keys} puts in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  } finally {
    await server.stop()
  }
  fs.writeFileSync(path.join(dir, "complete"), `${new Date().toISOString()}\n`)
  return path.join(dir, "data")
}

// ---- the apiservers ---------------------------------------------------------------------------------

const kubeDir = fs.mkdtempSync(path.join(tmp, "kube-"))
writeKubeApiServerFiles(kubeDir)

/** A fresh etcd 3.6 for an apiserver to use (not timed). */
const freshEtcd36 = async (): Promise<{ endpoint: string; stop: () => Promise<void>; dir: string }> => {
  const dir = fs.mkdtempSync(path.join(tmp, "etcd36-"))
  const s = await startServe("etcd-3.6", dir)
  const endpoint = new URL(s.child.spawnargs[s.child.spawnargs.indexOf("--listen-client-urls") + 1]!).host
  return { endpoint, dir, stop: s.stop }
}

type Api = "etcd-effect apiserver (embedded)" | "etcd-effect apiserver on etcd 3.6" | "kube-apiserver on etcd 3.6"
const APIS: ReadonlyArray<Api> = [
  "etcd-effect apiserver (embedded)",
  "etcd-effect apiserver on etcd 3.6",
  ...(kubeApiServer === undefined ? [] : (["kube-apiserver on etcd 3.6"] as const))
]

const runApi = async (api: Api): Promise<number> => {
  const port = await freePort()
  const etcd = api === "etcd-effect apiserver (embedded)" ? undefined : await freshEtcd36()
  const dataDir = fs.mkdtempSync(path.join(tmp, "api-"))
  try {
    const started =
      api === "kube-apiserver on etcd 3.6"
        ? await startTimed(
            kubeApiServer!,
            kubeApiServerArgs(kubeDir, port, etcd!.endpoint),
            `https://127.0.0.1:${port}/readyz`,
            readyz,
            api
          )
        : await startTimed(
            process.execPath,
            [
              ourMain(),
              "apiserver",
              "--port",
              String(port),
              ...(etcd === undefined ? ["--data-dir", dataDir] : [`--etcd-servers=http://${etcd.endpoint}`])
            ],
            `http://127.0.0.1:${port}/readyz`,
            readyz,
            api
          )
    await started.stop()
    return started.readyMs
  } finally {
    await etcd?.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
    if (etcd !== undefined) fs.rmSync(etcd.dir, { recursive: true, force: true })
  }
}

// ---- the run --------------------------------------------------------------------------------------------

const rotate = <A>(xs: ReadonlyArray<A>, round: number): Array<A> => {
  const k = round % xs.length
  return [...xs.slice(k), ...xs.slice(0, k)]
}

const fmt = (ms: number | undefined) => (ms === undefined ? "–" : `${ms.toFixed(0)} ms`)

const main = async () => {
  const loads: Array<number> = []
  const loadBefore = os.loadavg()
  const startedAt = new Date()
  const rows: Array<{ scenario: string; system: string; samples: Array<number> }> = []
  const record = (scenario: string, system: string, ms: number) => {
    let row = rows.find((r) => r.scenario === scenario && r.system === system)
    if (row === undefined) rows.push((row = { scenario, system, samples: [] }))
    row.samples.push(ms)
    process.stderr.write(
      `  ${scenario.padEnd(12)} ${system.padEnd(34)} ${fmt(ms)}  load ${os.loadavg()[0]!.toFixed(2)}\n`
    )
  }
  const prepared: Partial<Record<Serve, string>> = {}
  if (only.has("serve-1m")) for (const s of SERVES) prepared[s] = await prepare(s)
  say(
    `${rounds} round(s) of ${[...only].join(", ")}; ${SERVES.join(", ")}${kubeApiServer === undefined ? "; kube-apiserver is not built (test/go/kubernetes/build.sh): ours alone" : ""}; load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}`
  )
  // one unmeasured start of each first: page cache, node's code cache, kube-apiserver's certificates
  for (const s of SERVES) {
    const dir = fs.mkdtempSync(path.join(tmp, "warm-"))
    await (await startServe(s, dir)).stop()
  }
  if (only.has("apiserver")) for (const a of APIS) await runApi(a)
  for (let round = 0; round < rounds; round++) {
    loads.push(os.loadavg()[0]!)
    if (only.has("serve-empty")) {
      for (const s of rotate(SERVES, round)) {
        const dir = fs.mkdtempSync(path.join(tmp, `${s}-`))
        const started = await startServe(s, dir)
        await started.stop()
        fs.rmSync(dir, { recursive: true, force: true })
        record("serve-empty", s, started.readyMs)
      }
    }
    if (only.has("serve-1m")) {
      for (const s of rotate(SERVES, round)) {
        const started = await startServe(s, prepared[s]!)
        await started.stop()
        record(keysLabel, s, started.readyMs)
      }
    }
    if (only.has("apiserver")) for (const a of rotate(APIS, round)) record("apiserver", a, await runApi(a))
  }
  const loadAfter = os.loadavg()
  if (values["cpu-prof"] !== undefined) {
    const dir = path.resolve(values["cpu-prof"])
    fs.mkdirSync(dir, { recursive: true })
    const empty = fs.mkdtempSync(path.join(tmp, "prof-"))
    for (const [name, dataDir] of [
      ["empty", empty],
      ...(prepared["etcd-effect"] === undefined ? [] : [["1m", prepared["etcd-effect"]]])
    ] as const) {
      const s = await startServe("etcd-effect", dataDir, [
        "--cpu-prof",
        "--cpu-prof-dir",
        dir,
        "--cpu-prof-name",
        `serve-${name}.cpuprofile`
      ])
      await s.stop()
      say(`profile of serve on the ${name} data dir (${fmt(s.readyMs)} to /health): ${dir}/serve-${name}.cpuprofile`)
    }
  }

  const versions = `etcd 3.4: ${etcdVersion(ETCD_BIN)}; etcd 3.6: ${etcdVersion(ETCD36)}; Node ${process.version}`
  console.log(
    `\nStart-up, exec → first healthy answer, median of ${rounds} alternating rounds (each round's values in brackets)\n` +
      `${startedAt.toISOString()}, ${os.cpus().length} cores, ${versions}\n` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ${loadAfter.map((l) => l.toFixed(2)).join(" ")} after; 1-min load during rounds ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}\n`
  )
  const scenarios = [...new Set(rows.map((r) => r.scenario))]
  console.log(
    "| scenario | system | median | rounds | ours / the better of the others (etcd; kube-apiserver) — target ≤ 0.5 |"
  )
  console.log("|---|---|---:|---|---:|")
  for (const sc of scenarios) {
    const inScenario = rows.filter((r) => r.scenario === sc)
    const med = (name: string) => {
      const r = inScenario.find((x) => x.system === name)
      return r === undefined ? undefined : median(r.samples)
    }
    const etcds = inScenario.filter((r) => !r.system.startsWith("etcd-effect")).map((r) => median(r.samples)!)
    const best = etcds.length === 0 ? undefined : Math.min(...etcds)
    for (const r of inScenario) {
      const m = med(r.system)!
      const ratio = r.system.startsWith("etcd-effect") && best !== undefined ? `${(m / best).toFixed(2)}` : ""
      console.log(`| ${sc} | ${r.system} | ${fmt(m)} | ${r.samples.map((x) => x.toFixed(0)).join(", ")} | ${ratio} |`)
    }
  }
}

main().then(
  () => {
    cleanup.now()
    process.exit(0)
  },
  (e: unknown) => {
    say(e instanceof Error ? (e.stack ?? e.message) : String(e))
    cleanup.now()
    process.exit(1)
  }
)
