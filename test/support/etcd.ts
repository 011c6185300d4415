/**
 * A real etcd 3.4 for tests: Debian's /usr/bin/etcd (or $ETCD_BIN) on random loopback ports with a
 * temporary data dir (on /dev/shm when present, so fsync is cheap). `stop`/`start` keep the data dir
 * and ports, which is how tests simulate a server restart; `dispose` kills the process and removes
 * the directory.
 *
 * Absent binary: `etcdAvailable` is false and suites skip — unless REQUIRE_ETCD=1, where they run
 * and fail (CI must never silently skip the oracle).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePorts } from "./ports.js"

export const ETCD_BIN = process.env.ETCD_BIN ?? "/usr/bin/etcd"
export const ETCDCTL_BIN = process.env.ETCDCTL_BIN ?? "/usr/bin/etcdctl"
export const requireEtcd = process.env.REQUIRE_ETCD === "1"
export const etcdAvailable = fs.existsSync(ETCD_BIN)
export const etcdctlAvailable = fs.existsSync(ETCDCTL_BIN)
/** true when etcd suites must be skipped (binary absent and not required) */
export const skipEtcd = !etcdAvailable && !requireEtcd

export interface EtcdOptions {
  /** `--experimental-watch-progress-notify-interval`, e.g. "200ms" */
  readonly progressNotifyInterval?: string
  readonly extraArgs?: ReadonlyArray<string>
  /** an answering /health counts as up even when unhealthy (an alarm such as NOSPACE is up) */
  readonly upWithAlarms?: boolean
  /** "https": the client URL is https (give the TLS flags in extraArgs); default http */
  readonly clientScheme?: "http" | "https"
  /** another etcd binary (e.g. etcd 3.6 from benchmarks/go/build.sh); default ETCD_BIN */
  readonly bin?: string
}

/** A member of a multi-member test cluster: its name and the whole cluster's --initial-cluster. */
interface Membership {
  readonly name: string
  readonly initialCluster: string
}

const tmpRoot = (): string => {
  try {
    fs.accessSync("/dev/shm", fs.constants.W_OK)
    return "/dev/shm"
  } catch {
    return os.tmpdir()
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export class EtcdProcess {
  private child: ChildProcess | undefined
  private log: Array<string> = []
  private exited: Promise<void> = Promise.resolve()

  private constructor(
    readonly dataDir: string,
    readonly clientPort: number,
    readonly peerPort: number,
    readonly metricsPort: number,
    readonly options: EtcdOptions,
    private readonly membership?: Membership
  ) {}

  /** "127.0.0.1:port", the form --endpoints takes */
  get endpoint(): string {
    return `127.0.0.1:${this.clientPort}`
  }
  get clientUrl(): string {
    return `${this.options.clientScheme ?? "http"}://127.0.0.1:${this.clientPort}`
  }
  get metricsUrl(): string {
    return `http://127.0.0.1:${this.metricsPort}`
  }
  get running(): boolean {
    return this.child !== undefined
  }

  static async start(options: EtcdOptions = {}): Promise<EtcdProcess> {
    if (options.bin === undefined && !etcdAvailable) {
      throw new Error(`etcd binary not found at ${ETCD_BIN} (REQUIRE_ETCD=1)`)
    }
    let lastError: unknown
    // A probed port can be taken by someone else before etcd binds it: retry with fresh ports.
    for (let attempt = 0; attempt < 3; attempt++) {
      const dataDir = fs.mkdtempSync(path.join(tmpRoot(), "etcd-effect-test-"))
      const [client, peer, metrics] = await freePorts(3)
      const etcd = new EtcdProcess(dataDir, client!, peer!, metrics!, options)
      try {
        await etcd.startProcess()
        return etcd
      } catch (error) {
        lastError = error
        await etcd.dispose()
      }
    }
    throw lastError
  }

  private args(): Array<string> {
    const peerUrl = `http://127.0.0.1:${this.peerPort}`
    const name = this.membership?.name ?? "test"
    const args = [
      "--name",
      name,
      "--data-dir",
      this.dataDir,
      "--listen-client-urls",
      this.clientUrl,
      "--advertise-client-urls",
      this.clientUrl,
      "--listen-peer-urls",
      peerUrl,
      "--initial-advertise-peer-urls",
      peerUrl,
      "--initial-cluster",
      this.membership?.initialCluster ?? `test=${peerUrl}`,
      "--listen-metrics-urls",
      this.metricsUrl,
      "--logger",
      "zap",
      "--log-level",
      "warn"
    ]
    if (this.options.progressNotifyInterval !== undefined) {
      args.push("--experimental-watch-progress-notify-interval", this.options.progressNotifyInterval)
    }
    return [...args, ...(this.options.extraArgs ?? [])]
  }

  /**
   * A cluster of `n` members on loopback (fast elections: 50 ms heartbeats, 300 ms election
   * timeout), started together; resolves when every member is healthy (a leader was elected).
   */
  static async cluster(n: number, options: EtcdOptions = {}): Promise<Array<EtcdProcess>> {
    if (!etcdAvailable) throw new Error(`etcd binary not found at ${ETCD_BIN} (REQUIRE_ETCD=1)`)
    let lastError: unknown
    // As in `start`: a probed port can be taken before a member binds it; retry with fresh ports.
    for (let attempt = 0; attempt < 3; attempt++) {
      const members = await EtcdProcess.clusterMembers(n, options)
      try {
        await Promise.all(members.map((m) => m.startProcess()))
        return members
      } catch (error) {
        lastError = error
        await Promise.all(members.map((m) => m.dispose()))
      }
    }
    throw lastError
  }

  private static async clusterMembers(n: number, options: EtcdOptions): Promise<Array<EtcdProcess>> {
    const ports = await freePorts(3 * n)
    const names = Array.from({ length: n }, (_, i) => `m${i}`)
    const initialCluster = names.map((name, i) => `${name}=http://127.0.0.1:${ports[3 * i + 1]}`).join(",")
    const extraArgs = [...(options.extraArgs ?? []), "--heartbeat-interval", "50", "--election-timeout", "300"]
    return names.map(
      (name, i) =>
        new EtcdProcess(
          fs.mkdtempSync(path.join(tmpRoot(), "etcd-effect-test-")),
          ports[3 * i]!,
          ports[3 * i + 1]!,
          ports[3 * i + 2]!,
          { ...options, extraArgs },
          { name, initialCluster }
        )
    )
  }

  /** Starts (or restarts after `stop`) the process on the same ports and data dir; resolves when healthy. */
  async startProcess(): Promise<void> {
    if (this.child !== undefined) return
    this.log = []
    const child = spawn(this.options.bin ?? ETCD_BIN, this.args(), { stdio: ["ignore", "pipe", "pipe"] })
    this.child = child
    const append = (chunk: Buffer) => {
      this.log.push(chunk.toString())
      if (this.log.length > 200) this.log.splice(0, this.log.length - 200)
    }
    child.stdout?.on("data", append)
    child.stderr?.on("data", append)
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", () => {
        if (this.child === child) this.child = undefined
        resolve()
      })
    })
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      if (this.child !== child) throw new Error(`etcd exited during start-up:\n${this.log.join("")}`)
      if (await this.healthy()) return
      await sleep(50)
    }
    throw new Error(`etcd did not become healthy in 20 s:\n${this.log.join("")}`)
  }

  async healthy(): Promise<boolean> {
    try {
      const response = await fetch(`${this.metricsUrl}/health`, { signal: AbortSignal.timeout(1000) })
      const body = (await response.json()) as { health?: string }
      return body.health === "true" || (this.options.upWithAlarms === true && body.health === "false")
    } catch {
      return false
    }
  }

  /** Stops the process (SIGKILL by default: a crash, not a graceful shutdown); data dir and ports are kept. */
  async stop(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child
    if (child === undefined) return
    child.kill(signal)
    await this.exited
  }

  async restart(downMs = 0): Promise<void> {
    await this.stop()
    if (downMs > 0) await sleep(downMs)
    await this.startProcess()
  }

  /** Kills the process and removes the data dir. */
  async dispose(): Promise<void> {
    await this.stop()
    fs.rmSync(this.dataDir, { recursive: true, force: true })
  }

  /** The value of one Prometheus metric line (no labels) from /metrics. */
  async metric(name: string): Promise<number | undefined> {
    const text = await (await fetch(`${this.metricsUrl}/metrics`)).text()
    for (const line of text.split("\n")) {
      if (line.startsWith(`${name} `)) return Number(line.slice(name.length + 1))
    }
    return undefined
  }

  /** etcdctl against this server; never rejects (the exit code is part of the result). */
  etcdctl(args: ReadonlyArray<string>, endpoint = this.endpoint): Promise<CommandResult> {
    return runCommand(ETCDCTL_BIN, ["--endpoints", endpoint, ...args], { ETCDCTL_API: "3" })
  }

  recentLog(): string {
    return this.log.join("")
  }
}

export interface CommandResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const runCommand = (
  file: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  timeoutMs = 30_000
): Promise<CommandResult> =>
  new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() })
      }
    )
  })
