/**
 * bench:kube-storage — the Kubernetes storage layer (src/kubernetes/storage/etcd3) on our server and
 * on etcd 3.4 (/usr/bin/etcd), in the same run, same workloads:
 *
 * - watchChan vs raw watch: OBJECTS pods (about 1 KB each, 10 namespaces, label tier=a|b) are
 *   created, then UPDATES updates are written. A raw client watch (prefix, prev_kv) and two storage
 *   watches (the watchChan: decode, set RV; one selecting everything, one with the label selector
 *   `tier=a` that keeps half, which must decode the previous object as well) each replay that
 *   history from the first update. Reported: events/s and CPU µs per etcd event of the
 *   watching process (the store's cost is what the watchChan adds on top of the raw watch).
 * - Get, GetList (one namespace: OBJECTS/10 items) and GuaranteedUpdate per second, CONCURRENCY in flight.
 *
 *   npm run build && npm run bench:kube-storage      (OBJECTS=n UPDATES=n ROUNDS=n to change the size)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Stream } from "effect"
import { type EtcdClientShape, make } from "../src/client/index.js"
import type { KubeObject } from "../src/kubernetes/api/object-meta.js"
import type { StorageShape } from "../src/kubernetes/storage/interfaces.js"
import { Everything, type SelectionPredicate } from "../src/kubernetes/storage/selection-predicate.js"
import { Etcd3Store } from "../src/kubernetes/storage/etcd3/store.js"
import { cleanup, etcdInstalled, etcdVersion, type Server, startEtcdServer, startOurs } from "./compare-servers.js"

const OBJECTS = Number(process.env.OBJECTS ?? "10000")
const UPDATES = Number(process.env.UPDATES ?? "10000")
const ROUNDS = Number(process.env.ROUNDS ?? "3")
const CONCURRENCY = Number(process.env.CONCURRENCY ?? "32")
const OPS = Number(process.env.OPS ?? "3000")
const PAD = "x".repeat(800)

const podKey = (i: number) => `/pods/ns-${i % 10}/pod-${i}`
const pod = (i: number, gen: number): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: `pod-${i}`, namespace: `ns-${i % 10}`, labels: { tier: i % 2 === 0 ? "a" : "b", app: "bench" } },
  spec: { nodeName: `node-${i % 7}`, generation: gen, pad: PAD }
})

/** tier=a, written out here so the bench does not depend on the selector parser */
const tierA: SelectionPredicate = {
  ...Everything,
  label: { matches: (l) => l["tier"] === "a", empty: () => false, toString: () => "tier=a" }
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const measure = async (run: () => Promise<number>) => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const n = await run()
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { n, ms, cpuUs: cpu.user + cpu.system }
}

interface Row {
  readonly system: string
  readonly rawEventsPerSec: number
  readonly rawCpuUsPerEvent: number
  readonly allEventsPerSec: number
  readonly allCpuUsPerEvent: number
  readonly chanEventsPerSec: number
  readonly chanCpuUsPerEvent: number
  readonly getPerSec: number
  readonly listPerSec: number
  readonly updatePerSec: number
}

const benchServer = async (server: Server): Promise<Row> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const client: EtcdClientShape = yield* make({ endpoints: [server.endpoint] })
        const store: StorageShape = Etcd3Store.makeWith(client, {
          pathPrefix: "/registry",
          resourcePrefix: "/pods/",
          groupResource: { group: "", resource: "pods" }
        })
        // seed
        yield* Effect.forEach(
          Array.from({ length: OBJECTS }, (_, i) => i),
          (i) => store.create(podKey(i), pod(i, 0)),
          {
            concurrency: CONCURRENCY,
            discard: true
          }
        )
        const first = (yield* store.getCurrentResourceVersion) + 1n
        yield* Effect.forEach(
          Array.from({ length: UPDATES }, (_, i) => i),
          (i) =>
            client.kv.put(
              `/registry${podKey(i % OBJECTS)}`,
              JSON.stringify({ ...pod(i % OBJECTS, i + 1), metadata: pod(i % OBJECTS, 0).metadata })
            ),
          { concurrency: CONCURRENCY, discard: true }
        )
        const raw: Array<{ ms: number; cpuUs: number }> = []
        const chan: Array<{ ms: number; cpuUs: number }> = []
        const chanAll: Array<{ ms: number; cpuUs: number }> = []
        for (let round = 0; round < ROUNDS; round++) {
          raw.push(
            yield* Effect.promise(() =>
              measure(() =>
                Effect.runPromise(
                  client.watch("/registry/pods/", { prefix: true, startRevision: first, prevKv: true }).pipe(
                    Stream.mapConcat((r) => r.events),
                    Stream.take(UPDATES),
                    Stream.runCount
                  )
                )
              )
            )
          )
          chanAll.push(
            yield* Effect.promise(() =>
              measure(() =>
                Effect.runPromise(
                  Effect.flatMap(
                    store.watch("/pods/", { recursive: true, resourceVersion: (first - 1n).toString() }),
                    (events) => Stream.runCount(Stream.take(events, UPDATES))
                  )
                )
              )
            )
          )
          chan.push(
            yield* Effect.promise(() =>
              measure(() =>
                Effect.runPromise(
                  Effect.flatMap(
                    store.watch("/pods/", {
                      recursive: true,
                      resourceVersion: (first - 1n).toString(),
                      predicate: tierA
                    }),
                    (events) => Stream.runCount(Stream.take(events, UPDATES / 2))
                  )
                )
              )
            )
          )
        }
        const perSec = (n: number, ms: number) => Math.round((n / ms) * 1000)
        const rate = (xs: Array<{ ms: number }>) => perSec(UPDATES, median(xs.map((x) => x.ms)))
        const cpu = (xs: Array<{ cpuUs: number }>) => median(xs.map((x) => x.cpuUs)) / UPDATES
        const ops = (f: (i: number) => Effect.Effect<unknown, unknown>, n: number) =>
          Effect.promise(() =>
            measure(() =>
              Effect.runPromise(
                Effect.forEach(
                  Array.from({ length: n }, (_, i) => i),
                  (i) => Effect.orDie(f(i)),
                  {
                    concurrency: CONCURRENCY,
                    discard: true
                  }
                )
              ).then(() => n)
            )
          )
        const get = yield* ops((i) => store.get(podKey(i % OBJECTS)), OPS)
        const list = yield* ops(
          (i) => store.getList(`/pods/ns-${i % 10}/`, { recursive: true }),
          Math.max(10, Math.floor(OPS / 30))
        )
        const update = yield* ops(
          (i) =>
            store.guaranteedUpdate(podKey(i % OBJECTS), {
              tryUpdate: (o) => Effect.succeed({ object: { ...o, spec: { ...(o["spec"] as object), generation: -i } } })
            }),
          OPS
        )
        return {
          system: server.system,
          rawEventsPerSec: rate(raw),
          rawCpuUsPerEvent: cpu(raw),
          allEventsPerSec: rate(chanAll),
          allCpuUsPerEvent: cpu(chanAll),
          chanEventsPerSec: rate(chan),
          chanCpuUsPerEvent: cpu(chan),
          getPerSec: perSec(get.n, get.ms),
          listPerSec: perSec(list.n, list.ms),
          updatePerSec: perSec(update.n, update.ms)
        }
      })
    )
  )

const main = async () => {
  if (!etcdInstalled()) throw new Error("etcd 3.4 not found (/usr/bin/etcd): install Debian's etcd-server")
  const root = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "kube-storage-bench-"))
  cleanup.dirs.add(root)
  const rows: Array<Row> = []
  try {
    for (const start of [() => startOurs({ root }), () => startEtcdServer(root)]) {
      const server = await start()
      try {
        rows.push(await benchServer(server))
      } finally {
        await server.stop()
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
  const f = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 })
  console.log(
    `bench:kube-storage — ${OBJECTS} pods, ${UPDATES} updates replayed, median of ${ROUNDS}; etcd ${etcdVersion()}; node ${process.version}, ${os.cpus().length} CPUs`
  )
  console.log("")
  console.log(
    "| server | raw watch events/s | raw CPU µs/event | watchChan, everything: events/s | CPU µs/event | / raw | watchChan, tier=a: events/s | CPU µs/event | / raw | Get/s | GetList/s (1000 items) | GuaranteedUpdate/s |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.system} | ${f(r.rawEventsPerSec)} | ${f(r.rawCpuUsPerEvent)} | ${f(r.allEventsPerSec)} | ${f(r.allCpuUsPerEvent)} | ${(r.allCpuUsPerEvent / r.rawCpuUsPerEvent).toFixed(2)}× | ${f(r.chanEventsPerSec)} | ${f(r.chanCpuUsPerEvent)} | ${(r.chanCpuUsPerEvent / r.rawCpuUsPerEvent).toFixed(2)}× | ${f(r.getPerSec)} | ${f(r.listPerSec)} | ${f(r.updatePerSec)} |`
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
