/**
 * `npm run bench:compare`: etcd-effect's server against etcd 3.4.23 (Debian) and the newest etcd
 * 3.6 (benchmarks/go/build.sh), side by side on this machine, each figure compared with the better
 * of the etcds, with issue 29's targets (round 3).
 *
 *   npm run bench:compare [-- --rounds N] [--only a,b] [--quick] [--etcd 3.4,3.6[,3.7]]
 *                            [--instrument bench,etcd-tool] [--pin] [--write|--no-write]
 *                            [--cpu-prof DIR] [--json FILE]
 *
 * Each scenario (benchmarks/compare-scenarios.ts) runs on each instrument that has it: `bench`
 * (src/bench in this process) and `etcd-tool` (etcd's tools/benchmark, a Go child process). Every
 * round gives each system a fresh server (start, wait until it answers, warm up, measure, stop);
 * the order rotates so each system goes first once in every `systems` rounds.
 *
 * --pin puts the load on CPU 0 (this process and the tool) and the server on CPU 1 (`taskset`).
 * --write rewrites the marked section of docs/benchmarks.md and docs/bench-compare.svg. It is on by
 * default for a full run (all scenarios, not --quick) and off otherwise; --write / --no-write decide.
 * --cpu-prof DIR runs our server under `node --cpu-prof --cpu-prof-dir DIR`: one profile per server
 * start, <scenario>-<instrument>-round<N>.cpuprofile, written when it exits on SIGTERM.
 */
import { Cause, Effect, Exit } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Bench from "../src/bench/index.js"
import {
  type Instrument,
  INSTRUMENTS,
  type LoadOptions,
  runsOn,
  type ScenarioSpec,
  selectScenarios
} from "./compare-scenarios.js"
import {
  chartBars,
  renderSection,
  renderSvg,
  renderText,
  rewriteSection,
  type RunInfo,
  type ScenarioOutcome
} from "./compare-render.js"
import {
  cleanup,
  etcdInstalled,
  etcdVersion,
  ourMain,
  projectRoot,
  putKey,
  readRss,
  serveHasMetricsFlag,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"
import { type EtcdName, formatValue, OURS, type Sample, summarize, type SystemName } from "./compare-stats.js"
import { ETCD_BIN, sleep } from "./etcd.js"
import { buildGoInstruments, type GoInstruments, p50Ms, p99Ms, runTool } from "./etcd-tool.js"

// ---- cleanup on every way out, installed before anything is started -------------------------------
// (a signal before this line finds nothing to clean up: no child, no temp dir yet)

process.on("exit", () => cleanup.now())
let live: Server | undefined
let interrupted = false
const onSignal = (signal: NodeJS.Signals) => {
  if (interrupted) {
    cleanup.now()
    process.exit(130)
  }
  interrupted = true
  process.stderr.write(`\nbench:compare: ${signal}, stopping the server and cleaning up\n`)
  // a graceful stop, so a --cpu-prof profile still gets written; a second signal kills at once
  const server = live
  void Promise.race([server?.stop() ?? Promise.resolve(), sleep(10_000)]).finally(() => {
    cleanup.now()
    process.exit(130)
  })
}
process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)

const usage = `usage: npm run bench:compare [-- options]
  --rounds N          rounds per scenario (default 3)
  --only a,b          scenarios: watch, watch-latency-100, watch-latency-1000, watch-latency-cold,
                      watch-create, watch-catchup, put, txn-put, range, watch-get, watch-idle,
                      watch-idle-streams, serve-idle (default all)
  --etcd 3.4,3.6      the etcds to run (3.4 is Debian's /usr/bin/etcd; 3.6 and 3.7 come from
                      benchmarks/go/build.sh or $ETCD_36_BIN / $ETCD_37_BIN); default 3.4,3.6
  --instrument a,b    bench (src/bench), etcd-tool (etcd's tools/benchmark); default both
  --pin               load generator on CPU 0, server on CPU 1 (taskset)
  --quick             tiny sizes: a smoke run, not a measurement
  --write             rewrite docs/benchmarks.md's bench:compare section and docs/bench-compare.svg
                      (default: on for a full run, off with --quick or --only)
  --no-write          never write the docs
  --cpu-prof DIR      run our server under node --cpu-prof --cpu-prof-dir DIR
  --json FILE         also write every sample as JSON to FILE`

const fail = (message: string): never => {
  process.stderr.write(`bench:compare: ${message}\n`)
  process.exit(1)
}

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        rounds: { type: "string" },
        only: { type: "string" },
        quick: { type: "boolean", default: false },
        write: { type: "boolean" },
        "no-write": { type: "boolean" },
        "cpu-prof": { type: "string" },
        etcd: { type: "string" },
        instrument: { type: "string" },
        pin: { type: "boolean", default: false },
        json: { type: "string" },
        help: { type: "boolean", short: "h", default: false }
      },
      allowPositionals: false
    }).values
  } catch (e) {
    return fail(`${e instanceof Error ? e.message : String(e)}\n${usage}`)
  }
})()
if (parsed.help) {
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}
const rounds = parsed.rounds === undefined ? 3 : Number(parsed.rounds)
if (!Number.isInteger(rounds) || rounds < 1) fail(`--rounds must be a positive integer, got ${parsed.rounds}`)
const selected = selectScenarios(parsed.only)
if (typeof selected === "string") fail(selected)
const specs = selected as ReadonlyArray<ScenarioSpec>
const quick = parsed.quick === true
const fullRun = !quick && parsed.only === undefined
const write = parsed["no-write"] === true ? false : parsed.write === true ? true : fullRun
const cpuProfDir = parsed["cpu-prof"] === undefined ? undefined : path.resolve(parsed["cpu-prof"])

const pinned = parsed.pin === true
const listOf = (text: string | undefined, fallback: string) =>
  (text ?? fallback)
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "")
const etcdNames = listOf(parsed.etcd, "3.4,3.6").map((v) => `etcd-${v}`)
for (const e of etcdNames) {
  if (!["etcd-3.4", "etcd-3.6", "etcd-3.7"].includes(e)) fail(`--etcd: unknown etcd ${e.slice(5)} (3.4, 3.6, 3.7)`)
}
const instruments = listOf(parsed.instrument, INSTRUMENTS.join(",")) as Array<Instrument>
for (const i of instruments) if (!INSTRUMENTS.includes(i)) fail(`--instrument: unknown ${i} (bench, etcd-tool)`)

if (etcdNames.includes("etcd-3.4") && !etcdInstalled()) {
  fail(`etcd not found at ${ETCD_BIN} (set ETCD_BIN): nothing to compare against`)
}
if (!fs.existsSync(ourMain())) fail(`${ourMain()} is missing: run \`npm run build\` first`)
if (cpuProfDir !== undefined) fs.mkdirSync(cpuProfDir, { recursive: true })

/** The etcd binaries and the tool: Go builds only when something asks for them. */
const go = await (async (): Promise<GoInstruments> => {
  const needs = etcdNames.some((e) => e !== "etcd-3.4") || instruments.includes("etcd-tool")
  if (!needs) return { bins: {} }
  process.stderr.write("bench:compare: benchmarks/go/build.sh (cached after the first build)\n")
  // a child of its own process group, in `cleanup`: a signal during a build (minutes) ends it and go
  // only the modules asked for: etcd's tool is in etcd-3.6/, kube-client is not compare's
  const targets = [
    ...(etcdNames.includes("etcd-3.6") || instruments.includes("etcd-tool") ? ["3.6"] : []),
    ...(etcdNames.includes("etcd-3.7") ? ["3.7"] : [])
  ]
  return buildGoInstruments(
    projectRoot(),
    { onSpawn: (pid) => cleanup.groups.add(pid), onExit: (pid) => cleanup.groups.delete(pid) },
    targets
  )
})()
const etcdBins: Record<EtcdName, string | undefined> = {
  "etcd-3.4": ETCD_BIN,
  "etcd-3.6": go.bins["ETCD_36_BIN"],
  "etcd-3.7": go.bins["ETCD_37_BIN"]
}
for (const e of etcdNames) {
  if (etcdBins[e as EtcdName] === undefined)
    fail(`no binary for ${e}: ${go.problem ?? "set ETCD_36_BIN / ETCD_37_BIN"}`)
}
const toolBin = go.bins["ETCD_BENCHMARK_BIN"]
if (instruments.includes("etcd-tool") && toolBin === undefined) {
  fail(`etcd's benchmark tool is not available: ${go.problem ?? "set ETCD_BENCHMARK_BIN"}`)
}
const systems: ReadonlyArray<SystemName> = [...(etcdNames as Array<EtcdName>), OURS]

/** --pin: this process (every thread) on CPU 0 before any load runs; servers on CPU 1. */
const LOAD_CPU = ["taskset", "-c", "0"]
const SERVER_CPU = ["taskset", "-c", "1"]
if (pinned) {
  if (os.cpus().length < 2) fail("--pin needs two CPUs")
  try {
    execFileSync("taskset", ["-a", "-cp", "0", String(process.pid)], { stdio: "ignore" })
  } catch (e) {
    fail(`--pin: taskset failed: ${String(e).split("\n")[0]}`)
  }
}

// ---- the temp dir, removed on every way out ------------------------------------------------------

const root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-compare-"))
cleanup.dirs.add(root)

// ---- one measurement ---------------------------------------------------------------------------------

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const e = failure.value
    if (typeof e === "object" && e !== null && "reason" in e) return String(e.reason)
    return String(e)
  }
  return Cause.pretty(cause).split("\n").slice(0, 3).join(" ")
}

const runEffect = async <A>(effect: Effect.Effect<A, unknown>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(describeCause(exit.cause))
}

const TIMEOUT = quick ? "90 seconds" : "5 minutes"

const measureRun = async (spec: ScenarioSpec, options: LoadOptions, server: Server, round: number): Promise<Sample> => {
  const result = await runEffect(
    Bench.run(spec.bench!, { ...options, endpoints: [server.endpoint] }).pipe(
      Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`timed out after ${TIMEOUT}`) })
    )
  )
  const detail = {
    unit: result.unit,
    count: result.count,
    errors: result.errors,
    params: result.params,
    ...(result.latencyMs === undefined ? {} : { latencyMs: result.latencyMs })
  }
  if (result.unit !== spec.unit) {
    return { round, error: `unit ${result.unit}, expected ${spec.unit}`, detail }
  }
  if (result.errors > 0) {
    // a run with failed operations measured something else: keep it out of the median
    return {
      round,
      value: result.value,
      durationMs: result.durationMs,
      error: `${result.errors} errors${result.firstError === undefined ? "" : `, first: ${result.firstError}`}`,
      detail
    }
  }
  return { round, value: result.value, durationMs: result.durationMs, detail }
}

/** RSS growth per idle watcher of the server process: warm up, settle, read, open, settle, read. */
const measureIdleRss = async (options: LoadOptions, server: Server, round: number): Promise<Sample> => {
  const endpoints = [server.endpoint]
  await runEffect(Effect.scoped(Bench.openIdleWatchers({ endpoints, streams: 1, watchersPerStream: 10 })))
  await sleep(1000)
  const before = readRss(server.pid)
  const started = performance.now()
  const { after, created, createMs } = await runEffect(
    Effect.scoped(
      Effect.gen(function* () {
        const created = yield* Bench.openIdleWatchers({ ...options, endpoints })
        const createMs = performance.now() - started
        yield* Effect.sleep("2 seconds")
        return { created, createMs, after: readRss(server.pid) }
      })
    ).pipe(Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`timed out after ${TIMEOUT}`) }))
  )
  const expected = (options.streams ?? 1) * (options.watchersPerStream ?? 1)
  const detail = { rssBefore: before, rssAfter: after, watchers: created, createMs: Math.round(createMs) }
  if (created !== expected) return { round, error: `${created} watchers created, expected ${expected}`, detail }
  return { round, value: (after - before) / created, durationMs: createMs, detail }
}

/** The tool's run: warm-up, then the measured run; its summary's rate or p99 is the figure. */
const measureTool = async (spec: ScenarioSpec, server: Server, round: number): Promise<Sample> => {
  const tool = spec.tool!
  const timeoutMs = quick ? 90_000 : 300_000
  const run = (args: ReadonlyArray<string>) =>
    runTool(toolBin!, server.endpoint, args, {
      ...(tool.section === undefined ? {} : { section: tool.section }),
      ...(pinned ? { wrap: LOAD_CPU } : {}),
      timeoutMs,
      onSpawn: (pid) => cleanup.pids.add(pid),
      onExit: (pid) => cleanup.pids.delete(pid)
    })
  if (tool.seedKey !== undefined && !(await putKey(server.endpoint, tool.seedKey, Buffer.alloc(100, 0x61)))) {
    return { round, error: `could not write ${tool.seedKey}` }
  }
  if (!quick && tool.warmUp !== undefined) await run(tool.warmUp)
  const cpu0 = cpuTicks(server.pid)
  const { summary, wallMs } = await run(quick ? tool.quick : tool.args)
  const cpu1 = cpuTicks(server.pid)
  const value = tool.metric === "rate" ? (summary.rps ?? Number.NaN) : p99Ms(summary)
  const p50 = p50Ms(summary)
  const detail = {
    unit: spec.unit,
    args: (quick ? tool.quick : tool.args).join(" "),
    totalS: summary.totalS,
    rps: summary.rps,
    ...(cpu0 === undefined || cpu1 === undefined ? {} : { serverCpuMs: (cpu1 - cpu0) * 10 }),
    ...(tool.metric === "p99" && p50 !== undefined ? { latencyMs: { p50, p99: p99Ms(summary) } } : {})
  }
  if (summary.errors > 0) {
    return { round, value, durationMs: wallMs, error: `${summary.errors} errors, first: ${summary.firstError}`, detail }
  }
  if (!Number.isFinite(value)) return { round, error: "no figure in the tool's report", detail }
  return { round, value, durationMs: (summary.totalS ?? wallMs / 1000) * 1000, detail }
}

/** utime + stime of a process in clock ticks (10 ms), from /proc/<pid>/stat. */
const cpuTicks = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

/** The server's VmRSS 3 s after it first answered, in MB (10^6 bytes). */
const measureServeRss = async (server: Server, round: number): Promise<Sample> => {
  await sleep(3000)
  const rss = readRss(server.pid)
  return { round, value: rss / 1e6, detail: { rss } }
}

const startSystem = (spec: ScenarioSpec, instrument: Instrument, system: SystemName, round: number) =>
  system === OURS
    ? startOurs({
        root,
        ...(pinned ? { wrap: SERVER_CPU } : {}),
        ...(cpuProfDir === undefined
          ? {}
          : { cpuProfDir, cpuProfName: `${spec.id}-${instrument}-round${round}.cpuprofile` })
      })
    : startEtcdServer(root, { system, bin: etcdBins[system]!, ...(pinned ? { wrap: SERVER_CPU } : {}) })

const measure = async (
  spec: ScenarioSpec,
  instrument: Instrument,
  system: SystemName,
  round: number
): Promise<Sample> => {
  // interrupted: the signal handler is stopping everything and exits; start nothing new
  if (interrupted) return new Promise<never>(() => {})
  const options = quick ? spec.quick : spec.options
  let server: Server
  try {
    server = await startSystem(spec, instrument, system, round)
  } catch (e) {
    return { round, error: `start: ${e instanceof Error ? e.message : String(e)}` }
  }
  live = server
  let sample: Sample
  try {
    if (spec.kind === "serve-rss") sample = await measureServeRss(server, round)
    else if (spec.kind === "idle-rss") sample = await measureIdleRss(options, server, round)
    else if (instrument === "etcd-tool") sample = await measureTool(spec, server, round)
    else {
      if (!quick && spec.warmUp !== undefined) {
        await runEffect(
          Bench.run(spec.bench!, { ...spec.warmUp, endpoints: [server.endpoint] }).pipe(
            Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`warm-up timed out after ${TIMEOUT}`) })
          )
        )
      }
      sample = await measureRun(spec, options, server, round)
    }
  } catch (e) {
    sample = { round, error: e instanceof Error ? e.message : String(e) }
  }
  const gone = server.exited()
  if (gone !== undefined) {
    sample = {
      ...sample,
      error: `server ${gone} during the run${sample.error === undefined ? "" : `; ${sample.error}`}`
    }
  }
  await server.stop()
  live = undefined
  ;(globalThis as { gc?: () => void }).gc?.()
  return sample
}

// ---- the run -------------------------------------------------------------------------------------------

const cpuModel = (): string => {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))
    return m?.[1]?.replace(/\s+/g, " ").trim() ?? os.cpus()[0]?.model ?? "unknown CPU"
  } catch {
    return os.cpus()[0]?.model ?? "unknown CPU"
  }
}

const commandLine = (): string => {
  const args = process.argv.slice(2)
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)
  if (process.env.npm_lifecycle_event === "bench:compare") {
    return `npm run bench:compare${args.length > 0 ? ` -- ${args.map(quote).join(" ")}` : ""}`
  }
  return [
    "node",
    ...process.execArgv,
    path.relative(process.cwd(), process.argv[1] ?? "dist/benchmarks/compare.js"),
    ...args
  ]
    .map(quote)
    .join(" ")
}

/** Round r's order: the systems rotated by r − 1, so each goes first once in every `systems` rounds. */
const orderOf = (round: number): ReadonlyArray<SystemName> => {
  const k = (round - 1) % systems.length
  return [...systems.slice(k), ...systems.slice(0, k)]
}

const main = async () => {
  const startedAt = new Date()
  const t0 = performance.now()
  const loadBefore = os.loadavg()
  const notes = serveHasMetricsFlag() ? ["`--listen-metrics-urls` on a free port"] : []
  if (cpuProfDir !== undefined) notes.push(`under node --cpu-prof`)
  const versions = Object.fromEntries(
    systems.map((sys) => [sys, sys === OURS ? `Node ${process.version}` : etcdVersion(etcdBins[sys]!)])
  ) as Record<SystemName, string>
  process.stderr.write(
    `bench:compare: ${specs.length} scenario(s) × ${rounds} round(s) × ${systems.join(", ")} on ${instruments.join(", ")}` +
      `${quick ? " (quick)" : ""}${pinned ? " (pinned: load CPU 0, server CPU 1)" : ""}; ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}; data under ${root}\n`
  )
  const outcomes: Array<ScenarioOutcome> = []
  for (const spec of specs) {
    for (const instrument of instruments) {
      if (!runsOn(spec, instrument)) continue
      // the RSS rows belong to no client: measured once, listed under "bench"
      const samples: Partial<Record<SystemName, Array<Sample>>> = {}
      const load1: Array<number> = []
      for (let round = 1; round <= rounds; round++) {
        for (const system of orderOf(round)) {
          load1.push(os.loadavg()[0]!)
          // the line's head as the measurement starts (its server starting): what runs now, and
          // the event a caller waits for to know a run is under way
          process.stderr.write(`  ${spec.id.padEnd(19)} ${instrument.padEnd(9)} round ${round}  ${system.padEnd(11)}  `)
          const sample = await measure(spec, instrument, system, round)
          ;(samples[system] ??= []).push(sample)
          const took = sample.durationMs === undefined ? "" : ` (${(sample.durationMs / 1000).toFixed(2)} s)`
          process.stderr.write(
            (sample.error === undefined
              ? `${formatValue(sample.value)} ${spec.unit}${took}`
              : `ERROR ${sample.error}`) + `  load ${os.loadavg()[0]!.toFixed(2)}\n`
          )
        }
      }
      outcomes.push({
        spec,
        instrument,
        systems,
        params: spec.describe(quick ? spec.quick : spec.options),
        samples,
        summary: summarize(spec, samples),
        load: [Math.min(...load1), Math.max(...load1)]
      })
    }
  }
  const info: RunInfo = {
    date: startedAt,
    cpu: cpuModel(),
    cores: os.cpus().length,
    node: process.version,
    versions,
    systems,
    instruments,
    pinned,
    loadBefore,
    loadAfter: os.loadavg(),
    command: commandLine(),
    rounds,
    quick,
    elapsedS: (performance.now() - t0) / 1000,
    notes
  }
  process.stdout.write(
    `\netcd-effect vs ${systems
      .filter((x) => x !== OURS)
      .map((x) => `${x} (${versions[x]})`)
      .join(", ")} — ${info.cpu}, ${info.cores} cores, Node ${info.node}${pinned ? ", pinned" : ""}; ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ${info.loadAfter.map((l) => l.toFixed(2)).join(" ")} after\n\n`
  )
  process.stdout.write(renderText(outcomes))
  if (parsed.json !== undefined) {
    fs.writeFileSync(
      parsed.json,
      JSON.stringify(
        {
          info,
          outcomes: outcomes.map(({ spec, ...o }) => ({ id: spec.id, unit: spec.unit, target: spec.target, ...o }))
        },
        null,
        2
      ) + "\n"
    )
  }
  if (write) {
    const docs = path.join(projectRoot(), "docs")
    const mdPath = path.join(docs, "benchmarks.md")
    const svgName = "bench-compare.svg"
    const doc = fs.existsSync(mdPath) ? fs.readFileSync(mdPath, "utf8") : "# Benchmarks\n"
    fs.writeFileSync(mdPath, rewriteSection(doc, renderSection(info, outcomes, svgName)))
    const date = startedAt.toISOString().slice(0, 10)
    fs.writeFileSync(
      path.join(docs, svgName),
      renderSvg(
        chartBars(outcomes),
        "etcd-effect / the better etcd: ratio of medians per scenario and instrument",
        `${date}, ${info.cpu}, ${info.cores} cores, Node ${info.node}, ${systems.filter((x) => x !== OURS).join(" & ")}, ${rounds} round${rounds === 1 ? "" : "s"}${quick ? " (--quick)" : ""}${pinned ? ", pinned" : ""}`
      )
    )
    process.stderr.write(`bench:compare: wrote ${path.relative(process.cwd(), mdPath)} and docs/${svgName}\n`)
  }
}

main().then(
  () => {
    cleanup.now()
    process.exit(0)
  },
  (e: unknown) => {
    process.stderr.write(`bench:compare: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    cleanup.now()
    process.exit(1)
  }
)
