/**
 * The built command line (`node dist/cli/main.js`, the bundle that is the package's bin) against a real etcd, side by side with
 * etcdctl 3.4.23 on the same server: same output for the same commands (simple and JSON), etcd's
 * error messages with exit code 1, and a `watch` that keeps printing, without gaps or repeats,
 * across a server crash and restart.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from "vitest"
import { ETCDCTL_BIN, etcdctlAvailable, EtcdProcess, runCommand, skipEtcd } from "../support/etcd.js"
import { ensureBuilt } from "../server/support/process.js"

const MAIN = "dist/cli/main.js"

describe.skipIf(skipEtcd)("command line vs etcdctl (etcd 3.4)", () => {
  let etcd: EtcdProcess

  beforeAll(async () => {
    await ensureBuilt()
    etcd = await EtcdProcess.start()
  }, 120_000)
  afterAll(async () => {
    await etcd?.dispose()
  })

  const ours = (...args: Array<string>) => runCommand("node", [MAIN, ...args, "--endpoints", etcd.endpoint])
  const theirs = (...args: Array<string>) => runCommand(ETCDCTL_BIN, ["--endpoints", etcd.endpoint, ...args])
  /** etcdctl logs a JSON warning line before some errors; the last line is the error itself. */
  const lastLine = (text: string) => text.trim().split("\n").pop()

  /**
   * Remaining TTLs tick while the two commands run: compare them apart, within the seconds that
   * passed from the first command's start to the second's end (and one for rounding) — on a loaded
   * machine two commands can take several seconds.
   */
  const ttls = (text: string) => [...text.matchAll(/remaining\((\d+)s\)|"ttl":(\d+)/g)].map((m) => Number(m[1] ?? m[2]))
  const withoutTtls = (text: string) =>
    text.replace(/remaining\(\d+s\)/g, "remaining(*)").replace(/"ttl":\d+/g, '"ttl":*')

  /** Runs the same command both ways and expects the same stdout and exit status. */
  const same = async (...args: Array<string>) => {
    const started = Date.now()
    const [a, b] = [await ours(...args), await theirs(...args)]
    const elapsedS = Math.ceil((Date.now() - started) / 1000)
    expect(withoutTtls(a.stdout), `etcd-effect ${args.join(" ")}\n${a.stderr}`).toBe(withoutTtls(b.stdout))
    const [ta, tb] = [ttls(a.stdout), ttls(b.stdout)]
    expect(ta.length).toBe(tb.length)
    ta.forEach((t, i) => expect(Math.abs(t - tb[i]!)).toBeLessThanOrEqual(elapsedS + 1))
    expect(a.code === 0).toBe(b.code === 0)
    return a
  }

  it.skipIf(!etcdctlAvailable)(
    "put, get and del print what etcdctl prints",
    async () => {
      expect((await ours("put", "/cli/a", "1")).stdout).toBe("OK\n")
      await theirs("put", "/cli/b", "2")
      await ours("put", "/cli/c", "3")
      await theirs("put", "/cli/a", "4")
      // Reads do not change the store: run them side by side (process start-up dominates).
      const reads: Array<Array<string>> = [
        ["get", "/cli/", "--prefix"],
        ["get", "/cli/", "--prefix", "--limit", "2", "--keys-only"],
        ["get", "/cli/a", "--rev", "2"],
        ["get", "/cli/a", "/cli/c"],
        ["get", "/cli/", "--prefix", "-w", "json"],
        ["get", "/cli/", "--prefix", "--limit", "2", "--keys-only", "-w", "json"],
        ["get", "/cli/b", "--from-key", "-w", "json"],
        ["get", "/cli/nothing", "-w", "json"],
        ["del", "/cli/nothing"]
      ]
      for (let i = 0; i < reads.length; i += 4) await Promise.all(reads.slice(i, i + 4).map((args) => same(...args)))
      const prev = await ours("put", "/cli/a", "5", "--prev-kv")
      expect(prev.stdout).toBe("OK\n/cli/a\n4\n")
      // Deletes change the store: compare each against the other's effect on twin keys.
      await theirs("put", "/cli2/x", "1")
      await theirs("put", "/cli3/x", "1")
      const a = await ours("del", "/cli2/", "--prefix", "--prev-kv")
      const b = await theirs("del", "/cli3/", "--prefix", "--prev-kv")
      expect(a.stdout).toBe(b.stdout.replace("/cli3/x", "/cli2/x"))
      const aj = await ours("del", "/cli/c", "-w", "json")
      const bj = await theirs("del", "/cli/b", "-w", "json")
      const revision = (s: string) => JSON.parse(s.replace(/:(\d{16,})/g, ':"$1"')).header.revision
      expect(aj.stdout.replace(/"revision":\d+/, "")).toBe(bj.stdout.replace(/"revision":\d+/, ""))
      expect(revision(bj.stdout)).toBe(revision(aj.stdout) + 1)
    },
    60_000
  )

  it.skipIf(!etcdctlAvailable)("reports etcd's errors like etcdctl, with exit code 1", async () => {
    const a = await ours("put", "", "x")
    const b = await theirs("put", "", "x")
    expect(a.code).toBe(1)
    expect(a.stderr.trim()).toBe("Error: etcdserver: key is not provided")
    expect(lastLine(b.stderr)).toBe(a.stderr.trim())
    const rev = Number(
      JSON.parse((await theirs("put", "/cli/compact", "x", "-w", "json")).stdout.replace(/:(\d{16,})/g, ':"$1"')).header
        .revision
    )
    expect((await ours("compaction", String(rev))).stdout).toBe(`compacted revision ${rev}\n`)
    const again = await ours("compaction", String(rev))
    expect(again.code).toBe(1)
    expect(again.stderr.trim()).toBe(lastLine((await theirs("compaction", String(rev))).stderr))
    const unreachable = await runCommand("node", [
      MAIN,
      "get",
      "x",
      "--endpoints",
      "127.0.0.1:1",
      "--dial-timeout",
      "300ms"
    ])
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr.trim()).toBe("Error: context deadline exceeded")
  })

  it.skipIf(!etcdctlAvailable)("lease grant, timetolive, keep-alive, list and revoke", async () => {
    const granted = await ours("lease", "grant", "100")
    const m = /^lease ([0-9a-f]{16}) granted with TTL\(100s\)\n$/.exec(granted.stdout)
    expect(m, granted.stdout + granted.stderr).not.toBeNull()
    const id = m![1]!
    await theirs("put", "/cli/leased", "v", "--lease", id)
    await Promise.all([
      same("lease", "timetolive", id, "--keys"),
      same("lease", "timetolive", id, "--keys", "-w", "json"),
      same("lease", "list", "-w", "json")
    ])
    await same("lease", "keep-alive", id, "--once")
    expect((await ours("lease", "revoke", id)).stdout).toBe(`lease ${id} revoked\n`)
    await same("lease", "timetolive", id)
    const revokeAgain = await ours("lease", "revoke", id)
    expect(revokeAgain.code).toBe(1)
    expect(revokeAgain.stderr.trim()).toBe(lastLine((await theirs("lease", "revoke", id)).stderr))
    const json = JSON.parse((await ours("lease", "grant", "60", "-w", "json")).stdout.replace(/:(\d{16,})/g, ':"$1"'))
    expect(Object.keys(json)).toEqual(["cluster_id", "member_id", "revision", "raft_term", "ID", "TTL", "Error"])
  })

  it.skipIf(!etcdctlAvailable)("endpoint status matches etcdctl", async () => {
    await same("endpoint", "status")
    await same("endpoint", "status", "-w", "json")
  })

  /**
   * Spawned long-running commands of the current test, each with its output so far: printed when
   * the test fails, so a failure explains itself (a CLI that never connected says why on stderr).
   */
  type Spawned = Array<{ readonly command: string; readonly describe: () => string }>
  let spawned: Spawned = []
  const report = (list: Spawned = spawned) => list.map((p) => `--- ${p.command}\n${p.describe()}`).join("\n")

  /**
   * The server's watcher count, exactly. This etcd serves this file alone, so its watchers are the
   * ones of the commands a test still runs. Waiting for an exact count (0 before a test starts its
   * watches) keeps watchers of just-stopped commands out of the reckoning: they are still counted
   * for a few milliseconds after their process exits (etcd cancels them when it sees the connection
   * close), and a baseline read in that window made "baseline + n" unreachable.
   */
  const watchers = async () => (await etcd.metric("etcd_debugging_mvcc_watcher_total")) ?? 0
  const watchersAre = async (n: number) => {
    const seen: Array<number> = []
    const deadline = Date.now() + 15_000
    for (;;) {
      const count = await watchers()
      if (seen.at(-1) !== count) seen.push(count)
      if (count === n || Date.now() > deadline) break
      await new Promise((r) => setTimeout(r, 25))
    }
    expect(seen.at(-1), `server watcher count, as it went: ${seen.join(" → ")}\n${report()}`).toBe(n)
  }

  /** Long-running commands of the current test, killed after it whatever happened. */
  const children = new Set<ChildProcess>()
  afterEach(() => {
    for (const child of children) child.kill("SIGKILL")
    children.clear()
    spawned = [] // a failed test's report (onTestFailed runs after this hook) keeps its own list
  })

  /** Starts a long-running command; `stop` interrupts it and returns its output. */
  const start = (file: string, args: Array<string>) => {
    const child: ChildProcess = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] })
    children.add(child)
    let stdout = ""
    let stderr = ""
    let exitCode: number | undefined
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => (stderr += d))
    const exited = new Promise<number>((resolve) =>
      child.on("exit", (code, signal) => {
        exitCode = code ?? -1
        if (signal !== null) stderr += `[killed by ${signal}]`
        resolve(exitCode)
      })
    )
    const command = [file, ...args].join(" ")
    const list = spawned
    if (list.length === 0) onTestFailed(() => console.error(`spawned commands of the failed test:\n${report(list)}`))
    list.push({
      command,
      describe: () =>
        `pid ${child.pid}, ${exitCode === undefined ? "running" : `exited ${exitCode}`}\nstdout: ${stdout}\nstderr: ${stderr}`
    })
    return {
      output: () => stdout,
      waitFor: async (text: string, ms = 10_000) => {
        const deadline = Date.now() + ms
        while (!stdout.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
        return stdout.includes(text)
      },
      stop: async () => {
        child.kill("SIGINT")
        const code = await exited
        children.delete(child)
        return { stdout, stderr, code }
      },
      exited
    }
  }

  it.skipIf(!etcdctlAvailable)(
    "watch prints events exactly as etcdctl watch (simple and json)",
    async () => {
      for (const extra of [[], ["--prev-kv"], ["-w", "json"], ["--prev-kv", "-w", "json"]]) {
        const key = `/w${extra.join("")}/`
        await watchersAre(0) // the previous round's commands have left the server
        const a = start("node", [MAIN, "watch", key, "--prefix", ...extra, "--endpoints", etcd.endpoint])
        const b = start(ETCDCTL_BIN, ["--endpoints", etcd.endpoint, "watch", key, "--prefix", ...extra])
        await watchersAre(2) // both registered on the server
        await theirs("put", `${key}a`, "1")
        await theirs("put", `${key}a`, "2")
        await theirs("del", `${key}a`)
        expect(await a.waitFor(extra.includes("json") ? '"type":1' : "DELETE")).toBe(true)
        expect(await b.waitFor(extra.includes("json") ? '"type":1' : "DELETE")).toBe(true)
        const [ra, rb] = [await a.stop(), await b.stop()]
        expect(ra.stdout, ra.stderr).toBe(rb.stdout)
      }
    },
    60_000
  )

  it("watch keeps going across a server crash and restart, without gaps or repeats", async () => {
    await watchersAre(0) // the previous test's commands have left the server
    const w = start("node", [MAIN, "watch", "/rs/", "--prefix", "--endpoints", etcd.endpoint])
    await watchersAre(1)
    for (let i = 0; i < 5; i++) await theirs("put", `/rs/${i}`, `before${i}`)
    expect(await w.waitFor("before4")).toBe(true)
    await etcd.restart(500)
    for (let i = 0; i < 5; i++) await theirs("put", `/rs/${i}`, `after${i}`)
    expect(await w.waitFor("after4")).toBe(true)
    const { stdout } = await w.stop()
    const expected =
      [0, 1, 2, 3, 4].map((i) => `PUT\n/rs/${i}\nbefore${i}\n`).join("") +
      [0, 1, 2, 3, 4].map((i) => `PUT\n/rs/${i}\nafter${i}\n`).join("")
    expect(stdout).toBe(expected)
  }, 30_000)

  it("watch from a compacted revision prints etcdctl's cancel messages and exits 5 (ExitInterrupted)", async () => {
    const rev = JSON.parse((await theirs("put", "/cw/a", "1", "-w", "json")).stdout.replace(/:(\d{16,})/g, ':"$1"'))
      .header.revision
    await theirs("put", "/cw/a", "2")
    await theirs("compaction", String(Number(rev) + 1))
    const a = await ours("watch", "/cw/a", "--rev", String(rev))
    expect(a.code).toBe(5)
    expect(a.stderr).toBe(
      "watch was canceled (etcdserver: mvcc: required revision has been compacted)\nError: watch is canceled by the server\n"
    )
  })
})
