/**
 * `npm run bench:scale`: how cost grows, for ours and each etcd, one fresh server per point:
 *
 *   fanout   fan-out events/s and server RSS growth per watcher at 1k … 10M watchers of one key on
 *            10 streams; puts chosen so each point delivers ~5M events (at least one put);
 *   streams  the same at 100k watchers on 1, 10, 100 and 1,000 streams (100 streams a connection);
 *   idle     RSS per idle watcher (distinct keys) at 1M: 10 × 100k and 100 × 10k;
 *   puts     durable puts/s at 1, 8, 32, 128 and 512 clients (8 connections, 1 below 8 clients);
 *   catchup  catch-up of 1M events: 100k revisions × 10 watchers and 10k × 100.
 *
 *   npm run build && npm run bench:scale -- [--only fanout,streams,idle,puts,catchup]
 *     [--systems etcd-effect,etcd-3.4,etcd-3.6] [--max-watchers N] [--etcd-max-watchers N]
 *     [--pin] [--json FILE]
 *
 * etcd runs up to --etcd-max-watchers (default 1M: 10M etcd watchers would need ~17 GB on 3.4).
 * RSS per watcher: the server's VmRSS when the load generator has created every watcher (read
 * from /proc as its phase changes; the fan-out rows) or 2 s after (the idle rows), less its VmRSS
 * after a warm-up stream, divided by the watchers. Every point prints as soon as it is measured.
 */
import { Effect, Exit } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Bench from "../src/bench/index.js"
import { cleanup, projectRoot, readRss, type Server, startEtcdServer, startOurs } from "./compare-servers.js"
import { type EtcdName, formatValue, OURS, type SystemName } from "./compare-stats.js"
import { ETCD_BIN, sleep } from "./etcd.js"
import { goInstruments } from "./etcd-tool.js"

const { values: args } = parseArgs({
  options: {
    only: { type: "string" },
    systems: { type: "string" },
    "max-watchers": { type: "string" },
    "etcd-max-watchers": { type: "string" },
    pin: { type: "boolean", default: false },
    json: { type: "string" }
  }
})
const list = (s: string | undefined, d: string) => (s ?? d).split(",").map((x) => x.trim())
const SECTIONS = list(args.only, "fanout,streams,idle,puts,catchup")
const SYSTEMS = list(args.systems, "etcd-effect,etcd-3.4,etcd-3.6") as Array<SystemName>
const MAX_WATCHERS = Number(args["max-watchers"] ?? 10_000_000)
const ETCD_MAX_WATCHERS = Number(args["etcd-max-watchers"] ?? 1_000_000)
const pinned = args.pin === true

const bins: Record<EtcdName, string | undefined> = {
  "etcd-3.4": ETCD_BIN,
  "etcd-3.6": undefined,
  "etcd-3.7": undefined
}
if (SYSTEMS.some((s) => s === "etcd-3.6" || s === "etcd-3.7")) {
  const go = goInstruments(projectRoot())
  bins["etcd-3.6"] = go.bins["ETCD_36_BIN"]
  bins["etcd-3.7"] = go.bins["ETCD_37_BIN"]
}
if (pinned) execFileSync("taskset", ["-a", "-cp", "0", String(process.pid)], { stdio: "ignore" })
const SERVER_CPU = pinned ? { wrap: ["taskset", "-c", "1"] } : {}

const root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-scale-"))
cleanup.dirs.add(root)
process.on("exit", () => cleanup.now())
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    cleanup.now()
    process.exit(130)
  })
}

const start = (system: SystemName): Promise<Server> =>
  system === OURS
    ? startOurs({ root, readyTimeoutMs: 60_000, ...SERVER_CPU })
    : startEtcdServer(root, { system, bin: bins[system]!, ...SERVER_CPU })

const runEffect = async <A>(effect: Effect.Effect<A, unknown>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(String(exit.cause).split("\n").slice(0, 3).join(" "))
}

export interface Point {
  readonly section: string
  readonly point: string
  readonly system: SystemName
  /** the headline: events/s, puts/s */
  readonly value?: number
  readonly unit: string
  readonly rssPerWatcher?: number
  readonly rssMb?: number
  readonly seconds?: number
  readonly error?: string
  readonly load: number
}

const points: Array<Point> = []
const record = (p: Point) => {
  points.push(p)
  process.stderr.write(
    `  ${p.section.padEnd(8)} ${p.point.padEnd(26)} ${p.system.padEnd(11)} ` +
      (p.error !== undefined
        ? `ERROR ${p.error}`
        : `${formatValue(p.value)} ${p.unit}` +
          (p.rssPerWatcher === undefined ? "" : `, ${formatValue(p.rssPerWatcher)} B/watcher`) +
          (p.rssMb === undefined ? "" : `, RSS ${formatValue(p.rssMb)} MB`)) +
      `  (load ${p.load.toFixed(2)})\n`
  )
}

/** One point on a fresh server: `measure` gets it, its result recorded with the load at its start. */
const onFresh = async (
  section: string,
  point: string,
  system: SystemName,
  unit: string,
  measure: (server: Server) => Promise<Omit<Point, "section" | "point" | "system" | "unit" | "load">>
) => {
  const load = os.loadavg()[0]!
  let server: Server | undefined
  try {
    server = await start(system)
    // a warm-up stream, then the base the growth is measured from
    await runEffect(
      Effect.scoped(Bench.openIdleWatchers({ endpoints: [server.endpoint], streams: 1, watchersPerStream: 10 }))
    )
    await sleep(1000)
    record({ section, point, system, unit, load, ...(await measure(server)) })
  } catch (e) {
    record({ section, point, system, unit, load, error: e instanceof Error ? e.message : String(e) })
  } finally {
    await server?.stop()
    ;(globalThis as { gc?: () => void }).gc?.()
  }
}

/** A fan-out run; the server's RSS read when the watchers are all created (the phase changes). */
const fanOut = async (server: Server, streams: number, watchers: number) => {
  const base = readRss(server.pid)
  let atCreated: number | undefined
  let sawCreate = false
  const puts = Math.min(5000, Math.max(1, Math.ceil(5_000_000 / watchers)))
  const started = performance.now()
  const result = await runEffect(
    Bench.run(
      "watch",
      {
        endpoints: [server.endpoint],
        conns: Math.max(1, Math.ceil(streams / 100)),
        streams,
        watchersPerStream: watchers / streams,
        putTotal: puts,
        putRate: 0,
        stallTimeoutMs: 600_000
      },
      (p) => {
        if (p.phase === "creating watchers") sawCreate = true
        else if (sawCreate && atCreated === undefined) atCreated = readRss(server.pid)
      }
    )
  )
  const rss = readRss(server.pid)
  if (result.errors > 0) throw new Error(`${result.errors} errors: ${result.firstError}`)
  return {
    value: result.value,
    ...(atCreated === undefined ? {} : { rssPerWatcher: (atCreated - base) / watchers }),
    rssMb: Math.max(rss, atCreated ?? 0) / 1e6,
    seconds: (performance.now() - started) / 1000
  }
}

const idle = async (server: Server, streams: number, perStream: number) => {
  const base = readRss(server.pid)
  const started = performance.now()
  return runEffect(
    Effect.scoped(
      Effect.gen(function* () {
        const created = yield* Bench.openIdleWatchers({
          endpoints: [server.endpoint],
          conns: Math.max(1, Math.ceil(streams / 100)),
          streams,
          watchersPerStream: perStream,
          stallTimeoutMs: 600_000
        })
        const seconds = (performance.now() - started) / 1000
        yield* Effect.sleep("2 seconds")
        const rss = readRss(server.pid)
        if (created !== streams * perStream) throw new Error(`${created} of ${streams * perStream} created`)
        return { value: created / seconds, rssPerWatcher: (rss - base) / created, rssMb: rss / 1e6, seconds }
      })
    )
  )
}

const allowed = (system: SystemName, watchers: number) =>
  watchers <= MAX_WATCHERS && (system === OURS || watchers <= ETCD_MAX_WATCHERS)

const k = (x: number) => (x >= 1e6 ? `${x / 1e6}M` : x >= 1e3 ? `${x / 1e3}k` : String(x))

const main = async () => {
  process.stderr.write(
    `bench:scale: ${SECTIONS.join(", ")} on ${SYSTEMS.join(", ")}${pinned ? " (pinned)" : ""}; load ${os.loadavg()[0]!.toFixed(2)}\n`
  )
  for (const section of SECTIONS) {
    if (section === "fanout") {
      for (const w of [1_000, 10_000, 100_000, 1_000_000, 10_000_000]) {
        for (const system of SYSTEMS) {
          if (allowed(system, w)) {
            await onFresh("fanout", `${k(w)} watchers, 10 streams`, system, "events/s", (s) => fanOut(s, 10, w))
          }
        }
      }
    } else if (section === "streams") {
      for (const streams of [1, 10, 100, 1000]) {
        for (const system of SYSTEMS) {
          await onFresh("streams", `100k watchers, ${streams} streams`, system, "events/s", (s) =>
            fanOut(s, streams, 100_000)
          )
        }
      }
    } else if (section === "idle") {
      for (const [streams, per] of [
        [10, 100_000],
        [100, 10_000],
        [10, 1_000_000]
      ] as const) {
        for (const system of SYSTEMS) {
          if (allowed(system, streams * per)) {
            await onFresh("idle", `${streams} × ${k(per)} idle`, system, "creates/s", (s) => idle(s, streams, per))
          }
        }
      }
    } else if (section === "puts") {
      for (const clients of [1, 8, 32, 128, 512]) {
        for (const system of SYSTEMS) {
          await onFresh("puts", `${clients} clients`, system, "puts/s", async (s) => {
            const options = {
              endpoints: [s.endpoint],
              clients,
              conns: Math.min(8, clients),
              total: Math.max(2000, clients * 60)
            }
            await runEffect(Bench.run("put", { ...options, total: Math.max(1000, clients * 10) }))
            const r = await runEffect(Bench.run("put", options))
            if (r.errors > 0) throw new Error(`${r.errors} errors: ${r.firstError}`)
            return { value: r.value, seconds: r.durationMs / 1000 }
          })
        }
      }
    } else if (section === "catchup") {
      for (const [history, watchers] of [
        [100_000, 10],
        [10_000, 100]
      ] as const) {
        for (const system of SYSTEMS) {
          await onFresh("catchup", `${k(history)} revisions × ${watchers}`, system, "events/s", async (s) => {
            const r = await runEffect(
              Bench.run("watch-catchup", {
                endpoints: [s.endpoint],
                history,
                streams: 1,
                watchersPerStream: watchers,
                stallTimeoutMs: 600_000
              })
            )
            if (r.errors > 0) throw new Error(`${r.errors} errors: ${r.firstError}`)
            return { value: r.value, seconds: r.durationMs / 1000 }
          })
        }
      }
    } else throw new Error(`unknown section ${section}`)
  }
  if (args.json !== undefined) fs.writeFileSync(args.json, JSON.stringify(points, null, 2) + "\n")
  // one table: every point, each system's figure
  const keys = [...new Set(points.map((p) => `${p.section}|${p.point}`))]
  console.log(
    `| section | point | ${SYSTEMS.map((s) => `${s}`).join(" | ")} | ${SYSTEMS.map((s) => `${s} B/watcher`).join(" | ")} |`
  )
  console.log(`|---|---|${SYSTEMS.map(() => "---:").join("|")}|${SYSTEMS.map(() => "---:").join("|")}|`)
  for (const key of keys) {
    const [section, point] = key.split("|")
    const of = (s: SystemName) => points.find((p) => p.section === section && p.point === point && p.system === s)
    const cell = (p: Point | undefined) =>
      p === undefined ? "–" : p.error !== undefined ? "error" : `${formatValue(p.value)} (load ${p.load.toFixed(1)})`
    const rss = (p: Point | undefined) => (p?.rssPerWatcher === undefined ? "–" : formatValue(p.rssPerWatcher))
    console.log(
      `| ${section} | ${point} | ${SYSTEMS.map((s) => cell(of(s))).join(" | ")} | ${SYSTEMS.map((s) => rss(of(s))).join(" | ")} |`
    )
  }
}

main().then(
  () => {
    cleanup.now()
    process.exit(0)
  },
  (e: unknown) => {
    process.stderr.write(`bench:scale: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    cleanup.now()
    process.exit(1)
  }
)
