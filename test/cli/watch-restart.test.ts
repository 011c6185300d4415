/**
 * `etcd-effect watch` across a graceful stop of the server and a restart on the same data dir and
 * port (issue 46, item 4): the server ends the Watch call with Unavailable "etcdserver: server
 * stopped", which clientv3 (isHaltErr) and our client take as transient. The bin's watch resumes
 * from the last revision it printed, for as long as it is left running, and prints every event
 * once, in order — as etcdctl 3.4 beside it does. A restart whose data was compacted past the
 * watch's revision ends it as etcdctl's ends.
 *
 * No sleeping: the restart waits until the watch has tried to reconnect (connections to a stand-in
 * listener on the server's port, each dropped at once) — more attempts than its dial timeout would
 * allow a handover to the full program.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { ETCDCTL_BIN, etcdctlAvailable, runCommand } from "../support/etcd.js"
import { freePort } from "../support/ports.js"
import { ensureBuilt, mainJs, ServeProcess, tempDir } from "../server/support/process.js"

interface Watcher {
  readonly name: string
  readonly child: ChildProcess
  out: string
  err: string
  readonly exited: Promise<number | null>
}

const watcher = (name: string, file: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(file, args, {
    env: { ...process.env, ETCDCTL_API: "3", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const w: Watcher = {
    name,
    child,
    out: "",
    err: "",
    exited: new Promise((resolve) => child.on("exit", (code) => resolve(code)))
  }
  child.stdout!.on("data", (d) => (w.out += d))
  child.stderr!.on("data", (d) => (w.err += d))
  return w
}

/** Resolves once `check` holds, polling on the event loop (output arrives by events). */
const until = async (what: string, check: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Holds `port` and drops every connection; resolves once `attempts` connections came. */
const reconnectAttempts = (port: number, attempts: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0
    const server = net.createServer((socket) => {
      socket.destroy()
      if (++seen === attempts) server.close(() => resolve())
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1")
  })

/** The events of `keys` as `watch` prints them (simple format): PUT, key, value per event. */
const printed = (events: ReadonlyArray<readonly [string, string]>) =>
  events.map(([k, v]) => `PUT\n${k}\n${v}\n`).join("")

describe("watch across a server restart", () => {
  const children: Array<ChildProcess> = []
  const servers: Array<ServeProcess> = []
  beforeAll(() => ensureBuilt(), 300_000)
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL")
    for (const s of servers.splice(0)) await s.kill()
  })

  const serve = async (dataDir: string, port: number) => {
    const s = await ServeProcess.start({ dataDir, port })
    servers.push(s)
    return s
  }
  const stop = async (s: ServeProcess) => {
    expect(await s.kill("SIGTERM"), s.stderr).toBe(0)
  }
  const put = async (s: ServeProcess, key: string, value: string) => {
    const r = await runCommand("node", [mainJs, "--endpoints", s.endpoint, "put", key, value])
    expect(r.stderr).toBe("")
  }
  const watchers = (endpoint: string, extra: ReadonlyArray<string>) => {
    const args = ["--endpoints", endpoint, "--dial-timeout", "200ms", "watch", "/wr/", "--prefix", ...extra]
    const ws = [
      watcher("etcd-effect", process.execPath, [mainJs, ...args]),
      watcher("etcd-effect (full program)", process.execPath, [mainJs, ...args], { ETCD_EFFECT_LEAN: "0" }),
      ...(etcdctlAvailable ? [watcher("etcdctl 3.4", ETCDCTL_BIN, args)] : [])
    ]
    children.push(...ws.map((w) => w.child))
    return ws
  }

  it("resumes after a graceful stop and a restart: every event once, in order", async () => {
    const dir = tempDir()
    const dataDir = path.join(dir, "data")
    const port = await freePort()
    try {
      let server = await serve(dataDir, port)
      await put(server, "/wr/0", "before-watch")
      const ws = watchers(server.endpoint, ["--rev", "1"])
      const first = printed([["/wr/0", "before-watch"]])
      await until("the watches' first event", () => ws.every((w) => w.out === first))
      await put(server, "/wr/1", "before-stop")
      const before = printed([
        ["/wr/0", "before-watch"],
        ["/wr/1", "before-stop"]
      ])
      await until("the event before the stop", () => ws.every((w) => w.out === before))

      await stop(server)
      // the lean watch retrying: 20 attempts take its 1 ms × 1.25 backoff past its 200 ms dial timeout
      await reconnectAttempts(port, 20)
      for (const w of ws) expect(w.child.exitCode, `${w.name}: ${w.err}`).toBe(null)
      server = await serve(dataDir, port)
      await put(server, "/wr/2", "after-restart")
      await put(server, "/wr/3", "again")
      const all = printed([
        ["/wr/0", "before-watch"],
        ["/wr/1", "before-stop"],
        ["/wr/2", "after-restart"],
        ["/wr/3", "again"]
      ])
      await until("every event after the restart", () => ws.every((w) => w.out.length >= all.length), 60_000)
      for (const w of ws) {
        w.child.kill("SIGINT")
        await w.exited
        expect({ name: w.name, out: w.out, err: w.err }).toEqual({ name: w.name, out: all, err: "" })
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("a restart compacted past the watch's revision ends it as etcdctl's ends", async () => {
    const dir = tempDir()
    const dataDir = path.join(dir, "data")
    const [port, other] = [await freePort(), await freePort()]
    try {
      let server = await serve(dataDir, port)
      await put(server, "/wr/0", "seen")
      const ws = watchers(server.endpoint, ["--rev", "1"])
      const seen = printed([["/wr/0", "seen"]])
      await until("the watches' first event", () => ws.every((w) => w.out === seen))
      await stop(server)
      await reconnectAttempts(port, 20)
      // while the watches retry on `port`, the same data moves on and is compacted elsewhere
      server = await serve(dataDir, other)
      await put(server, "/wr/1", "missed")
      await put(server, "/wr/2", "missed too")
      const compact = await runCommand("node", [mainJs, "--endpoints", server.endpoint, "compaction", "4"])
      expect(compact).toMatchObject({ code: 0, stdout: "compacted revision 4\n" })
      await stop(server)
      server = await serve(dataDir, port)
      const codes = await Promise.all(ws.map((w) => w.exited))
      const ended = ws.map((w, i) => ({ name: w.name, code: codes[i], out: w.out, err: w.err }))
      // etcdctl's exit code here is cobrautl.ExitInterrupted, 5
      const expected = {
        code: 5,
        out: seen,
        err:
          "watch was canceled (etcdserver: mvcc: required revision has been compacted)\n" +
          "Error: watch is canceled by the server\n"
      }
      expect(ended).toEqual(ws.map((w) => ({ name: w.name, ...expected })))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
