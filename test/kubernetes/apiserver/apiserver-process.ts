/**
 * `etcd-effect apiserver` as a child process of the built program (dist/cli/main.js, built by
 * ensureBuilt), on a port and a data dir of the test's choosing: stopped (SIGTERM) and started
 * again on both, it serves the same data at the same URL, so clients reconnect as they would to a
 * restarted kube-apiserver.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mainJs } from "../../server/support/process.js"

export interface ApiServerProcess {
  readonly url: string
  /** everything it printed (stdout and stderr) */
  output(): string
  /** SIGTERM, then its exit code */
  stop(): Promise<number | null>
}

/** Starts it and waits until it says where it serves (or fails with what it printed if it exits). */
export const startApiServerProcess = (port: number, dataDir: string): Promise<ApiServerProcess> => {
  const child: ChildProcess = spawn(
    process.execPath,
    [mainJs, "apiserver", "--port", String(port), "--data-dir", dataDir],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const url = `http://127.0.0.1:${port}`
  const running: ApiServerProcess = {
    url,
    output: () => out,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    }
  }
  return new Promise((resolve, reject) => {
    const serving = `etcd-effect apiserver: serving on ${url}\n`
    const onData = (d: Buffer) => {
      out += d.toString("utf8")
      if (out.includes(serving)) resolve(running)
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    void exited.then((code) => reject(new Error(`etcd-effect apiserver exited (${code}) before serving:\n${out}`)))
  })
}
