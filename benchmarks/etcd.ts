/**
 * A real etcd 3.4 (Debian's /usr/bin/etcd, or $ETCD_BIN) for the benchmarks to measure beside ours:
 * one member on free loopback ports, its data dir removed on stop.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Etcd3 } from "etcd3"

export const ETCD_BIN = process.env.ETCD_BIN ?? "/usr/bin/etcd"

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

export interface EtcdProcess {
  /** host:port of the client URL */
  readonly endpoint: string
  /** the etcd process's pid (for /proc/<pid>/status) */
  readonly pid: number
  /** its data directory (removed by stop) */
  readonly dataDir: string
  readonly stop: () => Promise<void>
}

export interface StartEtcdOptions {
  /** the etcd binary (default ETCD_BIN: Debian's 3.4.23) — e.g. benchmarks/go/build.sh's 3.6 */
  readonly bin?: string
  /** a command the binary runs under, e.g. ["taskset", "-c", "1"] (it must exec, keeping the pid) */
  readonly wrap?: ReadonlyArray<string>
  /** more flags after ours (a later flag wins) */
  readonly extraArgs?: ReadonlyArray<string>
  /** the process's environment (default: ours) — e.g. without ETCD_* variables that etcd would read */
  readonly env?: NodeJS.ProcessEnv
  /** how long to wait for the first answer (default 15 s) */
  readonly readyTimeoutMs?: number
  /** called right after the spawn, before the wait: lets a caller kill it if it is interrupted meanwhile */
  readonly onSpawn?: (pid: number, dataDir: string) => void
}

/** etcd's flags for one member named bench on `dataDir`, its client and peer ports on 127.0.0.1, logging errors only */
export const etcdMemberArgs = (dataDir: string, client: number, peer: number): Array<string> => [
  "--name",
  "bench",
  "--data-dir",
  dataDir,
  "--listen-client-urls",
  `http://127.0.0.1:${client}`,
  "--advertise-client-urls",
  `http://127.0.0.1:${client}`,
  "--listen-peer-urls",
  `http://127.0.0.1:${peer}`,
  "--initial-advertise-peer-urls",
  `http://127.0.0.1:${peer}`,
  "--initial-cluster",
  `bench=http://127.0.0.1:${peer}`,
  "--log-level",
  "error"
]

/** Starts etcd with its data dir under `dataRoot` and waits until it answers a Range. */
export const startEtcd = async (
  dataRoot: string,
  prefix: string,
  options: StartEtcdOptions = {}
): Promise<EtcdProcess> => {
  const dataDir = fs.mkdtempSync(path.join(dataRoot, prefix))
  const [client, peer] = [await freePort(), await freePort()]
  const bin = options.bin ?? ETCD_BIN
  const wrap = options.wrap ?? []
  const proc = spawn(
    wrap[0] ?? bin,
    [
      ...(wrap.length === 0 ? [] : [...wrap.slice(1), bin]),
      ...etcdMemberArgs(dataDir, client, peer),
      ...(options.extraArgs ?? [])
    ],
    { stdio: "ignore", env: options.env ?? process.env }
  )
  // e.g. ENOENT: reported by the readiness loop below instead of crashing the benchmark
  let spawnError: Error | undefined
  proc.once("error", (e) => (spawnError = e))
  if (proc.pid !== undefined) options.onSpawn?.(proc.pid, dataDir)
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined && spawnError === undefined) {
      proc.kill("SIGKILL")
      await new Promise((r) => proc.once("exit", r))
    }
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  const endpoint = `127.0.0.1:${client}`
  const probe = new Etcd3({ hosts: `http://${endpoint}` })
  try {
    const ready = Date.now() + (options.readyTimeoutMs ?? 15_000)
    for (;;) {
      try {
        await probe.kv.range({ key: Buffer.from("health") })
        break
      } catch (e) {
        if (spawnError !== undefined) throw spawnError
        if (proc.exitCode !== null || proc.signalCode !== null) {
          throw new Error(`etcd exited during start-up (${proc.exitCode ?? proc.signalCode})`)
        }
        if (Date.now() > ready) throw e
        await sleep(100)
      }
    }
  } catch (e) {
    await stop()
    throw e
  } finally {
    probe.close()
  }
  return { endpoint, pid: proc.pid ?? -1, dataDir, stop }
}
