/**
 * The servers bench:compare measures, as child processes it owns: our `etcd-effect serve`, Debian's
 * etcd 3.4.23 and etcd 3.6/3.7 from benchmarks/go/build.sh (benchmarks/etcd.ts starts each etcd). Every child and temp dir is recorded in `cleanup` so an
 * error, Ctrl-C or a plain exit never leaves one behind. Also: VmRSS from /proc/<pid>/status.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http2 from "node:http2"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ETCD_BIN, freePort, sleep, startEtcd } from "./etcd.js"
import type { EtcdName, SystemName } from "./compare-stats.js"

export interface Server {
  readonly system: SystemName
  /** "127.0.0.1:port" */
  readonly endpoint: string
  readonly pid: number
  /** undefined while running; the exit code or signal once it has exited */
  readonly exited: () => string | undefined
  /** stops the process (ours: SIGTERM and wait, so a --cpu-prof profile gets written) and removes its data */
  readonly stop: () => Promise<void>
}

/** The repository root: the nearest directory above this file with a package.json (works from dist/ and from source). */
export const projectRoot = (): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir
    const up = path.dirname(dir)
    if (up === dir) throw new Error("no package.json above bench/compare-servers")
    dir = up
  }
}

export const ourMain = (): string => path.join(projectRoot(), "dist", "cli", "main.js")

/** Our environment without ETCD_* variables: both servers read flags from them. */
export const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ETCD_")))

// ---- cleanup -------------------------------------------------------------------------------------

/**
 * Children, process groups and directories still to be killed and removed when the process ends.
 * A group is a child spawned `detached` (its pid is its group's id) with children of its own, such
 * as benchmarks/go/build.sh and the go commands under it: killing the group ends them all.
 */
export const cleanup = {
  pids: new Set<number>(),
  groups: new Set<number>(),
  dirs: new Set<string>(),
  /** synchronous: usable from process.on("exit") */
  now(): void {
    for (const target of [...this.pids, ...[...this.groups].map((g) => -g)]) {
      try {
        process.kill(target, "SIGKILL")
      } catch {
        // already gone
      }
    }
    this.pids.clear()
    this.groups.clear()
    for (const dir of this.dirs) fs.rmSync(dir, { recursive: true, force: true })
    this.dirs.clear()
  }
}

// ---- RSS -----------------------------------------------------------------------------------------

/** VmRSS in bytes from the text of /proc/<pid>/status; undefined when absent. */
export const parseVmRss = (status: string): number | undefined => {
  const m = /^VmRSS:\s+(\d+)\s+kB\s*$/m.exec(status)
  return m === null ? undefined : Number(m[1]) * 1024
}

export const readRss = (pid: number | "self"): number => {
  const rss = parseVmRss(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  if (rss === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return rss
}

// ---- readiness -----------------------------------------------------------------------------------

/** One unary gRPC call of `path` with `message` (an encoded request) over node:http2; true when grpc-status is 0. */
const unaryOk = (endpoint: string, grpcPath: string, message: Buffer, timeoutMs: number): Promise<boolean> =>
  new Promise((resolve) => {
    let done = false
    const finish = (ok: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      session.close()
      session.destroy()
      resolve(ok)
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    const session = http2.connect(`http://${endpoint}`)
    session.on("error", () => finish(false))
    const frame = Buffer.alloc(5 + message.length)
    frame.writeUInt32BE(message.length, 1)
    message.copy(frame, 5)
    const req = session.request({
      ":method": "POST",
      ":path": grpcPath,
      "content-type": "application/grpc",
      te: "trailers"
    })
    let status: string | undefined
    req.on("response", (headers) => {
      if (headers["grpc-status"] !== undefined) status = String(headers["grpc-status"])
    })
    req.on("trailers", (trailers) => {
      if (trailers["grpc-status"] !== undefined) status = String(trailers["grpc-status"])
    })
    req.on("data", () => {})
    req.on("end", () => finish(status === "0"))
    req.on("error", () => finish(false))
    req.end(frame)
  })

/** One unary Range for key "health" over raw gRPC; resolves true when grpc-status is 0. */
export const probeRange = (endpoint: string, timeoutMs = 1000): Promise<boolean> => {
  const key = Buffer.from("health")
  // RangeRequest.key = 1
  return unaryOk(endpoint, "/etcdserverpb.KV/Range", Buffer.concat([Buffer.from([0x0a, key.length]), key]), timeoutMs)
}

/** One unary Put of `key` = `value` (each under 128 bytes); true when it succeeded (seeds a run's key). */
export const putKey = (endpoint: string, key: string, value: Buffer, timeoutMs = 5000): Promise<boolean> => {
  const k = Buffer.from(key)
  // PutRequest{key=1, value=2}
  const message = Buffer.concat([Buffer.from([0x0a, k.length]), k, Buffer.from([0x12, value.length]), value])
  return unaryOk(endpoint, "/etcdserverpb.KV/Put", message, timeoutMs)
}

// ---- our server ----------------------------------------------------------------------------------

let metricsFlag: boolean | undefined
/** Whether `serve` takes --listen-metrics-urls (its default port is fixed: we pass a free one). */
export const serveHasMetricsFlag = (): boolean => {
  if (metricsFlag === undefined) {
    try {
      const help = execFileSync(process.execPath, [ourMain(), "serve", "--help"], {
        encoding: "utf8",
        env: { ...cleanEnv(), NO_COLOR: "1" },
        timeout: 30_000
      })
      metricsFlag = help.includes("--listen-metrics-urls")
    } catch {
      metricsFlag = false
    }
  }
  return metricsFlag
}

export interface OursOptions {
  /** the temp root (data dirs are made inside it) */
  readonly root: string
  /** run under `node --cpu-prof --cpu-prof-dir <dir>` */
  readonly cpuProfDir?: string
  /** the profile's file name (node's --cpu-prof-name), e.g. "watch-round1.cpuprofile" */
  readonly cpuProfName?: string
  readonly readyTimeoutMs?: number
  /** a command the server runs under, e.g. ["taskset", "-c", "1"] (it must exec, keeping the pid) */
  readonly wrap?: ReadonlyArray<string>
  /** the program (default ourMain(): this tree's dist/cli/main.js), e.g. another commit's build */
  readonly main?: string
  /** variables added to its environment (ETCD_* are removed first), e.g. OTEL_EXPORTER_OTLP_ENDPOINT */
  readonly env?: Readonly<Record<string, string>>
}

const tail = (lines: Array<string>) =>
  lines
    .join("")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(-8)
    .join(" | ")

const startOursOnce = async (options: OursOptions): Promise<Server> => {
  const dataDir = fs.mkdtempSync(path.join(options.root, "ours-"))
  cleanup.dirs.add(dataDir)
  const port = await freePort()
  const args = [
    ...(options.cpuProfDir !== undefined ? ["--cpu-prof", "--cpu-prof-dir", options.cpuProfDir] : []),
    ...(options.cpuProfDir !== undefined && options.cpuProfName !== undefined
      ? ["--cpu-prof-name", options.cpuProfName]
      : []),
    options.main ?? ourMain(),
    "serve",
    "--name",
    "bench",
    "--data-dir",
    path.join(dataDir, "data"),
    "--listen-client-urls",
    `http://127.0.0.1:${port}`,
    "--log-level",
    "warn"
  ]
  if (serveHasMetricsFlag()) args.push("--listen-metrics-urls", `http://127.0.0.1:${await freePort()}`)
  const wrap = options.wrap ?? []
  const child: ChildProcess = spawn(
    wrap[0] ?? process.execPath,
    wrap.length === 0 ? args : [...wrap.slice(1), process.execPath, ...args],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...cleanEnv(), ...options.env } }
  )
  const output: Array<string> = []
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString())
    if (output.length > 100) output.splice(0, output.length - 100)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  let spawnError: Error | undefined
  child.once("error", (e) => (spawnError = e))
  const exitedP = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  if (child.pid !== undefined) cleanup.pids.add(child.pid)
  const exited = () =>
    child.exitCode !== null
      ? `exit code ${child.exitCode}`
      : child.signalCode !== null
        ? `signal ${child.signalCode}`
        : undefined
  const stop = async () => {
    if (exited() === undefined && spawnError === undefined) {
      child.kill("SIGTERM")
      const graceMs = options.cpuProfDir !== undefined ? 60_000 : 15_000
      const timedOut = await Promise.race([exitedP.then(() => false), sleep(graceMs).then(() => true)])
      if (timedOut) {
        child.kill("SIGKILL")
        await exitedP
      }
    }
    if (child.pid !== undefined) cleanup.pids.delete(child.pid)
    fs.rmSync(dataDir, { recursive: true, force: true })
    cleanup.dirs.delete(dataDir)
  }
  const endpoint = `127.0.0.1:${port}`
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000)
  for (;;) {
    if (spawnError !== undefined || exited() !== undefined) {
      await stop()
      throw new Error(`etcd-effect serve ${spawnError?.message ?? exited()} during start-up: ${tail(output)}`)
    }
    if (await probeRange(endpoint)) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`etcd-effect serve did not answer a Range in time: ${tail(output)}`)
    }
    await sleep(100)
  }
  return { system: "etcd-effect", endpoint, pid: child.pid!, exited, stop }
}

/** Starts our server; a port taken between probing and binding gets one retry with a new port. */
export const startOurs = async (options: OursOptions): Promise<Server> => {
  try {
    return await startOursOnce(options)
  } catch (e) {
    if (!String(e).includes("EADDRINUSE") && !/address already in use|in use/i.test(String(e))) throw e
    return startOursOnce(options)
  }
}

// ---- etcd ----------------------------------------------------------------------------------------

export const etcdInstalled = (): boolean => fs.existsSync(ETCD_BIN)

/** "3.4.23 (Go go1.19.8)" from `etcd --version` of `bin` (default: Debian's). */
export const etcdVersion = (bin: string = ETCD_BIN): string => {
  try {
    const text = execFileSync(bin, ["--version"], { encoding: "utf8", timeout: 10_000 })
    const v = /etcd Version:\s*(\S+)/.exec(text)?.[1] ?? "unknown"
    const go = /Go Version:\s*(\S+)/.exec(text)?.[1]
    return go === undefined ? v : `${v} (${go})`
  } catch (e) {
    return `unknown (${String(e).slice(0, 80)})`
  }
}

export interface EtcdServerOptions {
  /** which etcd this is (default etcd-3.4) */
  readonly system?: EtcdName
  /** its binary (default ETCD_BIN) */
  readonly bin?: string
  readonly wrap?: ReadonlyArray<string>
}

export const startEtcdServer = async (root: string, options: EtcdServerOptions = {}): Promise<Server> => {
  let spawned: number | undefined
  const etcd = await startEtcd(root, "etcd-", {
    ...(options.bin === undefined ? {} : { bin: options.bin }),
    ...(options.wrap === undefined ? {} : { wrap: options.wrap }),
    env: cleanEnv(),
    readyTimeoutMs: 30_000,
    // registered at once: a Ctrl-C while it starts must still kill it
    onSpawn: (pid, dataDir) => {
      spawned = pid
      cleanup.pids.add(pid)
      cleanup.dirs.add(dataDir)
    }
  }).catch((e: unknown) => {
    if (spawned !== undefined) cleanup.pids.delete(spawned) // startEtcd stopped it
    throw e
  })
  const exited = () => {
    try {
      // a zombie or a reaped pid both count as gone
      const state = /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${etcd.pid}/status`, "utf8"))?.[1]
      return state === "Z" ? "exited" : undefined
    } catch {
      return "exited"
    }
  }
  return {
    system: options.system ?? "etcd-3.4",
    endpoint: etcd.endpoint,
    pid: etcd.pid,
    exited,
    stop: async () => {
      await etcd.stop()
      cleanup.pids.delete(etcd.pid)
      cleanup.dirs.delete(etcd.dataDir)
    }
  }
}
