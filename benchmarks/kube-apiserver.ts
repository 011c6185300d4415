/**
 * bench:kube-apiserver — Kubernetes' own kube-apiserver (v1.37.2, built by
 * test/go/kubernetes/build.sh) over etcd 3.4 and over etcd-effect, same run, same workload. Per
 * store, two apiservers: A with its watch cache (the default) and B with --watch-cache=false, so
 * that B sends every list and watch to the store.
 *
 *  - create: CREATES ConfigMaps (~1 KiB) through A from CONCURRENCY clients: creates/s, p50/p99.
 *  - LIST of all of them (protobuf), LISTS times each: from A's cache (resourceVersion=0), A's
 *    default consistent list (served from the cache when the store answers RequestProgress —
 *    etcd 3.4.23 is too old, so there it goes to etcd), and B's (from the store): p50/p99.
 *  - watch delivery: WATCHERS watches of one namespace on A, then on B (each then an etcd watch),
 *    UPDATES updates of a ConfigMap at RATE/s: deliveries/s (first send → last delivery), write →
 *    event p50/p99, and that every watcher got every update.
 *  - RSS of the store and of A after the run.
 *
 *   npm run build && npm run bench:kube-apiserver   (CREATES=10000 LISTS=30 WATCHERS=1000 UPDATES=100 RATE=50 ROUNDS=1)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  cleanup,
  etcdInstalled,
  etcdVersion,
  readRss,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"
import { sleep } from "./etcd.js"
import { type KubeClient, kubeApiServerBinary, startKubeApiServer } from "./kube-apiserver-process.js"

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const CREATES = num("CREATES", 10_000)
const CONCURRENCY = num("CONCURRENCY", 16)
const LISTS = num("LISTS", 30)
const WATCHERS = num("WATCHERS", 1000)
const UPDATES = num("UPDATES", 100)
const RATE = num("RATE", 50)
const ROUNDS = num("ROUNDS", 1)
const PROTOBUF = "application/vnd.kubernetes.protobuf"

const quantile = (values: ReadonlyArray<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN
}

type Row = Record<string, number>

const expect = async (what: string, p: Promise<{ status: number; body: Buffer }>, status: number) => {
  const r = await p
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.body.toString().slice(0, 300)}`)
  return r
}

const namespace = (client: KubeClient, name: string) =>
  expect(`namespace ${name}`, client.request("POST", "/api/v1/namespaces", { metadata: { name } }), 201)

/** CREATES ConfigMaps in namespace "bench" from CONCURRENCY workers. */
const creates = async (client: KubeClient, row: Row) => {
  await namespace(client, "bench")
  const pad = "x".repeat(1000)
  const latencies: Array<number> = []
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < CREATES; i = next++) {
        const t0 = performance.now()
        const body = { metadata: { name: `cm-${i}` }, data: { pad } }
        await expect("create", client.request("POST", "/api/v1/namespaces/bench/configmaps", body), 201)
        latencies.push(performance.now() - t0)
      }
    })
  )
  row["create /s"] = CREATES / ((performance.now() - start) / 1000)
  row["create p50 ms"] = quantile(latencies, 0.5)
  row["create p99 ms"] = quantile(latencies, 0.99)
}

/** LISTS lists of namespace "bench" (protobuf) through `client` with `query`. */
const lists = async (client: KubeClient, query: string, label: string, row: Row) => {
  const latencies: Array<number> = []
  for (let i = 0; i < LISTS + 2; i++) {
    const t0 = performance.now()
    const r = await expect(
      "list",
      client.request("GET", `/api/v1/namespaces/bench/configmaps${query}`, undefined, PROTOBUF),
      200
    )
    if (i >= 2) latencies.push(performance.now() - t0) // the first two warm up
    if (r.body.length < CREATES * 1000) throw new Error(`list ${query}: only ${r.body.length} bytes`)
  }
  row[`LIST ${label} p50 ms`] = quantile(latencies, 0.5)
  row[`LIST ${label} p99 ms`] = quantile(latencies, 0.99)
}

/** WATCHERS watches of namespace `ns` through `client`, UPDATES updates at RATE/s through `writer`. */
const watchDelivery = async (client: KubeClient, writer: KubeClient, ns: string, label: string, row: Row) => {
  await namespace(writer, ns)
  const url = `/api/v1/namespaces/${ns}/configmaps`
  await expect("tick", writer.request("POST", url, { metadata: { name: "tick" }, data: { t: "0", n: "0" } }), 201)
  const list = JSON.parse((await expect("list", client.request("GET", url), 200)).body.toString())
  const rv: string = list.metadata.resourceVersion
  const latencies: Array<number> = []
  const got = new Array<number>(WATCHERS).fill(0)
  let last = 0
  const watches = Array.from({ length: WATCHERS }, (_, w) => {
    let rest = ""
    return client.watch(`${url}?watch=1&resourceVersion=${rv}`, (chunk) => {
      const now = performance.now()
      const lines = (rest + chunk.toString()).split("\n")
      rest = lines.pop()!
      for (const line of lines) {
        if (line === "") continue
        const e = JSON.parse(line)
        if (e.type !== "MODIFIED") continue
        latencies.push(now - Number(e.object.data.t))
        got[w]!++
        last = now
      }
    })
  })
  await sleep(3000) // every watch established (they are served from rv on)
  const start = performance.now()
  for (let n = 1; n <= UPDATES; n++) {
    const body = { metadata: { name: "tick" }, data: { t: String(performance.now()), n: String(n) } }
    await expect("update", writer.request("PUT", `${url}/tick`, body), 200)
    await sleep(Math.max(0, start + (n * 1000) / RATE - performance.now()))
  }
  const deadline = performance.now() + 60_000
  while (got.some((g) => g < UPDATES) && performance.now() < deadline) await sleep(100)
  for (const w of watches) w.close()
  const missing = got.reduce((sum, g) => sum + Math.max(0, UPDATES - g), 0)
  if (missing > 0) throw new Error(`watch ${label}: ${missing} of ${WATCHERS * UPDATES} deliveries missing`)
  row[`watch ${label} deliveries/s`] = (WATCHERS * UPDATES) / ((last - start) / 1000)
  row[`watch ${label} p50 ms`] = quantile(latencies, 0.5)
  row[`watch ${label} p99 ms`] = quantile(latencies, 0.99)
}

const measure = async (bin: string, root: string, store: Server): Promise<Row> => {
  const row: Row = {}
  const a = await startKubeApiServer(bin, root, store.endpoint)
  const b = await startKubeApiServer(bin, root, store.endpoint, ["--watch-cache=false"])
  try {
    await creates(a.client, row)
    await lists(a.client, "?resourceVersion=0", "from cache (RV=0)", row)
    await lists(a.client, "", "consistent (default)", row)
    await lists(b.client, "", "without cache", row)
    await watchDelivery(a.client, a.client, "watch-a", "via cache", row)
    await watchDelivery(b.client, a.client, "watch-b", "without cache", row)
    row["RSS store MB"] = readRss(store.pid) / 2 ** 20
    row["RSS kube-apiserver MB"] = readRss(a.pid) / 2 ** 20
  } finally {
    await b.stop()
    await a.stop()
  }
  return row
}

const format = (v: number | undefined) =>
  v === undefined || Number.isNaN(v) ? "–" : v >= 100 ? v.toFixed(0) : v.toFixed(1)

const main = async () => {
  if (!etcdInstalled()) throw new Error("etcd 3.4 is not installed (apt-get install etcd-server)")
  const bin = kubeApiServerBinary()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "bench-kube-apiserver-"))
  cleanup.dirs.add(root)
  console.log(
    `bench:kube-apiserver — kube-apiserver v1.37.2 over etcd ${etcdVersion()} and etcd-effect; ` +
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; ${os.cpus().length} cores`
  )
  const rows: Record<string, Array<Row>> = { etcd: [], "etcd-effect": [] }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["etcd", "etcd-effect"] as const) : (["etcd-effect", "etcd"] as const)
    for (const system of order) {
      const store = system === "etcd" ? await startEtcdServer(root) : await startOurs({ root })
      try {
        rows[system]!.push(await measure(bin, root, store))
      } finally {
        await store.stop()
      }
      console.log(`round ${round + 1}: ${system} done (load average ${os.loadavg()[0]!.toFixed(2)})`)
    }
  }
  const median = (system: string, key: string) =>
    quantile(
      rows[system]!.map((r) => r[key]!),
      0.5
    )
  console.log(`\n| measure (median of ${ROUNDS}) | etcd 3.4 | etcd-effect | etcd-effect / etcd |`)
  console.log("|---|---:|---:|---:|")
  for (const key of Object.keys(rows["etcd"]![0]!)) {
    const [e, o] = [median("etcd", key), median("etcd-effect", key)]
    console.log(`| ${key} | ${format(e)} | ${format(o)} | ${(o / e).toFixed(2)}× |`)
  }
  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`
  )
}

process.on("exit", () => cleanup.now())
process.on("SIGINT", () => process.exit(130))
main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
