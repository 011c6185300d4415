/**
 * etcd 3.6 members started on data dirs that `etcdutl snapshot restore` made (benchmarks/go/build.sh
 * builds the binaries; test/support/go-bins.ts finds them): one process per member on the ports the
 * restore was told, its output kept for a failure's message. `ready` waits until `etcdctl endpoint
 * health` answers healthy — a member of a cluster is healthy once a leader is elected — and fails
 * when the process exits or stops logging for a stall (test/support/stall.ts), never on a clock.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { runCommand, type CommandResult } from "./etcd.js"
import { untilDone } from "./stall.js"

export interface RestoredMemberSpec {
  readonly etcdBin: string
  readonly name: string
  readonly dataDir: string
  readonly clientPort: number
  readonly peerPort: number
  /** the whole cluster's --initial-cluster, as given to the restore */
  readonly initialCluster: string
}

export const peerUrlOf = (port: number): string => `http://127.0.0.1:${port}`

export class RestoredMember {
  private readonly log: Array<string> = []
  /** bytes the member has logged: its progress while it starts */
  private logged = 0
  private exitCode: number | null | undefined
  readonly exited: Promise<void>

  private constructor(
    readonly spec: RestoredMemberSpec,
    private readonly child: ChildProcess
  ) {
    const keep = (chunk: Buffer) => {
      this.logged += chunk.length
      this.log.push(chunk.toString())
      if (this.log.length > 400) this.log.splice(0, this.log.length - 400)
    }
    child.stdout?.on("data", keep)
    child.stderr?.on("data", keep)
    this.exited = new Promise((resolve) =>
      child.once("exit", (code) => {
        this.exitCode = code
        resolve()
      })
    )
  }

  /** "127.0.0.1:port", the form --endpoints takes */
  get endpoint(): string {
    return `127.0.0.1:${this.spec.clientPort}`
  }

  static start(spec: RestoredMemberSpec): RestoredMember {
    const clientUrl = `http://127.0.0.1:${spec.clientPort}`
    const peerUrl = peerUrlOf(spec.peerPort)
    const child = spawn(
      spec.etcdBin,
      [
        "--name",
        spec.name,
        "--data-dir",
        spec.dataDir,
        "--listen-client-urls",
        clientUrl,
        "--advertise-client-urls",
        clientUrl,
        "--listen-peer-urls",
        peerUrl,
        "--initial-advertise-peer-urls",
        peerUrl,
        "--initial-cluster",
        spec.initialCluster,
        // fast elections on loopback, as test/support/etcd.ts's clusters
        "--heartbeat-interval",
        "50",
        "--election-timeout",
        "300"
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    return new RestoredMember(spec, child)
  }

  /** Waits until `etcdctl endpoint health` (the given etcdctl) says healthy. */
  async ready(etcdctlBin: string): Promise<void> {
    let healthy = false
    await untilDone(
      `etcd 3.6 member ${this.spec.name} healthy`,
      async () => {
        if (this.exitCode !== undefined) {
          throw new Error(`etcd ${this.spec.name} exited (${this.exitCode}) during start-up:\n${this.recentLog()}`)
        }
        const r = await runCommand(etcdctlBin, ["--endpoints", this.endpoint, "endpoint", "health"])
        healthy = r.code === 0
        return healthy
      },
      // progress: what the member logs (a member that says nothing for a stall is hung)
      () => this.logged
    )
  }

  /** SIGKILL, then waits for the exit. */
  async kill(): Promise<void> {
    if (this.exitCode === undefined) this.child.kill("SIGKILL")
    await this.exited
  }

  recentLog(): string {
    return this.log.join("")
  }
}

/** `etcdutl snapshot restore` of `file` into `spec.dataDir`, as that member of the cluster. */
export const restoreMember = (etcdutlBin: string, file: string, spec: RestoredMemberSpec): Promise<CommandResult> =>
  runCommand(etcdutlBin, [
    "snapshot",
    "restore",
    file,
    "--data-dir",
    spec.dataDir,
    "--name",
    spec.name,
    "--initial-cluster",
    spec.initialCluster,
    "--initial-advertise-peer-urls",
    peerUrlOf(spec.peerPort)
  ])
