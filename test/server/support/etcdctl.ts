/**
 * Debian's etcdctl 3.4 as a test client: one-shot commands (with optional stdin) and long-running
 * ones (watch) whose output is read until a condition holds.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { ETCDCTL_BIN } from "../../support/etcd.js"
import { sleep } from "./in-process.js"

export interface CtlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const env = () => ({ ...process.env, ETCDCTL_API: "3" })

/** Runs `etcdctl --endpoints=<endpoint> ...args`, feeding `stdin` when given. */
export const etcdctl = (
  endpoint: string,
  args: ReadonlyArray<string>,
  stdin?: string,
  timeoutMs = 20_000
): Promise<CtlResult> =>
  new Promise((resolve) => {
    const child = spawn(ETCDCTL_BIN, [`--endpoints=${endpoint}`, ...args], {
      env: env(),
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? -1, stdout, stderr })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(stdin ?? "")
  })

/** Every CtlProcess still running, so a failed test can stop them all (`stopAll`). */
const running = new Set<CtlProcess>()

export const stopAll = async (): Promise<void> => {
  await Promise.all([...running].map((p) => p.stop()))
}

/** A long-running etcdctl (watch): read its output as it comes, write to its stdin, stop it. */
export class CtlProcess {
  stdout = ""
  stderr = ""
  exited: Promise<number>
  private readonly child: ChildProcess

  constructor(endpoint: string, args: ReadonlyArray<string>) {
    this.child = spawn(ETCDCTL_BIN, [`--endpoints=${endpoint}`, ...args], {
      env: env(),
      stdio: ["pipe", "pipe", "pipe"]
    })
    this.child.stdout!.on("data", (d) => (this.stdout += d))
    this.child.stderr!.on("data", (d) => (this.stderr += d))
    this.child.stdin!.on("error", () => {})
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code) => {
        running.delete(this)
        resolve(code ?? -1)
      })
    )
    running.add(this)
  }

  write(line: string): void {
    this.child.stdin!.write(line)
  }

  /** Waits until stdout has at least `n` lines. */
  async lines(n: number, timeoutMs = 10_000): Promise<Array<string>> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const lines = this.stdout.split("\n")
      // the text after the last newline is not a line yet
      if (lines.length - 1 >= n) return lines.slice(0, -1)
      if (Date.now() > deadline) {
        throw new Error(
          `etcdctl: expected ${n} lines, got ${JSON.stringify(this.stdout)} / ${JSON.stringify(this.stderr)}`
        )
      }
      await sleep(10)
    }
  }

  async stop(): Promise<void> {
    this.child.kill("SIGTERM")
    await this.exited
  }
}
