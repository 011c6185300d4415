/**
 * bench:cacher — many Kubernetes watchers through the Cacher vs each as its own etcd watch, on our
 * server and on etcd 3.4 (each its own process on loopback), same run, same workload:
 *
 * WATCHERS watchers (NAMESPACES namespaces × WATCHERS/NAMESPACES each, on `/pods/<ns>/`, label
 * selector `app=bench`), then WRITES updates of ~1 KB pods (plain puts, paced at RATE per second,
 * not waiting for each other) spread over the namespaces, each carrying its send time. Every watcher of a namespace must get every update of
 * that namespace. Reported: delivered events/s (first write → last delivery), p50/p99 latency
 * write → event (measured in the bench process, which holds the watchers), the server's RSS
 * growth per watcher, and the bench process's heap growth per watcher.
 *
 * Modes: "cacher" — watchers take events through a sink, pushed by the Cacher's dispatcher with no
 * fiber per watcher (how the HTTP watch consumes it); "cacher-stream" — each watcher consumes the
 * Cacher's Stream face in a fiber of its own; "direct" — each watcher is its own storage watch
 * (the watchChan) on one shared gRPC stream. Then, in process and without a server: dispatch CPU
 * per event with 10,000 watchers, with and without an indexed trigger.
 *
 *   npm run build && npm run bench:cacher     (WATCHERS=n WRITES=n RATE=n to change the size)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Layer, Queue, Scope, Stream } from "effect"
import { type EtcdClientShape, make } from "../src/client/index.js"
import type { KubeObject } from "../src/kubernetes/api/object-meta.js"
import { CacheWatcher } from "../src/kubernetes/cacher/cache-watcher.js"
import { IndexedWatchers } from "../src/kubernetes/cacher/indexed-watchers.js"
import { Cacher } from "../src/kubernetes/cacher/cacher.js"
import { CacherConfig } from "../src/kubernetes/cacher/config.js"
import { Dispatcher } from "../src/kubernetes/cacher/dispatcher.js"
import { WatchCache } from "../src/kubernetes/cacher/watch-cache.js"
import type { WatchEvent } from "../src/kubernetes/api/watch-event.js"
import { watchInto } from "../src/kubernetes/storage/watch-sink.js"
import { Etcd3Store } from "../src/kubernetes/storage/etcd3/store.js"
import type { StorageShape } from "../src/kubernetes/storage/interfaces.js"
import { parsePredicate } from "../src/kubernetes/storage/selection-predicate.js"
import {
  cleanup,
  etcdInstalled,
  etcdVersion,
  readRss,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"

const WATCHERS = Number(process.env.WATCHERS ?? "10000")
const NAMESPACES = Number(process.env.NAMESPACES ?? "10")
const WRITES = Number(process.env.WRITES ?? "200")
const RATE = Number(process.env.RATE ?? "1000")
const PAD = "x".repeat(900)
/** ONLY=cacher|direct and SYSTEMS=ours|etcd restrict the run (for profiling) */
type Mode = "cacher" | "cacher-stream" | "direct"
const MODES = (process.env.ONLY ?? "cacher,cacher-stream,direct").split(",") as Array<Mode>
const SYSTEMS = (process.env.SYSTEMS ?? "ours,etcd").split(",")

const pred = (() => {
  const p = parsePredicate({ labelSelector: "app=bench" })
  if (p._tag === "Left") throw new Error(p.left.message)
  return p.right
})()

const pod = (ns: number, i: number, t: number): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: `pod-${i}`, namespace: `ns-${ns}`, labels: { app: "bench" } },
  spec: { t, pad: PAD }
})

const quantile = (sorted: Array<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
const heap = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().heapUsed
}

interface Row {
  readonly system: string
  readonly mode: Mode
  readonly eventsPerSec: number
  readonly p50: number
  readonly p99: number
  readonly delivered: number
  readonly expected: number
  readonly serverBytesPerWatcher: number
  readonly clientBytesPerWatcher: number
}

const run = (server: Server, mode: Mode): Promise<Row> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const client: EtcdClientShape = yield* make({ endpoints: [server.endpoint] })
        const etcd3 = Etcd3Store.makeWith(client, {
          pathPrefix: `/bench-${mode}`,
          resourcePrefix: "/pods/",
          groupResource: { group: "", resource: "pods" }
        })
        for (let ns = 0; ns < NAMESPACES; ns++) yield* etcd3.create(`/pods/ns-${ns}/pod-0`, pod(ns, 0, 0))
        let store: StorageShape = etcd3
        if (mode !== "direct") {
          store = yield* Cacher.make(etcd3, {
            resourcePrefix: "/pods/",
            groupResource: { group: "", resource: "pods" }
          })
          const internals = (store as unknown as { internals: { ready: { isReady: boolean } } }).internals
          while (!internals.ready.isReady) yield* Effect.sleep("10 millis")
        }
        const rv = (yield* etcd3.getCurrentResourceVersion).toString()
        const serverBefore = readRss(server.pid)
        const heapBefore = heap()
        const latencies: Array<number> = []
        let delivered = 0
        let last = 0
        const scope = yield* Scope.make()
        const take = (e: WatchEvent) => {
          if (e.type !== "MODIFIED") return
          const now = performance.now()
          latencies.push(now - ((e.object as KubeObject)["spec"] as { t: number }).t)
          delivered++
          last = now
        }
        const sink = { push: (events: ReadonlyArray<WatchEvent>) => (events.forEach(take), true), end: () => {} }
        for (let w = 0; w < WATCHERS; w++) {
          const ns = w % NAMESPACES
          const options = { recursive: true, resourceVersion: rv, predicate: pred }
          if (mode === "cacher") {
            yield* Scope.extend(watchInto(store, `/pods/ns-${ns}/`, options, sink), scope)
            continue
          }
          const events = yield* store.watch(`/pods/ns-${ns}/`, options)
          yield* Effect.forkIn(
            Stream.runForEach(events, (e) => Effect.sync(() => take(e))),
            scope
          )
        }
        // let the watches register on the server, then measure what they hold
        yield* Effect.sleep("2 seconds")
        const serverAfter = readRss(server.pid)
        const heapAfter = heap()
        const expected = WRITES * (WATCHERS / NAMESPACES)
        // plain puts of the encoded object, paced, not awaited one by one: the writer must not be the limit
        const t0 = performance.now()
        const puts: Array<Effect.Effect<unknown>> = []
        for (let i = 0; i < WRITES; i++) {
          const ns = i % NAMESPACES
          const due = t0 + (i * 1000) / RATE
          const wait = due - performance.now()
          if (wait > 0) yield* Effect.sleep(`${Math.ceil(wait)} millis`)
          const put = client.kv.put(`/bench-${mode}/pods/ns-${ns}/pod-0`, JSON.stringify(pod(ns, 0, performance.now())))
          puts.push(yield* Effect.fork(Effect.orDie(put)).pipe(Effect.map((f) => f.await)))
        }
        yield* Effect.all(puts, { discard: true })
        const deadline = performance.now() + 120_000
        while (delivered < expected && performance.now() < deadline) yield* Effect.sleep("50 millis")
        yield* Scope.close(scope, Exit.void)
        latencies.sort((a, b) => a - b)
        return {
          system: server.system,
          mode,
          eventsPerSec: Math.round((delivered / (last - t0)) * 1000),
          p50: quantile(latencies, 0.5),
          p99: quantile(latencies, 0.99),
          delivered,
          expected,
          serverBytesPerWatcher: Math.max(0, (serverAfter - serverBefore) / WATCHERS),
          clientBytesPerWatcher: Math.max(0, (heapAfter - heapBefore) / WATCHERS)
        }
      })
    )
  )

const main = async () => {
  if (!etcdInstalled()) throw new Error("etcd 3.4 not found (/usr/bin/etcd): install Debian's etcd-server")
  const root = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "cacher-bench-"))
  cleanup.dirs.add(root)
  const rows: Array<Row> = []
  try {
    const starts = [
      ...(SYSTEMS.includes("ours") ? [() => startOurs({ root })] : []),
      ...(SYSTEMS.includes("etcd") ? [() => startEtcdServer(root)] : [])
    ]
    for (const start of starts) {
      for (const mode of MODES) {
        const server = await start()
        try {
          rows.push(await run(server, mode))
        } finally {
          await server.stop()
        }
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
  const f = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d })
  console.log(
    `bench:cacher — ${WATCHERS} watchers (${NAMESPACES} namespaces, label selector), ${WRITES} updates of ~1 KB at ${RATE}/s; etcd ${etcdVersion()}; node ${process.version}, ${os.cpus().length} CPUs`
  )
  console.log("")
  console.log(
    "| server | watchers via | delivered / expected | events/s | p50 ms | p99 ms | server bytes/watcher | client heap bytes/watcher |"
  )
  console.log("|---|---|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.system} | ${r.mode === "cacher" ? "the Cacher (sink)" : r.mode === "cacher-stream" ? "the Cacher (a Stream each)" : "own etcd watch"} | ${f(r.delivered)} / ${f(r.expected)} | ${f(r.eventsPerSec)} | ${f(r.p50, 1)} | ${f(r.p99, 1)} | ${f(r.serverBytesPerWatcher)} | ${f(r.clientBytesPerWatcher)} |`
    )
  }
}

/**
 * Dispatch alone (no server, no reflector): 10,000 sink watchers, EVENTS events through the
 * dispatcher's layer; CPU per event until every delivery is made. Without a trigger every watcher
 * of the namespace is a candidate and filters; with one (spec.nodeName, each watcher its own
 * node) only the watchers of the event's value are.
 */
const dispatchCost = (trigger: boolean): Promise<{ usPerEvent: number; deliveries: number }> => {
  const N = 10_000
  const EVENTS = Number(process.env.DISPATCH_EVENTS ?? "2000")
  const nodeOf = (o: KubeObject) => (o["spec"] as { nodeName?: string } | undefined)?.nodeName ?? ""
  const attrs = (o: KubeObject) => ({
    labels: o.metadata.labels ?? {},
    fields: {
      "metadata.name": o.metadata.name ?? "",
      "metadata.namespace": o.metadata.namespace ?? "",
      "spec.nodeName": nodeOf(o)
    }
  })
  const parts = Dispatcher.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(WatchCache.layer, IndexedWatchers.layer)),
    Layer.provide(
      Layer.succeed(CacherConfig, {
        resourcePrefix: "/pods/",
        groupResource: { group: "", resource: "pods" },
        getAttrs: attrs,
        ...(trigger ? { indexedTrigger: { field: "spec.nodeName" } } : {})
      })
    )
  )
  return Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const { incoming } = yield* Dispatcher
        const watchers = yield* IndexedWatchers
        const cache = yield* WatchCache
        let deliveries = 0
        const sink = { push: (evs: ReadonlyArray<WatchEvent>) => ((deliveries += evs.length), true), end: () => {} }
        for (let i = 0; i < N; i++) {
          const node = `node-${i}`
          watchers.add(
            new CacheWatcher({
              chanSize: 10,
              filter: (_k, a) => a.fields["spec.nodeName"] === node,
              startRV: 0n,
              allowWatchBookmarks: false,
              typeMeta: {},
              now: 0,
              namespace: "",
              name: "",
              triggerValue: trigger ? node : undefined,
              consumer: { _tag: "Sink", sink }
            })
          )
        }
        const events = Array.from({ length: EVENTS }, (_, i) =>
          cache.processEvent(
            "ADDED",
            { metadata: { name: `p${i}`, namespace: "ns" }, spec: { nodeName: `node-${i % N}` } },
            BigInt(i + 1)
          )
        )
        const c0 = process.cpuUsage()
        for (const e of events) yield* Queue.offer(incoming, e)
        while (deliveries < EVENTS) yield* Effect.sleep("1 millis")
        const c = process.cpuUsage(c0)
        return { usPerEvent: (c.user + c.system) / EVENTS, deliveries }
      }).pipe(Effect.provide(parts))
    )
  )
}

main()
  .then(async () => {
    if (process.env.DISPATCH === "0") return
    const without = await dispatchCost(false)
    const withTrigger = await dispatchCost(true)
    console.log("")
    console.log("| dispatch, 10,000 watchers (each selects its own spec.nodeName) | CPU µs per event |")
    console.log("|---|---:|")
    console.log(`| no trigger (every watcher a candidate, each filters) | ${without.usPerEvent.toFixed(1)} |`)
    console.log(
      `| indexed trigger on spec.nodeName (only the event's watcher) | ${withTrigger.usPerEvent.toFixed(1)} |`
    )
  })
  .catch((e) => {
    console.error(e)
    process.exit(1)
  })
