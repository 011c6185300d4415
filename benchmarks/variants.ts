/**
 * bench:compare's put and range rows (its scenarios and the `bench` instrument, src/bench in this
 * process) on several variants of one server beside etcd 3.6, in the same run: every round starts
 * each variant fresh, warms it up and measures it, the order rotating each round so each variant
 * goes first as often and all see the same load. Besides the rate, the server's CPU time per
 * operation (utime + stime from /proc/<pid>/stat over the timed run). Used by bench:tracing
 * (tracing off / on) and bench:checksum (builds before / after a commit).
 */
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Bench from "../src/bench/index.js"
import { type ScenarioSpec, selectScenarios } from "./compare-scenarios.js"
import { cleanup, type Server } from "./compare-servers.js"
import { median } from "./compare-stats.js"

export interface Variant {
  readonly name: string
  /** starts the server fresh (its data dir under `root`) */
  readonly start: (root: string) => Promise<Server>
}

interface Sample {
  readonly rate: number
  /** server CPU µs per operation */
  readonly cpuUs: number | undefined
}

/** utime + stime of a process in ms, from /proc/<pid>/stat (10 ms ticks). */
const cpuMs = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

const runOnce = async (spec: ScenarioSpec, server: Server): Promise<Sample> => {
  const endpoints = [server.endpoint]
  if (spec.warmUp !== undefined) await Effect.runPromise(Bench.run(spec.bench!, { ...spec.warmUp, endpoints }))
  const c0 = cpuMs(server.pid)
  const exit = await Effect.runPromiseExit(Bench.run(spec.bench!, { ...spec.options, endpoints }))
  const c1 = cpuMs(server.pid)
  if (Exit.isFailure(exit)) throw new Error(`${spec.id}: ${String(exit.cause)}`)
  const r = exit.value
  if (r.errors > 0) throw new Error(`${spec.id}: ${r.errors} errors, first: ${r.firstError}`)
  return { rate: r.value, cpuUs: c0 === undefined || c1 === undefined ? undefined : ((c1 - c0) * 1000) / r.count }
}

export interface VariantsResult {
  readonly table: string
  readonly header: string
}

/** `rounds` alternating rounds of `scenarios` (bench:compare ids: put, range) over `variants`. */
export const runVariants = async (
  title: string,
  variants: ReadonlyArray<Variant>,
  scenarioIds: string,
  rounds: number
): Promise<VariantsResult> => {
  const specs = selectScenarios(scenarioIds)
  if (typeof specs === "string") throw new Error(specs)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-variants-"))
  cleanup.dirs.add(root)
  const startedAt = new Date()
  const loadBefore = os.loadavg()
  const loads: Array<number> = []
  const samples = new Map<string, Array<Sample>>()
  for (let round = 0; round < rounds; round++) {
    for (const spec of specs) {
      const k = round % variants.length
      for (const v of [...variants.slice(k), ...variants.slice(0, k)]) {
        loads.push(os.loadavg()[0]!)
        const server = await v.start(root)
        try {
          const s = await runOnce(spec, server)
          const key = `${spec.id}\u0000${v.name}`
          samples.set(key, [...(samples.get(key) ?? []), s])
          process.stderr.write(
            `  ${spec.id.padEnd(6)} round ${round + 1}  ${v.name.padEnd(40)} ${s.rate.toFixed(0)} ${spec.unit}, ` +
              `${s.cpuUs?.toFixed(0) ?? "?"} µs server CPU/op  load ${os.loadavg()[0]!.toFixed(2)}\n`
          )
        } finally {
          await server.stop()
        }
        ;(globalThis as { gc?: () => void }).gc?.()
      }
    }
  }
  const loadAfter = os.loadavg()
  const lines = [
    `| scenario | ${variants.map((v) => v.name).join(" | ")} |`,
    `|---|${variants.map(() => "---:").join("|")}|`
  ]
  for (const spec of specs) {
    const cells = variants.map((v) => {
      const ss = samples.get(`${spec.id}\u0000${v.name}`) ?? []
      const rate = median(ss.map((s) => s.rate))
      const cpus = ss.flatMap((s) => (s.cpuUs === undefined ? [] : [s.cpuUs]))
      const cpu = median(cpus)
      return (
        `**${rate?.toFixed(0) ?? "–"}** (${ss.map((s) => s.rate.toFixed(0)).join(", ")})` +
        `; ${cpu?.toFixed(0) ?? "–"} µs CPU/op (${cpus.map((c) => c.toFixed(0)).join(", ")})`
      )
    })
    lines.push(`| ${spec.id}: ${spec.describe(spec.options)}, ${spec.unit} | ${cells.join(" | ")} |`)
  }
  const header =
    `${title}: median of ${rounds} alternating rounds (each round's figure in brackets); server CPU per op\n` +
    `${startedAt.toISOString()}, ${os.cpus().length} cores, Node ${process.version}; load average ` +
    `${loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ${loadAfter.map((l) => l.toFixed(2)).join(" ")} after; ` +
    `1-min load during the runs ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`
  return { header, table: lines.join("\n") }
}
