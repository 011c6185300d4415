/**
 * bench:kube-compare — `etcd-effect apiserver` against Kubernetes' own kube-apiserver, each over a
 * fresh etcd of the same kind (etcd 3.6 by default), alternating in one run, driven by the Go
 * client of benchmarks/go/kube-client (several watch processes, so the client is not the limit).
 *
 * Per apiserver, per watcher count (WATCHERS, default "1000,10000"), per round (ROUNDS, default 1):
 *   1. OBJECTS ConfigMaps (~1 KB, default 10,000) in NAMESPACES namespaces;
 *   2. LIST p99 of all of them at resourceVersion=0 (served from the watch cache), LISTS times;
 *   3. informer sync time: a client-go shared informer of ConfigMaps until HasSynced;
 *   4. that many HTTP/1.1 watches (label selector app=bench) held by PROCS processes (default:
 *      one per 2,500 watchers, at least 2); the apiserver's VmRSS growth per watch;
 *   5. WRITES updates of each namespace's "bench" ConfigMap at RATE/s (send time in the object);
 *      deliveries/s (first update sent → last event received, all processes) and the p50/p99
 *      latency update → event over every delivery.
 *
 *   npm run build && npm run bench:kube-compare
 *     env: KUBE_APISERVER (default: test/go/kubernetes/build.sh's, issue 28), STORE=etcd-3.6|etcd-3.4|ours,
 *          APISERVERS=ours,kube  WATCHERS=1000,10000  OBJECTS  NAMESPACES  WRITES  RATE  PROCS  LISTS  ROUNDS
 *          JSON=file (every row)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import {
  cleanEnv,
  cleanup,
  ourMain,
  projectRoot,
  readRss,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"
import { freePort, sleep } from "./etcd.js"
import { goInstruments } from "./etcd-tool.js"

const env = (name: string, fallback: string) => process.env[name] ?? fallback
const WATCHER_COUNTS = env("WATCHERS", "1000,10000").split(",").map(Number)
const APISERVERS = env("APISERVERS", "ours,kube").split(",")
const STORE = env("STORE", "etcd-3.6")
const OBJECTS = Number(env("OBJECTS", "10000"))
const NAMESPACES = Number(env("NAMESPACES", "10"))
const WRITES = Number(env("WRITES", "200"))
const RATE = Number(env("RATE", "100"))
const LISTS = Number(env("LISTS", "20"))
const ROUNDS = Number(env("ROUNDS", "1"))
const TOKEN = "bench-token-0123456789"

const fail = (message: string): never => {
  process.stderr.write(`bench:kube-compare: ${message}\n`)
  process.exit(1)
}

// ---- binaries ------------------------------------------------------------------------------------

/** kube-apiserver: $KUBE_APISERVER, else the build script of issue 28 (test/go/kubernetes/build.sh). */
const kubeApiserverBin = (): string | undefined => {
  if (process.env.KUBE_APISERVER) return process.env.KUBE_APISERVER
  const script = path.join(projectRoot(), "test", "go", "kubernetes", "build.sh")
  if (!fs.existsSync(script)) return undefined
  const out = execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  return /^KUBE_APISERVER=(.+)$/m.exec(out)?.[1]
}

// ---- the apiservers ---------------------------------------------------------------------------------

interface ApiServer {
  readonly kind: "ours" | "kube"
  readonly url: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

const own = (proc: ChildProcess, dir?: string) => {
  if (proc.pid !== undefined) cleanup.pids.add(proc.pid)
  if (dir !== undefined) cleanup.dirs.add(dir)
  return async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM")
      const gone = await Promise.race([
        new Promise<boolean>((r) => proc.once("exit", () => r(true))),
        sleep(15_000).then(() => false)
      ])
      if (!gone) proc.kill("SIGKILL")
    }
    if (proc.pid !== undefined) cleanup.pids.delete(proc.pid)
    if (dir !== undefined) {
      fs.rmSync(dir, { recursive: true, force: true })
      cleanup.dirs.delete(dir)
    }
  }
}

const startOursApi = (store: Server): Promise<ApiServer> =>
  new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [ourMain(), "apiserver", "--port", "0", "--etcd-servers", `http://${store.endpoint}`],
      { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] }
    )
    const kill = own(proc)
    let stopping = false
    const stop = () => {
      stopping = true
      return kill()
    }
    let out = ""
    const onData = (d: Buffer) => {
      out += String(d)
      const m = /serving on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve({ kind: "ours", url: m[1]!, pid: proc.pid!, stop })
    }
    proc.stdout!.on("data", onData)
    proc.stderr!.on("data", onData)
    proc.once("exit", (code, signal) => {
      const why = `etcd-effect apiserver exited ${code ?? signal}: ${out.slice(-1500)}`
      // after start-up nobody awaits the promise: say why the watches' connections were reset
      if (!stopping) process.stderr.write(`bench:kube-compare: ${why}\n`)
      reject(new Error(why))
    })
  })

const get = (url: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = https.get(url, { rejectUnauthorized: false, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.setTimeout(5000, () => req.destroy(new Error("timeout")))
  })

const startKubeApi = async (bin: string, store: Server, root: string): Promise<ApiServer> => {
  const dir = fs.mkdtempSync(path.join(root, "kube-apiserver-"))
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  fs.writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "pkcs1", format: "pem" }), { mode: 0o600 })
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${TOKEN},admin,admin,system:masters\n`, { mode: 0o600 })
  const port = await freePort()
  const proc = spawn(
    bin,
    [
      `--etcd-servers=http://${store.endpoint}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      "--advertise-address=127.0.0.1",
      "--endpoint-reconciler-type=none",
      `--cert-dir=${path.join(dir, "certs")}`,
      `--token-auth-file=${path.join(dir, "tokens.csv")}`,
      "--authorization-mode=AlwaysAllow",
      "--service-account-issuer=https://kubernetes.default.svc",
      `--service-account-key-file=${path.join(dir, "sa.key")}`,
      `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
      "--service-cluster-ip-range=10.96.0.0/16",
      // the bench's own requests are not to be queued by priority and fairness
      "--enable-priority-and-fairness=false",
      "--max-requests-inflight=10000",
      "--max-mutating-requests-inflight=10000",
      "--v=0"
    ],
    { env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"] }
  )
  const stop = own(proc, dir)
  let err = ""
  proc.stderr!.on("data", (d: Buffer) => (err = (err + String(d)).slice(-4000)))
  const url = `https://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`kube-apiserver exited ${proc.exitCode}: ${err.slice(-600)}`)
    const r = await get(`${url}/readyz`).catch(() => undefined)
    if (r?.status === 200) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`kube-apiserver not ready in 120 s: ${err.slice(-600)}`)
    }
    await sleep(250)
  }
  return { kind: "kube", url, pid: proc.pid!, stop }
}

// ---- the client processes ------------------------------------------------------------------------

interface Client {
  readonly proc: ChildProcess
  /** resolves with the JSON the process printed last */
  readonly result: Promise<Record<string, unknown>>
  /** resolves when the process printed "ready" */
  readonly ready: Promise<void>
}

const runClient = (bin: string, api: ApiServer, args: ReadonlyArray<string>): Client => {
  const proc = spawn(
    bin,
    [args[0]!, "-server", api.url, ...(api.kind === "kube" ? ["-token", TOKEN] : []), ...args.slice(1)],
    {
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const stop = own(proc)
  let out = ""
  let err = ""
  let onReady: () => void = () => {}
  const ready = new Promise<void>((r) => (onReady = r))
  proc.stdout!.on("data", (d: Buffer) => {
    out += String(d)
    if (/^ready$/m.test(out)) onReady()
  })
  proc.stderr!.on("data", (d: Buffer) => (err = (err + String(d)).slice(-2000)))
  const result = new Promise<Record<string, unknown>>((resolve, reject) => {
    proc.once("exit", (code) => {
      void stop()
      const last = out.trim().split("\n").pop() ?? ""
      if (code !== 0 || !last.startsWith("{")) {
        reject(new Error(`kube-client ${args[0]} exit ${code}: ${err.trim().slice(-400)}`))
        return
      }
      resolve(JSON.parse(last) as Record<string, unknown>)
    })
  })
  // a watch process that fails before "ready" must not leave the bench waiting
  void result.catch(() => onReady())
  return { proc, result, ready }
}

/** Latency buckets of 1 % (bucket k covers [1.01^k, 1.01^(k+1)) ms), merged from every process. */
const quantileOf = (hist: Map<number, number>, q: number): number => {
  const keys = [...hist.keys()].sort((a, b) => a - b)
  const total = [...hist.values()].reduce((a, b) => a + b, 0)
  let seen = 0
  for (const k of keys) {
    seen += hist.get(k)!
    if (seen >= q * total) return 1.01 ** (k + 0.5)
  }
  return Number.NaN
}

// ---- one measurement ---------------------------------------------------------------------------------

export interface KubeRow {
  readonly apiserver: "etcd-effect apiserver" | "kube-apiserver"
  readonly watchers: number
  readonly round: number
  readonly processes: number
  readonly delivered: number
  readonly expected: number
  readonly deliveriesPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly rssPerWatchB: number
  readonly listP99Ms: number
  readonly listItems: number
  readonly informerSyncMs: number
  readonly load: number
}

const measureOne = async (
  kind: "ours" | "kube",
  watchers: number,
  round: number,
  bins: { readonly kubeApiserver?: string; readonly client: string },
  root: string
): Promise<KubeRow> => {
  const store = STORE === "ours" ? await startOurs({ root }) : await startEtcdServer(root, storeOptions())
  let api: ApiServer | undefined
  try {
    api = kind === "ours" ? await startOursApi(store) : await startKubeApi(bins.kubeApiserver!, store, root)
    const a = api
    const run = (args: ReadonlyArray<string>) => runClient(bins.client, a, args).result
    const ns = ["-namespaces", String(NAMESPACES)]
    await run(["create", ...ns, "-n", String(OBJECTS)])
    const list = await run(["list", "-n", String(LISTS), "-rv", "0"])
    const informer = await run(["informer"])
    await sleep(1000)
    const rssBefore = readRss(a.pid)
    const processes = Number(process.env.PROCS ?? Math.max(2, Math.ceil(watchers / 2500)))
    const per = Math.ceil(watchers / processes)
    const perNamespace = WRITES / NAMESPACES
    const clients: Array<Client> = []
    for (let first = 0; first < watchers; first += per) {
      const count = Math.min(per, watchers - first)
      // each of its watchers sees every update of its namespace
      clients.push(
        runClient(bins.client, a, [
          "watch",
          ...ns,
          "-watchers",
          String(count),
          "-first",
          String(first),
          "-rv",
          "0",
          "-expect",
          String(Math.round(count * perNamespace))
        ])
      )
    }
    await Promise.all(clients.map((c) => c.ready))
    await sleep(2000)
    const rssAfter = readRss(a.pid)
    const load = os.loadavg()[0]!
    const update = await run(["update", ...ns, "-n", String(WRITES), "-rate", String(RATE)])
    const results = await Promise.all(clients.map((c) => c.result))
    const hist = new Map<number, number>()
    let delivered = 0
    let last = 0
    for (const r of results) {
      delivered += Number(r["delivered"])
      last = Math.max(last, Number(r["lastNs"]))
      for (const [k, v] of Object.entries(r["hist"] as Record<string, number>)) {
        hist.set(Number(k), (hist.get(Number(k)) ?? 0) + v)
      }
    }
    const start = Number(update["startNs"])
    return {
      apiserver: kind === "ours" ? "etcd-effect apiserver" : "kube-apiserver",
      watchers,
      round,
      processes: clients.length,
      delivered,
      expected: Math.round(watchers * perNamespace),
      deliveriesPerSec: delivered / ((last - start) / 1e9),
      p50Ms: quantileOf(hist, 0.5),
      p99Ms: quantileOf(hist, 0.99),
      rssPerWatchB: (rssAfter - rssBefore) / watchers,
      listP99Ms: Number(list["p99"]),
      listItems: Number(list["items"]),
      informerSyncMs: Number(informer["syncMs"]),
      load
    }
  } finally {
    await api?.stop()
    await store.stop()
  }
}

const storeOptions = () => {
  if (STORE === "etcd-3.4") return { system: "etcd-3.4" as const }
  const bins = goInstruments(projectRoot()).bins
  const bin = STORE === "etcd-3.7" ? bins["ETCD_37_BIN"] : bins["ETCD_36_BIN"]
  if (bin === undefined) return fail(`no binary for ${STORE} (benchmarks/go/build.sh)`)
  return { system: STORE as "etcd-3.6" | "etcd-3.7", bin }
}

// ---- the run -----------------------------------------------------------------------------------------

const fmt = (x: number, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "–"

const main = async () => {
  if (!fs.existsSync(ourMain())) fail("run `npm run build` first")
  const client = goInstruments(projectRoot()).bins["KUBE_CLIENT_BIN"]
  if (client === undefined) fail("benchmarks/go/build.sh did not build kube-client")
  const kubeApiserver = APISERVERS.includes("kube") ? kubeApiserverBin() : undefined
  if (APISERVERS.includes("kube") && kubeApiserver === undefined) {
    fail("no kube-apiserver: set KUBE_APISERVER, or land test/go/kubernetes/build.sh (issue 28)")
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kube-compare-"))
  cleanup.dirs.add(root)
  process.on("exit", () => cleanup.now())
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      cleanup.now()
      process.exit(130)
    })
  }
  const loadBefore = os.loadavg()
  const rows: Array<KubeRow> = []
  const kinds = APISERVERS.filter((k): k is "ours" | "kube" => k === "ours" || k === "kube")
  for (let round = 1; round <= ROUNDS; round++) {
    for (const watchers of WATCHER_COUNTS) {
      // alternate which apiserver goes first
      const order = round % 2 === 1 ? kinds : [...kinds].reverse()
      for (const kind of order) {
        const row = await measureOne(
          kind,
          watchers,
          round,
          { client: client!, ...(kubeApiserver ? { kubeApiserver } : {}) },
          root
        )
        rows.push(row)
        process.stderr.write(`${JSON.stringify(row)}\n`)
      }
    }
  }
  if (process.env.JSON) fs.writeFileSync(process.env.JSON, JSON.stringify({ loadBefore, rows }, null, 2) + "\n")
  console.log(
    `bench:kube-compare — ${STORE} under each apiserver (a fresh one per row), ${fmt(OBJECTS)} ConfigMaps of ~1 KB in ${NAMESPACES} namespaces, ` +
      `${WRITES} updates at ${RATE}/s; Node ${process.version}, ${os.cpus().length} CPUs; load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} after`
  )
  console.log("")
  console.log(
    "| apiserver | HTTP watchers | client processes | delivered / expected | deliveries/s | p50 ms | p99 ms | RSS B / watch | LIST 10k p99 ms | informer sync ms | load |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.apiserver} | ${fmt(r.watchers)} | ${r.processes} | ${fmt(r.delivered)} / ${fmt(r.expected)} | ${fmt(r.deliveriesPerSec)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${fmt(r.rssPerWatchB)} | ${fmt(r.listP99Ms, 1)} (${fmt(r.listItems)} items) | ${fmt(r.informerSyncMs)} | ${r.load.toFixed(1)} |`
    )
  }
}

main().then(
  () => {
    cleanup.now()
    process.exit(0)
  },
  (e: unknown) => {
    process.stderr.write(`bench:kube-compare: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    cleanup.now()
    process.exit(1)
  }
)
