/**
 * bench:client — watch fan-out received by a client: our EtcdClient against the `etcd3` npm client,
 * on the same etcd 3.4 (/usr/bin/etcd, one member, random loopback ports, data dir on /dev/shm when
 * present) and the same workloads:
 *
 * - catch-up: REVISIONS revisions written first; then WATCHERS watches on the prefix from the first
 *   revision, all at once. Measures until every watch has every event: the client's receive path
 *   (decode, dispatch, delivery) at full speed, in etcd's 1000-revision batches.
 * - live: WATCHERS watches from now; LIVE_REVISIONS puts (32 in flight) by a writer client in the
 *   same process; measures until every watch has every event. One event per response: the
 *   per-response cost (wake-up of each watch's consumer) dominates.
 * - live-txn: the same with txns of TXN_KEYS puts: TXN_KEYS events per response.
 *
 * Reports events/s (wall) and CPU µs per delivered event (user+system of this process, which also
 * runs the writer in "live"; the same for both clients). Each client runs ROUNDS times,
 * alternating; the median is shown.
 *
 *   npm run build && npm run bench:client     (WATCHERS=n REVISIONS=n ROUNDS=n to change the size)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { Chunk, Effect, Stream } from "effect"
import { Etcd3 } from "etcd3"
import { EtcdClient, type EtcdClientShape, make, Op } from "../src/client/index.js"
import { ETCD_BIN, startEtcd } from "./etcd.js"

const WATCHERS = Number(process.env.WATCHERS ?? "50")
const REVISIONS = Number(process.env.REVISIONS ?? "5000")
const LIVE_REVISIONS = Number(process.env.LIVE_REVISIONS ?? "2000")
const ROUNDS = Number(process.env.ROUNDS ?? "3")
const TXN_KEYS = Number(process.env.TXN_KEYS ?? "10")
/** ONLY=ours|etcd3 and WORKLOADS=catch-up,live restrict the run (for profiling) */
const ONLY = process.env.ONLY
const WORKLOADS = (process.env.WORKLOADS ?? "catch-up,live,live-txn").split(",")
const VALUE = "v".repeat(100)

const startEtcdHere = () => startEtcd(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "etcd-effect-bench-watch-")

interface Sample {
  readonly events: number
  readonly ms: number
  readonly cpuUs: number
}

const measure = async (run: () => Promise<number>): Promise<Sample> => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const events = await run()
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { events, ms, cpuUs: cpu.user + cpu.system }
}

/** Writes `n` puts under `prefix` (32 in flight) with our client; returns the last revision. */
const write = (c: EtcdClientShape, prefix: string, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    (i) => Effect.map(c.kv.put(`${prefix}${i % 100}`, VALUE), (r) => r.header.revision),
    { concurrency: 32 }
  ).pipe(Effect.map((revs) => revs.reduce((a, b) => (a > b ? a : b), 0n)))

/** `n` txns of TXN_KEYS puts each (32 in flight): n revisions, n × TXN_KEYS events. */
const writeTxns = (c: EtcdClientShape, prefix: string, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    (i) =>
      c.kv.txn().success(...Array.from({ length: TXN_KEYS }, (_, k) => Op.put(`${prefix}${i % 10}/${k}`, VALUE)))
        .commit,
    { concurrency: 32, discard: true }
  )

// ---- ours ---------------------------------------------------------------------------------------

/** WATCHERS watches from `from` (0n: now) until each saw `total` events; `during` runs once all are registered. */
const oursWatch = (endpoint: string, prefix: string, from: bigint, total: number, during: () => Promise<void>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const c = yield* make({ endpoints: [endpoint] })
      let created = 0
      let finished = 0
      let allCreated!: () => void
      let allDone!: () => void
      const registered = new Promise<void>((r) => (allCreated = r))
      const done = new Promise<void>((r) => (allDone = r))
      // The plainest consumer: one callback per chunk of responses, no per-element Effect.
      const one = Effect.suspend(() => {
        let seen = 0
        return c.watch(prefix, { prefix: true, startRevision: from, createdNotify: true }).pipe(
          Stream.runForEachChunk((chunk) =>
            Effect.sync(() => {
              Chunk.forEach(chunk, (r) => {
                if (r.created && ++created === WATCHERS) allCreated()
                const before = seen
                seen += r.events.length
                if (before < total && seen >= total && ++finished === WATCHERS) allDone()
              })
            })
          )
        )
      })
      yield* Effect.forkScoped(
        Effect.all(
          Array.from({ length: WATCHERS }, () => one),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.promise(() => registered)
      yield* Effect.promise(during)
      yield* Effect.promise(() => done)
      return total * WATCHERS
    }).pipe(Effect.scoped)
  )

// ---- etcd3 --------------------------------------------------------------------------------------

const etcd3Watch = async (
  endpoint: string,
  prefix: string,
  from: bigint,
  total: number,
  during: () => Promise<void>
) => {
  const client = new Etcd3({ hosts: `http://${endpoint}` })
  try {
    let done = 0
    let finish!: () => void
    const finished = new Promise<void>((r) => (finish = r))
    const watchers = await Promise.all(
      Array.from({ length: WATCHERS }, async () => {
        let b = client.watch().prefix(prefix)
        if (from > 0n) b = b.startRevision(from.toString())
        const w = await b.create()
        let seen = 0
        w.on("data", (res) => {
          seen += res.events.length
          if (seen >= total && seen - res.events.length < total && ++done === WATCHERS) finish()
        })
        return w
      })
    )
    await during()
    await finished
    await Promise.all(watchers.map((w) => w.cancel()))
    return total * WATCHERS
  } finally {
    client.close()
  }
}

// ---- main ---------------------------------------------------------------------------------------

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

const main = async () => {
  if (!fs.existsSync(ETCD_BIN)) {
    process.stdout.write(`etcd not found at ${ETCD_BIN}: skipped\n`)
    return
  }
  const log = (s: string) => process.stderr.write(s + "\n")
  const etcd = await startEtcdHere()
  try {
    const results: Record<string, Array<Sample>> = {}
    const add = (k: string, s: Sample) => (results[k] ??= []).push(s)
    const withWriter = <A>(f: (c: EtcdClientShape) => Effect.Effect<A, unknown>) =>
      Effect.runPromise(
        Effect.flatMap(EtcdClient, f).pipe(Effect.provide(EtcdClient.layer({ endpoints: [etcd.endpoint] })))
      )

    log(`catch-up: writing ${REVISIONS} revisions…`)
    const first = (await withWriter((c) => c.kv.put("/catchup/first", VALUE))).header.revision
    await withWriter((c) => write(c, "/catchup/", REVISIONS - 1))
    const none = async () => {}
    for (let round = 0; round < ROUNDS; round++) {
      log(`round ${round + 1}/${ROUNDS}: catch-up, ${WATCHERS} watchers × ${REVISIONS} events`)
      if (WORKLOADS.includes("catch-up")) {
        if (ONLY !== "etcd3")
          add("catch-up ours", await measure(() => oursWatch(etcd.endpoint, "/catchup/", first, REVISIONS, none)))
        if (ONLY !== "ours")
          add("catch-up etcd3", await measure(() => etcd3Watch(etcd.endpoint, "/catchup/", first, REVISIONS, none)))
      }
      if (WORKLOADS.includes("live")) {
        log(`round ${round + 1}/${ROUNDS}: live, ${WATCHERS} watchers × ${LIVE_REVISIONS} puts`)
        const live = (name: string) => async () => {
          await withWriter((c) => write(c, `/live-${name}-${round}/`, LIVE_REVISIONS))
        }
        if (ONLY !== "etcd3")
          add(
            "live ours",
            await measure(() => oursWatch(etcd.endpoint, `/live-ours-${round}/`, 0n, LIVE_REVISIONS, live("ours")))
          )
        if (ONLY !== "ours")
          add(
            "live etcd3",
            await measure(() => etcd3Watch(etcd.endpoint, `/live-etcd3-${round}/`, 0n, LIVE_REVISIONS, live("etcd3")))
          )
      }
      if (WORKLOADS.includes("live-txn")) {
        const txns = Math.ceil(LIVE_REVISIONS / TXN_KEYS)
        log(`round ${round + 1}/${ROUNDS}: live-txn, ${WATCHERS} watchers × ${txns} txns of ${TXN_KEYS} puts`)
        const live = (name: string) => async () => {
          await withWriter((c) => writeTxns(c, `/txn-${name}-${round}/`, txns))
        }
        const total = txns * TXN_KEYS
        if (ONLY !== "etcd3")
          add(
            "live-txn ours",
            await measure(() => oursWatch(etcd.endpoint, `/txn-ours-${round}/`, 0n, total, live("ours")))
          )
        if (ONLY !== "ours")
          add(
            "live-txn etcd3",
            await measure(() => etcd3Watch(etcd.endpoint, `/txn-etcd3-${round}/`, 0n, total, live("etcd3")))
          )
      }
    }
    const lines = [
      `| workload | client | events delivered | events/s (median of ${ROUNDS}) | CPU µs per event (median) |`,
      "|---|---|---:|---:|---:|",
      ...Object.entries(results).map(([k, samples]) => {
        const [workload, client] = k.split(" ")
        const rate = median(samples.map((s) => (s.events / s.ms) * 1000))
        const cpu = median(samples.map((s) => s.cpuUs / s.events))
        return `| ${workload} | ${client === "ours" ? "etcd-effect EtcdClient" : "etcd3 1.1.2"} | ${fmt(samples[0]!.events)} | ${fmt(rate)} | ${fmt(cpu, 2)} |`
      })
    ]
    process.stdout.write(lines.join("\n") + "\n")
    process.stdout.write(
      `\n${WATCHERS} watchers on one prefix, 100-byte values; node ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? "?"}), load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}; etcd 3.4 on the same machine.\n`
    )
  } finally {
    await etcd.stop()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench:client failed: ${e instanceof Error ? e.stack : String(e)}\n`)
    process.exit(1)
  }
)
