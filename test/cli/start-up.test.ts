/**
 * What a user starting the servers sees and does: `npm start` says where it serves and stops on
 * SIGTERM (npm runs the program with `exec`, so the signal reaches it); `apiserver` says where it
 * serves and where its embedded etcd is, and that etcd answers the command line there.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { runCommand } from "../support/etcd.js"
import { freePorts } from "../support/ports.js"
import { ensureBuilt, mainJs, repoRoot, tempDir } from "../server/support/process.js"

const children: Array<ChildProcess> = []
const dirs: Array<string> = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** Starts a command; `until` resolves once its output (stdout + stderr) matches. */
const start = (file: string, args: Array<string>, cwd = repoRoot) => {
  const child = spawn(file, args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return {
    child,
    exited,
    output: () => out,
    until: async (re: RegExp, ms = 30_000) => {
      const deadline = Date.now() + ms
      while (!re.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${re} in:\n${out}`)
        await new Promise((r) => setTimeout(r, 20))
      }
      return re.exec(out)!
    }
  }
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1")
    s.once("connect", () => {
      s.destroy()
      resolve(false)
    })
    s.once("error", () => resolve(true))
  })

describe("starting the servers", () => {
  beforeAll(async () => {
    await ensureBuilt()
  }, 300_000)

  it("npm start says where it serves clients and metrics, and SIGTERM to npm stops the server", async () => {
    const [client, metrics] = (await freePorts(2)) as [number, number]
    const dir = tempDir()
    dirs.push(dir)
    const npm = start("npm", [
      "start",
      "--",
      "--data-dir",
      path.join(dir, "data"),
      "--listen-client-urls",
      `http://127.0.0.1:${client}`,
      "--listen-metrics-urls",
      `http://127.0.0.1:${metrics}`
    ])
    await npm.until(/message="serving metrics"/)
    expect(npm.output()).toContain('message="ready to serve client requests"')
    expect(npm.output()).toContain(
      `message="serving client traffic insecurely; this is strongly discouraged!" address=http://127.0.0.1:${client}\n`
    )
    expect(npm.output()).toContain(`message="serving metrics" address=http://127.0.0.1:${metrics}\n`)
    npm.child.kill("SIGTERM")
    await npm.exited
    // the server itself is gone, not only npm: its ports close
    const deadline = Date.now() + 10_000
    while (!((await refused(client)) && (await refused(metrics)))) {
      expect(Date.now(), npm.output()).toBeLessThan(deadline)
      await new Promise((r) => setTimeout(r, 50))
    }
  }, 120_000)

  it("apiserver with --data-dir says where the data lives", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "apiserver-data-"))
    const api = start(process.execPath, [mainJs, "apiserver", "--port", "0", "--data-dir", dir])
    try {
      const [, where] = await api.until(/^etcd-effect apiserver: data in (\S+)$/m)
      expect(where).toBe(path.resolve(dir))
      expect(fs.readdirSync(dir).length).toBeGreaterThan(0)
      api.child.kill("SIGTERM")
      expect(await api.exited).toBe(0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("apiserver says where it serves, where its embedded etcd is and that the data is in memory", async () => {
    const api = start(process.execPath, [mainJs, "apiserver", "--port", "0"])
    const [, url] = await api.until(/^etcd-effect apiserver: serving on (http:\/\/127\.0\.0\.1:\d+)$/m)
    const [, etcdUrl, endpoint] = await api.until(
      /^etcd-effect apiserver: embedded etcd serving on (http:\/\/127\.0\.0\.1:\d+) \(etcdctl --endpoints=(127\.0\.0\.1:\d+)\)$/m
    )
    expect(etcdUrl).toBe(`http://${endpoint}`)
    await api.until(/^etcd-effect apiserver: data in memory: lost when it stops \(--data-dir <dir> keeps it\)$/m)
    const health = await fetch(`${url}/healthz`)
    expect(await health.text()).toBe("ok")
    const put = await runCommand("node", [mainJs, "put", "--endpoints", endpoint!, "/from-cli", "1"])
    expect(put).toEqual({ code: 0, stdout: "OK\n", stderr: "" })
    api.child.kill("SIGTERM")
    expect(await api.exited).toBe(0)
  }, 120_000)
})
