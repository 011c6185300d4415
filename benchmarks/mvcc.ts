/**
 * bench:mvcc — durable puts/s with 32 concurrent writers and single-key range/s over 100k keys,
 * through the MvccStore on both backends (in-process), and the same workloads against a real
 * etcd 3.4 (/usr/bin/etcd, driven over gRPC on loopback with the `etcd3` npm client) for a
 * side-by-side. Prints a markdown table. Bounded: about a minute in all.
 *
 *   npm run build && npm run bench:mvcc        (BENCH_SECONDS=n scales each timed phase)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Effect, Layer } from "effect"
import { Etcd3 } from "etcd3"
import type { Backend, BackendError } from "../src/backend/backend.js"
import { layerLmdb } from "../src/backend/lmdb.js"
import { layerMemory } from "../src/backend/memory.js"
import { MvccStore, type MvccStoreShape, type RequestOp } from "../src/mvcc/kv.js"
import { layerDefault as kvStoreLayer } from "../src/mvcc/kvstore.js"
import { ETCD_BIN, startEtcd } from "./etcd.js"

const SECONDS = Number(process.env.BENCH_SECONDS ?? "5")
const PUT_MS = SECONDS * 1000
const RANGE_MS = Math.max(1000, SECONDS * 600)
const WRITERS = 32
const KEYS = 100_000
const LOAD_TXN_OPS = 100
const VALUE = Buffer.alloc(128, 0x76)

interface Row {
  readonly system: string
  readonly path: string
  readonly puts: number
  readonly putP50: number
  readonly putP99: number
  readonly load: number
  readonly ranges: number
  readonly ranges32?: number | undefined
  readonly heapMiB?: number | undefined
}

const rangeKey = (i: number) => Buffer.from(`range/${String(i).padStart(6, "0")}`)
const percentile = (xs: Array<number>, p: number) => {
  if (xs.length === 0) return NaN
  xs.sort((a, b) => a - b)
  return xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!
}
const heapMiB = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().heapUsed / 1048576
}
/** A pseudo-random key order that is the same for every system. */
const lcg = (seed: number) => () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % KEYS

// ---- ours ---------------------------------------------------------------------------------------

const benchStore = (system: string, backend: Layer.Layer<Backend, BackendError>): Promise<Row> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const ctx = yield* Layer.build(kvStoreLayer.pipe(Layer.provide(backend)))
        const kv: MvccStoreShape = Context.get(ctx, MvccStore)

        // durable puts, 32 concurrent writers, each waiting for its put before the next
        const latencies: Array<number> = []
        let puts = 0
        const putStart = performance.now()
        const putEnd = putStart + PUT_MS
        yield* Effect.forEach(
          Array.from({ length: WRITERS }, (_, w) => w),
          (w) =>
            Effect.gen(function* () {
              for (let i = 0; performance.now() < putEnd; i++) {
                const t0 = performance.now()
                yield* kv.put({ key: Buffer.from(`put/${w}/${i}`), value: VALUE })
                latencies.push(performance.now() - t0)
                puts++
              }
            }),
          { concurrency: "unbounded", discard: true }
        )
        const putSecs = (performance.now() - putStart) / 1000

        // load 100k keys: txns of 100 puts, 32 at a time
        const loadStart = performance.now()
        yield* Effect.forEach(
          Array.from({ length: KEYS / LOAD_TXN_OPS }, (_, t) => t),
          (t) => {
            const success: Array<RequestOp> = []
            for (let i = t * LOAD_TXN_OPS; i < (t + 1) * LOAD_TXN_OPS; i++) {
              success.push({ _tag: "Put", request: { key: rangeKey(i), value: VALUE } })
            }
            return kv.txn({ compare: [], success, failure: [] })
          },
          { concurrency: WRITERS, discard: true }
        )
        const loadSecs = (performance.now() - loadStart) / 1000
        const heap = heapMiB()

        // single-key ranges over the 100k keys; in-process calls are synchronous underneath
        const next = lcg(42)
        let ranges = 0
        const rangeEnd = performance.now() + RANGE_MS
        const rangeStart = performance.now()
        while (performance.now() < rangeEnd) {
          for (let j = 0; j < 256; j++) {
            const res = yield* kv.range({ key: rangeKey(next()) })
            if (res.kvs.length !== 1) return yield* Effect.die(new Error("range missed a loaded key"))
            ranges++
          }
        }
        const rangeSecs = (performance.now() - rangeStart) / 1000
        return {
          system,
          path: "in-process",
          puts: puts / putSecs,
          putP50: percentile(latencies, 50),
          putP99: percentile(latencies, 99),
          load: KEYS / loadSecs,
          ranges: ranges / rangeSecs,
          heapMiB: heap
        } satisfies Row
      })
    )
  )

// ---- etcd 3.4 -------------------------------------------------------------------------------------

const benchEtcd = async (): Promise<Row | string> => {
  if (!fs.existsSync(ETCD_BIN)) return `etcd not found at ${ETCD_BIN}: skipped`
  // Same filesystem as our LMDB data dirs, so both pay the same fsync.
  const server = await startEtcd(os.tmpdir(), "etcd-effect-bench-etcd-")
  const etcd = new Etcd3({ hosts: `http://${server.endpoint}` })
  try {
    const latencies: Array<number> = []
    let puts = 0
    const putStart = performance.now()
    const putEnd = putStart + PUT_MS
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; performance.now() < putEnd; i++) {
          const t0 = performance.now()
          await etcd.kv.put({ key: Buffer.from(`put/${w}/${i}`), value: VALUE })
          latencies.push(performance.now() - t0)
          puts++
        }
      })
    )
    const putSecs = (performance.now() - putStart) / 1000

    const loadStart = performance.now()
    let nextTxn = 0
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let t = nextTxn++; t < KEYS / LOAD_TXN_OPS; t = nextTxn++) {
          const success = []
          for (let i = t * LOAD_TXN_OPS; i < (t + 1) * LOAD_TXN_OPS; i++)
            success.push({ request_put: { key: rangeKey(i), value: VALUE } })
          await etcd.kv.txn({ compare: [], success, failure: [] })
        }
      })
    )
    const loadSecs = (performance.now() - loadStart) / 1000

    const timedRanges = async (loops: number, ms: number) => {
      const next = lcg(42)
      let n = 0
      const start = performance.now()
      const end = start + ms
      await Promise.all(
        Array.from({ length: loops }, async () => {
          while (performance.now() < end) {
            const res = await etcd.kv.range({ key: rangeKey(next()) })
            if (res.kvs.length !== 1) throw new Error("range missed a loaded key")
            n++
          }
        })
      )
      return n / ((performance.now() - start) / 1000)
    }
    const ranges = await timedRanges(1, RANGE_MS / 2)
    const ranges32 = await timedRanges(WRITERS, RANGE_MS / 2)
    return {
      system: "etcd 3.4.23",
      path: "gRPC over loopback (etcd3 npm client)",
      puts: puts / putSecs,
      putP50: percentile(latencies, 50),
      putP99: percentile(latencies, 99),
      load: KEYS / loadSecs,
      ranges,
      ranges32
    }
  } finally {
    etcd.close()
    await server.stop()
  }
}

// ---- main ---------------------------------------------------------------------------------------

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n)
    ? "–"
    : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

const main = async () => {
  const rows: Array<Row> = []
  const notes: Array<string> = []
  const log = (s: string) => process.stderr.write(s + "\n")

  log(
    `bench:mvcc: ${WRITERS} writers × ${PUT_MS / 1000}s of durable puts (128-byte values), then ${KEYS} keys loaded in txns of ${LOAD_TXN_OPS}, then ${RANGE_MS / 1000}s of single-key ranges`
  )
  log("memory backend…")
  rows.push(await benchStore("etcd-effect, memory backend", layerMemory))
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-bench-lmdb-"))
  try {
    log("LMDB backend…")
    rows.push(await benchStore("etcd-effect, LMDB backend", layerLmdb({ dataDir })))
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  log("etcd…")
  const etcd = await benchEtcd()
  if (typeof etcd === "string") notes.push(etcd)
  else rows.push(etcd)

  const lines = [
    `| system | path | durable puts/s (${WRITERS} writers) | put latency p50 / p99 (ms) | load: keys/s (txns of ${LOAD_TXN_OPS}) | range/s, 1 key of ${KEYS / 1000}k (1 caller) | range/s (${WRITERS} concurrent callers) | heap after load (MiB) |`,
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.system} | ${r.path} | ${fmt(r.puts)} | ${fmt(r.putP50, 2)} / ${fmt(r.putP99, 2)} | ${fmt(r.load)} | ${fmt(r.ranges)} | ${r.ranges32 === undefined ? "n/a (synchronous)" : fmt(r.ranges32)} | ${r.heapMiB === undefined ? "–" : fmt(r.heapMiB, 0)} |`
    )
  ]
  process.stdout.write(lines.join("\n") + "\n")
  for (const n of notes) process.stdout.write(`\n${n}\n`)
  process.stdout.write(
    `\nnode ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? "?"}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}, data dirs in ${os.tmpdir()}. ` +
      "etcd-effect is called in-process; etcd is measured over gRPC on loopback, so its numbers include the client, serialization and the network stack.\n"
  )
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench:mvcc failed: ${e instanceof Error ? e.stack : String(e)}\n`)
    process.exit(1)
  }
)
