/**
 * bench:kube-api — HTTP watchers of `etcd-effect apiserver` receiving events through the Cacher:
 * the apiserver runs as its own process (the built program) over etcd-effect's server and over
 * etcd 3.4 (each its own process on loopback), same run, same workload.
 *
 * For each watcher count (WATCHERS, default "1000,10000"): that many HTTP watches of ConfigMaps
 * (NAMESPACES namespaces, label selector `app=bench`), held by this process on plain node:http
 * sockets; then WRITES updates of a ~1 KB ConfigMap per namespace through the apiserver (HTTP
 * PUT, paced at RATE per second, not awaited one by one), each carrying its send time. Every
 * watcher of a namespace must get every update of that namespace. Reported: delivered events/s
 * (first write → last delivery), p50/p99 write → event latency, and the apiserver's RSS growth
 * per watch connection.
 *
 * Then client-go's typed clientset, protobuf against JSON (kube-api-client-go.ts): LIST, a
 * sendInitialEvents watch and an informer's sync (WatchList on and off) of OBJECTS ConfigMaps of
 * ~1 KiB, on a fresh server and apiserver per system.
 *
 *   npm run build && npm run bench:kube-api     (WATCHERS=1000,10000 WRITES=n RATE=n NAMESPACES=n SYSTEMS=ours,etcd
 *                                                PARTS=watchers,client-go OBJECTS=10000 LISTS=10 ROUNDS=3)
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import {
  cleanEnv,
  cleanup,
  etcdInstalled,
  etcdVersion,
  ourMain,
  projectRoot,
  readRss,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"
import { type ClientGoRow, clientGoTable, kubeClientBin, measureClientGo } from "./kube-api-client-go.js"

const WATCHER_COUNTS = (process.env.WATCHERS ?? "1000,10000").split(",").map(Number)
const NAMESPACES = Number(process.env.NAMESPACES ?? "10")
const WRITES = Number(process.env.WRITES ?? "200")
const RATE = Number(process.env.RATE ?? "100")
const SYSTEMS = (process.env.SYSTEMS ?? "ours,etcd").split(",")
const PARTS = (process.env.PARTS ?? "watchers,client-go").split(",")
const PAD = "x".repeat(900)

const quantile = (sorted: Array<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface ApiServer {
  readonly url: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

const startApiServer = (etcdEndpoint: string): Promise<ApiServer> =>
  new Promise((resolve, reject) => {
    const proc: ChildProcess = spawn(
      process.execPath,
      [
        ourMain(),
        "apiserver",
        "--port",
        "0",
        "--etcd-servers",
        `http://${etcdEndpoint}`,
        "--etcd-prefix",
        `/bench-${Date.now()}`
      ],
      {
        env: cleanEnv(),
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let out = ""
    proc.stdout!.on("data", (d) => {
      out += String(d)
      const m = /serving on (http:\/\/\S+)/.exec(out)
      if (m !== null) {
        resolve({
          url: m[1]!,
          pid: proc.pid!,
          stop: () =>
            new Promise<void>((res) => {
              if (proc.exitCode !== null) return res()
              proc.once("exit", () => res())
              proc.kill("SIGTERM")
            })
        })
      }
    })
    proc.once("exit", (code) => reject(new Error(`apiserver exited ${code}`)))
  })

const send = (url: string, method: string, body?: unknown): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      url,
      {
        method,
        headers:
          data === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(data) }
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c) => (text += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
      }
    )
    req.on("error", reject)
    req.end(data)
  })

const cm = (ns: number, t: number) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "bench", namespace: `ns-${ns}`, labels: { app: "bench" } },
  data: { t: String(t), pad: PAD }
})

interface Row {
  readonly system: string
  readonly watchers: number
  readonly eventsPerSec: number
  readonly p50: number
  readonly p99: number
  readonly delivered: number
  readonly expected: number
  readonly bytesPerWatch: number
}

const run = async (etcd: Server, watchers: number): Promise<Row> => {
  const api = await startApiServer(etcd.endpoint)
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const reqs: Array<http.ClientRequest> = []
  try {
    for (let ns = 0; ns < NAMESPACES; ns++) {
      await send(`${api.url}/api/v1/namespaces`, "POST", { metadata: { name: `ns-${ns}` } })
      const r = await send(`${api.url}/api/v1/namespaces/ns-${ns}/configmaps`, "POST", cm(ns, 0))
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`)
    }
    const rv = JSON.parse((await send(`${api.url}/api/v1/configmaps`, "GET")).body).metadata.resourceVersion
    await sleep(500)
    const rssBefore = readRss(api.pid)
    const latencies: Array<number> = []
    let delivered = 0
    let last = 0
    for (let start = 0; start < watchers; start += 500) {
      const batch: Array<Promise<void>> = []
      for (let w = start; w < Math.min(watchers, start + 500); w++) {
        const ns = w % NAMESPACES
        batch.push(
          new Promise((resolve, reject) => {
            const req = http.get(
              `${api.url}/api/v1/namespaces/ns-${ns}/configmaps?watch=1&resourceVersion=${rv}&labelSelector=app%3Dbench`,
              { agent },
              (res) => {
                let buf = ""
                res.setEncoding("utf8")
                res.on("data", (chunk: string) => {
                  buf += chunk
                  let i: number
                  while ((i = buf.indexOf("\n")) >= 0) {
                    const line = buf.slice(0, i)
                    buf = buf.slice(i + 1)
                    // the send time without parsing the whole event (the bench client must not be the limit)
                    const m = /"t":"([0-9.]+)"/.exec(line)
                    if (m === null || !line.startsWith('{"type":"MODIFIED"')) continue
                    const now = performance.now()
                    latencies.push(now - Number(m[1]))
                    delivered++
                    last = now
                  }
                })
                resolve()
              }
            )
            req.on("error", reject)
            reqs.push(req)
          })
        )
      }
      await Promise.all(batch)
    }
    await sleep(1000)
    const rssAfter = readRss(api.pid)
    const expected = WRITES * (watchers / NAMESPACES)
    const t0 = performance.now()
    const puts: Array<Promise<unknown>> = []
    for (let i = 0; i < WRITES; i++) {
      const ns = i % NAMESPACES
      const wait = t0 + (i * 1000) / RATE - performance.now()
      if (wait > 0) await sleep(wait)
      puts.push(send(`${api.url}/api/v1/namespaces/ns-${ns}/configmaps/bench`, "PUT", cm(ns, performance.now())))
    }
    await Promise.all(puts)
    const deadline = performance.now() + 120_000
    while (delivered < expected && performance.now() < deadline) await sleep(50)
    latencies.sort((a, b) => a - b)
    return {
      system: etcd.system,
      watchers,
      eventsPerSec: Math.round((delivered / (last - t0)) * 1000),
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      delivered,
      expected,
      bytesPerWatch: Math.max(0, (rssAfter - rssBefore) / watchers)
    }
  } finally {
    for (const r of reqs) r.destroy()
    agent.destroy()
    await api.stop()
  }
}

const main = async () => {
  if (!fs.existsSync(ourMain())) throw new Error("run `npm run build` first")
  const root = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "kube-api-bench-"))
  cleanup.dirs.add(root)
  const rows: Array<Row> = []
  const clientGoRows: Array<ClientGoRow> = []
  const bin = PARTS.includes("client-go") ? kubeClientBin(projectRoot()) : ""
  try {
    const starts = [
      ...(SYSTEMS.includes("ours") ? [() => startOurs({ root })] : []),
      ...(SYSTEMS.includes("etcd") && etcdInstalled() ? [() => startEtcdServer(root)] : [])
    ]
    for (const start of starts) {
      if (PARTS.includes("client-go")) {
        const etcd = await start()
        const api = await startApiServer(etcd.endpoint)
        try {
          clientGoRows.push(...(await measureClientGo(bin, api.url, etcd.system)))
        } finally {
          await api.stop()
          await etcd.stop()
        }
      }
      for (const watchers of PARTS.includes("watchers") ? WATCHER_COUNTS : []) {
        const etcd = await start()
        try {
          const row = await run(etcd, watchers)
          rows.push(row)
          // each row as soon as it is measured (a long run can be cut short)
          console.error(JSON.stringify(row))
        } finally {
          await etcd.stop()
        }
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
  const f = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d })
  if (rows.length > 0) {
    console.log(
      `bench:kube-api — HTTP watchers of \`etcd-effect apiserver\` (Cacher on), ${NAMESPACES} namespaces, label selector, ${WRITES} PUTs of a ~1 KB ConfigMap at ${RATE}/s; etcd ${etcdVersion()}; node ${process.version}, ${os.cpus().length} CPUs`
    )
    console.log("")
    console.log(
      "| apiserver over | HTTP watchers | delivered / expected | events/s | p50 ms | p99 ms | apiserver RSS bytes / watch |"
    )
    console.log("|---|---:|---:|---:|---:|---:|---:|")
    for (const r of rows) {
      console.log(
        `| ${r.system} | ${f(r.watchers)} | ${f(r.delivered)} / ${f(r.expected)} | ${f(r.eventsPerSec)} | ${f(r.p50, 1)} | ${f(r.p99, 1)} | ${f(r.bytesPerWatch)} |`
      )
    }
  }
  if (clientGoRows.length > 0) console.log(["", ...clientGoTable(clientGoRows)].join("\n"))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
