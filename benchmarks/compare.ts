/**
 * `npm run bench:compare`: etcd-effect's server against Debian's etcd 3.4.23, side by side on this
 * machine, with issue 6's targets for the ratio etcd-effect / etcd.
 *
 *   npm run bench:compare [-- --rounds N] [--only a,b] [--quick] [--write|--no-write]
 *                            [--cpu-prof DIR] [--json FILE]
 *
 * Each scenario (benchmarks/compare-scenarios.ts) runs `--rounds` rounds (default 3); in every round each
 * system gets a fresh server (start, wait until it answers, measure, stop), etcd first in odd rounds
 * and ours first in even ones. The load comes from src/bench (the `etcd-effect bench` generator) in
 * this process. Output: a table on stdout (medians, ratio, target, every round), progress on stderr.
 *
 * --write rewrites the marked section of docs/benchmarks.md and docs/bench-compare.svg. It is on by
 * default for a full run (all scenarios, not --quick) and off otherwise; --write / --no-write decide.
 * --cpu-prof DIR runs our server under `node --cpu-prof --cpu-prof-dir DIR`: one profile per server
 * start, <scenario>-round<N>.cpuprofile (overwritten by a later run), written when it exits on SIGTERM.
 */
import { Cause, Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Bench from "../src/bench/index.js"
import { type LoadOptions, type ScenarioSpec, selectScenarios } from "./compare-scenarios.js"
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
  readRss,
  serveHasMetricsFlag,
  type Server,
  startEtcdServer,
  startOurs
} from "./compare-servers.js"
import { formatValue, type Sample, summarize, type SystemName } from "./compare-stats.js"
import { ETCD_BIN, sleep } from "./etcd.js"

const usage = `usage: npm run bench:compare [-- options]
  --rounds N       rounds per scenario (default 3)
  --only a,b       scenarios: watch, watch-latency, watch-create, watch-catchup, put, range,
                   watch-idle, watch-idle-streams (default all)
  --quick          tiny sizes: a smoke run, not a measurement
  --write          rewrite docs/benchmarks.md's bench:compare section and docs/bench-compare.svg
                   (default: on for a full run, off with --quick or --only)
  --no-write       never write the docs
  --cpu-prof DIR   run our server under node --cpu-prof --cpu-prof-dir DIR
  --json FILE      also write every sample as JSON to FILE`

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

if (!etcdInstalled()) fail(`etcd not found at ${ETCD_BIN} (set ETCD_BIN): nothing to compare against`)
if (!fs.existsSync(ourMain())) fail(`${ourMain()} is missing: run \`npm run build\` first`)
if (cpuProfDir !== undefined) fs.mkdirSync(cpuProfDir, { recursive: true })

// ---- cleanup on every way out ---------------------------------------------------------------------

const root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-compare-"))
cleanup.dirs.add(root)
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

const measure = async (spec: ScenarioSpec, system: SystemName, round: number): Promise<Sample> => {
  // interrupted: the signal handler is stopping everything and exits; start nothing new
  if (interrupted) return new Promise<never>(() => {})
  const options = quick ? spec.quick : spec.options
  let server: Server
  try {
    server =
      system === "etcd"
        ? await startEtcdServer(root)
        : await startOurs({
            root,
            ...(cpuProfDir === undefined ? {} : { cpuProfDir, cpuProfName: `${spec.id}-round${round}.cpuprofile` })
          })
  } catch (e) {
    return { round, error: `start: ${e instanceof Error ? e.message : String(e)}` }
  }
  live = server
  let sample: Sample
  try {
    if (spec.kind === "run" && !quick && spec.warmUp !== undefined) {
      await runEffect(
        Bench.run(spec.bench!, { ...spec.warmUp, endpoints: [server.endpoint] }).pipe(
          Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`warm-up timed out after ${TIMEOUT}`) })
        )
      )
    }
    sample =
      spec.kind === "run"
        ? await measureRun(spec, options, server, round)
        : await measureIdleRss(options, server, round)
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

const main = async () => {
  const startedAt = new Date()
  const t0 = performance.now()
  const loadBefore = os.loadavg()
  const notes = serveHasMetricsFlag() ? ["`--listen-metrics-urls` on a free port"] : []
  if (cpuProfDir !== undefined) notes.push(`under node --cpu-prof`)
  process.stderr.write(
    `bench:compare: ${specs.length} scenario(s) × ${rounds} round(s)${quick ? " (quick)" : ""}; ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}; data under ${root}\n`
  )
  const outcomes: Array<ScenarioOutcome> = []
  for (const spec of specs) {
    const samples: Record<SystemName, Array<Sample>> = { etcd: [], "etcd-effect": [] }
    for (let round = 1; round <= rounds; round++) {
      const order: ReadonlyArray<SystemName> = round % 2 === 1 ? ["etcd", "etcd-effect"] : ["etcd-effect", "etcd"]
      for (const system of order) {
        const sample = await measure(spec, system, round)
        samples[system].push(sample)
        const took = sample.durationMs === undefined ? "" : ` (${(sample.durationMs / 1000).toFixed(2)} s)`
        process.stderr.write(
          `  ${spec.id.padEnd(18)} round ${round}  ${system.padEnd(11)}  ` +
            (sample.error === undefined
              ? `${formatValue(sample.value)} ${spec.unit}${took}`
              : `ERROR ${sample.error}`) +
            "\n"
        )
      }
    }
    outcomes.push({
      spec,
      params: spec.describe(quick ? spec.quick : spec.options),
      samples,
      summary: summarize(spec, samples.etcd, samples["etcd-effect"])
    })
  }
  const info: RunInfo = {
    date: startedAt,
    cpu: cpuModel(),
    cores: os.cpus().length,
    node: process.version,
    etcdVersion: etcdVersion(),
    loadBefore,
    loadAfter: os.loadavg(),
    command: commandLine(),
    rounds,
    quick,
    elapsedS: (performance.now() - t0) / 1000,
    notes
  }
  process.stdout.write(
    `\netcd-effect vs etcd ${info.etcdVersion} — ${info.cpu}, ${info.cores} cores, Node ${info.node}; ` +
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
        `etcd-effect / etcd ${info.etcdVersion.split(" ")[0]}: ratio of medians per scenario`,
        `${date}, ${info.cpu}, ${info.cores} cores, Node ${info.node}, ${rounds} round${rounds === 1 ? "" : "s"}${quick ? " (--quick)" : ""}`
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
