/**
 * etcd's own load generator, tools/benchmark (Go: clientv3 over grpc-go), as bench:compare's second
 * instrument: where it is, how to run it against an endpoint, and how to read its report.
 *
 * The binary comes from benchmarks/go/build.sh (cached outside the repository) or from
 * $ETCD_BENCHMARK_BIN. Its report (go.etcd.io/etcd/pkg/v3/report) prints, per phase, an optional
 * "<Phase> summary:" line, then "Summary:" with Total, Slowest, Fastest, Average, Stddev and
 * Requests/sec, a histogram, "Latency distribution:" (only the percentiles above 0) and, when calls
 * failed, "Error distribution:" with a count per message. `--precise` prints full precision.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

export interface ToolSummary {
  /** "Summary" when the phase has no title of its own (put, range, txn-put) */
  readonly title: string
  readonly totalS?: number
  readonly slowestS?: number
  readonly averageS?: number
  readonly rps?: number
  /** percentile → seconds, as printed ("99" → 0.0012) */
  readonly percentiles: Readonly<Record<string, number>>
  /** calls counted in its error distribution */
  readonly errors: number
  readonly firstError?: string
}

const number = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const x = Number(text)
  return Number.isFinite(x) ? x : undefined
}

/** Every summary of a report, in order; the progress bar and gRPC logs (stderr) are not in `stdout`. */
export const parseToolReport = (stdout: string): Array<ToolSummary> => {
  const out: Array<{ -readonly [K in keyof ToolSummary]: ToolSummary[K] }> = []
  let current: (typeof out)[number] | undefined
  let title: string | undefined
  let block: "none" | "latency" | "errors" = "none"
  for (const raw of stdout.split("\n")) {
    const line = raw.replace(/\r$/, "")
    const titled = /^([A-Za-z][\w -]*? summary):\s*$/.exec(line)
    if (titled !== null) {
      title = titled[1]!
      current = undefined
      block = "none"
      continue
    }
    if (/^Summary:\s*$/.test(line)) {
      current = { title: title ?? "Summary", percentiles: {}, errors: 0 }
      out.push(current)
      title = undefined
      block = "none"
      continue
    }
    if (current === undefined) continue
    const field = /^\s+(Total|Slowest|Average|Requests\/sec):\s*([-\d.e+]+)/.exec(line)
    if (field !== null) {
      const v = number(field[2])
      if (v === undefined) continue
      if (field[1] === "Total") current.totalS = v
      else if (field[1] === "Slowest") current.slowestS = v
      else if (field[1] === "Average") current.averageS = v
      else current.rps = v
      continue
    }
    if (/^Latency distribution:/.test(line)) block = "latency"
    else if (/^Error distribution:/.test(line)) block = "errors"
    else if (/^\S/.test(line)) block = "none"
    else if (block === "latency") {
      const p = /^\s+([\d.]+)% in ([-\d.e+]+) secs/.exec(line)
      if (p !== null) current.percentiles = { ...current.percentiles, [p[1]!]: number(p[2]) ?? Number.NaN }
    } else if (block === "errors") {
      const e = /^\s+\[(\d+)\]\s+(.*)$/.exec(line)
      if (e !== null) {
        current.errors += Number(e[1])
        current.firstError ??= e[2]!
      }
    }
  }
  return out
}

/**
 * A summary's 99th percentile in ms. The tool leaves out percentiles whose value is 0 and those a
 * small run has no sample for: no "99%" line then means its slowest call (or 0 with no line at all).
 */
export const p99Ms = (s: ToolSummary): number => {
  const p = s.percentiles["99"]
  if (p !== undefined) return p * 1000
  const any = Object.keys(s.percentiles).length > 0
  return any ? (s.slowestS ?? 0) * 1000 : 0
}

export const p50Ms = (s: ToolSummary): number | undefined => {
  const p = s.percentiles["50"]
  return p !== undefined ? p * 1000 : undefined
}

export interface ToolOutcome {
  readonly summary: ToolSummary
  readonly all: ReadonlyArray<ToolSummary>
  readonly wallMs: number
  readonly cpuMs?: number
}

/**
 * Runs the tool (`wrap` e.g. ["taskset", "-c", "0"]) against `endpoint` with `args`; resolves with
 * the summary named `section` (the last one without it), or rejects with the tool's last words.
 */
export const runTool = (
  bin: string,
  endpoint: string,
  args: ReadonlyArray<string>,
  options: {
    readonly section?: string
    readonly wrap?: ReadonlyArray<string>
    readonly timeoutMs: number
    readonly onSpawn?: (pid: number) => void
    readonly onExit?: (pid: number) => void
  }
): Promise<ToolOutcome> =>
  new Promise((resolve, reject) => {
    const argv = ["--endpoints", endpoint, "--precise", ...args]
    const wrap = options.wrap ?? []
    const started = performance.now()
    const child = spawn(wrap[0] ?? bin, wrap.length === 0 ? argv : [...wrap.slice(1), bin, ...argv], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    if (child.pid !== undefined) options.onSpawn?.(child.pid)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
      if (stderr.length > 64 * 1024) stderr = stderr.slice(-16 * 1024)
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      if (child.pid !== undefined) options.onExit?.(child.pid)
      const wallMs = performance.now() - started
      const all = parseToolReport(stdout)
      const summary = options.section === undefined ? all[all.length - 1] : all.find((s) => s.title === options.section)
      if (code !== 0 || summary === undefined) {
        const last = (stderr + stdout)
          .split("\n")
          .filter((l) => l.trim() !== "" && !/INFO: \[core\]/.test(l))
          .slice(-3)
          .join(" | ")
        reject(
          new Error(
            `benchmark ${args.find((a) => !a.startsWith("-") && !/^\d+$/.test(a)) ?? ""} ${
              signal !== null ? `killed by ${signal}` : `exit ${code}`
            }${summary === undefined ? `, no "${options.section ?? "Summary"}" in its report` : ""}: ${last.slice(0, 300)}`
          )
        )
        return
      }
      resolve({ summary, all, wallMs })
    })
  })

/** The Go build script of the instruments (benchmarks/go/build.sh), from the repository root. */
export const goBuildScript = (root: string): string => path.join(root, "benchmarks", "go", "build.sh")

export interface GoInstruments {
  /** ETCD_36_BIN, ETCD_37_BIN, ETCD_BENCHMARK_BIN, KUBE_CLIENT_BIN → path, those there are */
  readonly bins: Readonly<Record<string, string>>
  /** why some are missing (no Go, the build failed) */
  readonly problem?: string
}

const GO_BIN_VARS = ["ETCD_36_BIN", "ETCD_37_BIN", "ETCD_BENCHMARK_BIN", "KUBE_CLIENT_BIN"]

/** The variables of GO_BIN_VARS set in the environment (they win over the build's). */
const binsFromEnv = (): Record<string, string> =>
  Object.fromEntries(GO_BIN_VARS.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])))

/** build.sh's `NAME_BIN=path` lines. */
const parseBins = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split("\n").flatMap((l) => {
      const m = /^(\w+_BIN)=(.+)$/.exec(l.trim())
      return m === null ? [] : [[m[1]!, m[2]!]]
    })
  )

const BUILD_TIMEOUT_MS = 30 * 60_000

/**
 * The binaries benchmarks/go/build.sh provides (ETCD_36_BIN, ETCD_37_BIN, ETCD_BENCHMARK_BIN,
 * KUBE_CLIENT_BIN), each overridable by the environment variable of that name. Building takes minutes the first
 * time (cached after); without Go the result says why. Synchronous: the process can do nothing else,
 * a signal's handler included, until the build ends (buildGoInstruments for a program that must).
 */
export const goInstruments = (root: string): GoInstruments => {
  const fromEnv = binsFromEnv()
  if (GO_BIN_VARS.every((k) => fromEnv[k] !== undefined)) return { bins: fromEnv }
  const script = goBuildScript(root)
  if (!fs.existsSync(script)) return { bins: fromEnv, problem: `${script} is missing` }
  try {
    const text = execFileSync("bash", [script], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      timeout: BUILD_TIMEOUT_MS
    })
    return { bins: { ...parseBins(text), ...fromEnv } }
  } catch (e) {
    return { bins: fromEnv, problem: `benchmarks/go/build.sh failed: ${String(e).split("\n")[0]}` }
  }
}

/**
 * goInstruments without blocking the process: build.sh runs as the leader of its own process group
 * (`detached`), announced to `onSpawn` with its pid, the group's id, so that the caller's signal
 * handler can kill the build and every go command under it (`process.kill(-pid)`); `onExit` when it
 * has ended. Progress goes to this process's stderr.
 */
export const buildGoInstruments = (
  root: string,
  hooks: { readonly onSpawn?: (pid: number) => void; readonly onExit?: (pid: number) => void } = {},
  /** build.sh's targets (3.6, 3.7, kube-client): only what the caller needs; none: all */
  targets: ReadonlyArray<string> = []
): Promise<GoInstruments> => {
  const fromEnv = binsFromEnv()
  if (GO_BIN_VARS.every((k) => fromEnv[k] !== undefined)) return Promise.resolve({ bins: fromEnv })
  const script = goBuildScript(root)
  if (!fs.existsSync(script)) return Promise.resolve({ bins: fromEnv, problem: `${script} is missing` })
  return new Promise((resolve) => {
    const child = spawn("bash", [script, ...targets], { stdio: ["ignore", "pipe", "inherit"], detached: true })
    const pid = child.pid
    if (pid !== undefined) hooks.onSpawn?.(pid)
    let stdout = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    const timer = setTimeout(() => {
      try {
        if (pid !== undefined) process.kill(-pid, "SIGKILL")
      } catch {
        // already gone
      }
    }, BUILD_TIMEOUT_MS)
    const failed = (why: string) => ({ bins: fromEnv, problem: `benchmarks/go/build.sh failed: ${why}` })
    child.once("error", (e) => {
      clearTimeout(timer)
      resolve(failed(e.message))
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      if (pid !== undefined) hooks.onExit?.(pid)
      if (code === 0) resolve({ bins: { ...parseBins(stdout), ...fromEnv } })
      else resolve(failed(signal !== null ? `killed by ${signal}` : `exit code ${code}`))
    })
  })
}
