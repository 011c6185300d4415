/**
 * The bin's lean path (src/cli/lean/) against the full program it stands in for
 * (ETCD_EFFECT_LEAN=0), on a real etcd 3.4: the same stdout, stderr and exit code for the commands
 * it serves, for etcd's errors, and for the command lines it leaves to the full program.
 *
 * The tests that run a row of commands have no wall-clock budget of their own: each command is
 * bounded (runCommand's 30 s, the watch's 20 s), and two dozen node processes take 15 s on a quiet
 * machine and over 60 s at load 20 (issue 24).
 */
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, runCommand, skipEtcd } from "../support/etcd.js"
import { ensureBuilt } from "../server/support/process.js"

const MAIN = "dist/cli/main.js"
const FULL = { ETCD_EFFECT_LEAN: "0" }

describe.skipIf(skipEtcd)("lean path vs the full program (etcd 3.4)", () => {
  let etcd: EtcdProcess

  beforeAll(async () => {
    await ensureBuilt()
    etcd = await EtcdProcess.start()
    for (const [k, v] of [
      ["/lp/a", "1"],
      ["/lp/b", ""],
      ["/lp/c", "3"]
    ]) {
      expect((await etcd.etcdctl(["put", k!, v!])).code).toBe(0)
    }
  }, 120_000)
  afterAll(async () => {
    await etcd?.dispose()
  })

  const both = async (args: Array<string>, endpoint = true) => {
    const full = [MAIN, ...args, ...(endpoint ? ["--endpoints", etcd.endpoint] : [])]
    const lean = await runCommand("node", full)
    const reference = await runCommand("node", full, FULL)
    return { lean, reference }
  }
  const same = async (args: Array<string>, endpoint = true) => {
    const { lean, reference } = await both(args, endpoint)
    expect(lean, args.join(" ")).toEqual(reference)
    return lean
  }

  it("prints what the full program prints", async () => {
    expect((await same(["--help"], false)).stdout).toContain("USAGE")
    await same(["get", "/lp/a"])
    await same(["get", "/lp/", "--prefix", "-w", "json"])
    await same(["get", "/lp/", "--prefix", "--count-only"])
    await same(["get", "/lp/", "--prefix", "--print-value-only"])
    await same(["get", "/lp/", "--prefix", "--keys-only"])
    await same(["get", "/lp/", "--prefix", "--limit", "1", "-w", "json"])
    await same(["get", "/lp/a", "/lp/c", "--rev=2"])
    await same(["get", "/lp/b", "--from-key"])
    await same(["del", "/lp/none", "-w", "json"])
    await same(["put", "/lp/a", "1", "--prev-kv"])
    await same(["get", "/lp/", "--prefix", "--hex"])
    await same(["get", "/lp/", "--prefix", "--sort-by=value", "--order=DESCEND", "--consistency=s"])
    await same(["--endpoints", etcd.endpoint, "put", "/lp/a", "--ignore-value", "--prev-kv"], false)
  }, 0)

  it("refuses and fails as the full program does", async () => {
    // etcd's errors
    expect((await same(["get", "/lp/a", "--rev", "999999"])).code).toBe(1)
    expect((await same(["put", "", "x"])).stderr).toBe("Error: etcdserver: key is not provided\n")
    // usage errors, checked by the same code on both paths (etcdctl's exit codes)
    expect((await same(["get", "/lp/", "--prefix", "--from-key"])).code).toBe(128)
    expect((await same(["put", "/lp/a", "1", "--lease", "zz"])).code).toBe(128)
    expect((await same(["get", "/lp/a", "-w", "table"])).code).toBe(4)
    expect((await same(["get", "/lp/a", "--prefx"])).stderr).toBe("Error: unknown flag: --prefx\n")
    // left to the full program: a server that is not there
    const unreachable = await same(["get", "x", "--endpoints", "127.0.0.1:1", "--dial-timeout", "300ms"], false)
    expect(unreachable.stderr).toBe("Error: context deadline exceeded\n")
  }, 0)

  it("put and del answer in the same form (revisions apart)", async () => {
    const revisionless = (s: string) => s.replace(/"(revision|mod_revision|version)":\d+/g, '"$1":*')
    expect((await etcd.etcdctl(["put", "/lp/d", "4"])).code).toBe(0)
    const { lean, reference } = await both(["put", "/lp/d", "4", "--prev-kv", "-w", "json"])
    expect(lean.stdout).toContain('"prev_kv"')
    expect(revisionless(lean.stdout)).toBe(revisionless(reference.stdout))
    const del = await both(["del", "/lp/d", "--prev-kv"])
    expect([del.lean.stdout, del.reference.stdout].sort()).toEqual(["0\n", "1\n/lp/d\n4\n"])
  }, 0)

  const watchOutput = (args: Array<string>, env: Record<string, string>, until: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn("node", [MAIN, ...args, "--endpoints", etcd.endpoint], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      let stopping = false
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      child.stdout.on("data", (d) => {
        out += d
        if (!stopping && out.includes(until)) {
          stopping = true
          child.kill("SIGINT")
        }
      })
      child.stderr.on("data", (d) => (err += d))
      child.on("exit", (code) => {
        clearTimeout(timer)
        if (code === 0 && out.includes(until)) resolve(out)
        else reject(new Error(`watch exited ${code}\n${out}\n${err}`))
      })
    })

  it("watch replays and prints as the full program (simple and json)", async () => {
    for (const args of [
      ["put", "/lw/a", "1"],
      ["put", "/lw/b", "2"],
      ["del", "/lw/a"]
    ]) {
      expect((await etcd.etcdctl(args)).code).toBe(0)
    }
    for (const extra of [[], ["--prev-kv"], ["-w", "json"]]) {
      const args = ["watch", "/lw/", "--prefix", "--rev", "1", ...extra]
      const until = extra.includes("json") ? '"type":1' : "DELETE"
      expect(await watchOutput(args, {}, until)).toBe(await watchOutput(args, FULL, until))
    }
  }, 0)

  it("watch resumes across a server outage longer than its dial timeout, on its own", async () => {
    const child = spawn(
      "node",
      [MAIN, "watch", "/lo/", "--prefix", "--dial-timeout", "200ms", "--endpoints", etcd.endpoint],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const waitFor = async (text: string) => {
      const deadline = Date.now() + 15_000
      while (!out.includes(text) && Date.now() < deadline) {
        await etcd.etcdctl(["put", "/lo/k", text])
        await new Promise((r) => setTimeout(r, 200))
      }
      return out.includes(text)
    }
    try {
      expect(await waitFor("before"), err).toBe(true)
      // down for 1 s: a handover to the full program would fail its 200 ms dial
      await etcd.restart(1000)
      expect(await waitFor("after"), err).toBe(true)
    } finally {
      child.kill("SIGINT")
    }
    expect(await exited).toBe(0)
    expect(err).toBe("")
  }, 60_000)
})
