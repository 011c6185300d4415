/**
 * bench:compare against real servers: both servers start, answer, report their RSS and leave
 * nothing behind when stopped; the compiled script runs a --quick comparison end to end with
 * numbers for every system and no errors, on src/bench and (when benchmarks/go/build.sh has built
 * them) with etcd 3.6 and etcd's own benchmark tool, pinned; Ctrl-C (SIGINT) mid-run, or while the Go
 * instruments build, leaves no process or temp dir. Skipped without etcd unless REQUIRE_ETCD=1.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probeRange, readRss, startEtcdServer, startOurs } from "../../benchmarks/compare-servers.js"
import { skipEtcd } from "../support/etcd.js"
import { untilDone, unstalled, watchdog } from "../support/stall.js"
import { compareJs as COMPARE_JS, ensureBuilt } from "../server/support/process.js"

/** The Go instruments when benchmarks/go/build.sh has built them already (the test builds nothing). */
const goBins: Record<string, string> = {}
try {
  const out = execFileSync("bash", ["benchmarks/go/build.sh", "--cached"], { encoding: "utf8", timeout: 30_000 })
  for (const line of out.split("\n")) {
    const m = /^(\w+)=(.+)$/.exec(line)
    if (m !== null) goBins[m[1]!] = m[2]!
  }
} catch {
  // no Go, or nothing built: the tool's test is skipped
}

/** Processes whose command line mentions `needle` (our children carry their data dir in theirs). */
const processesMentioning = (needle: string): Array<number> =>
  fs.readdirSync("/proc").flatMap((p) => {
    if (!/^\d+$/.test(p)) return []
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(needle) ? [Number(p)] : []
    } catch {
      return []
    }
  })

/** Processes whose environment holds `entry` ("NAME=value"), with their command lines. */
const processesWithEnv = (entry: string): Array<{ pid: number; cmdline: string }> =>
  fs.readdirSync("/proc").flatMap((p) => {
    if (!/^\d+$/.test(p)) return []
    try {
      if (!fs.readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(entry)) return []
      return [{ pid: Number(p), cmdline: fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ") }]
    } catch {
      return []
    }
  })

const goInstalled = (() => {
  try {
    execFileSync("go", ["version"], { stdio: "ignore", timeout: 30_000 })
    return true
  } catch {
    return false
  }
})()

const runCompare = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) => {
  const child = spawn(process.execPath, ["--expose-gc", COMPARE_JS, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env
  })
  const out = { stdout: "", stderr: "" }
  child.stdout.on("data", (c: Buffer) => (out.stdout += c.toString()))
  child.stderr.on("data", (c: Buffer) => (out.stderr += c.toString()))
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, ...out }))
  )
  return { child, out, done }
}

/**
 * The run's end, bounded by progress rather than a wall-clock budget: each measurement prints its
 * line's head as it starts and the rest as it ends, so a stall is a hang; then SIGINT ends it.
 */
const finished = async (run: ReturnType<typeof runCompare>) => {
  try {
    return await watchdog(
      "bench:compare",
      () => run.out.stderr.length,
      () => run.done
    )
  } catch (e) {
    run.child.kill("SIGINT")
    throw e
  }
}

describe.skipIf(skipEtcd)("bench:compare with real servers", () => {
  let root: string
  beforeAll(async () => {
    await ensureBuilt()
    root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-compare-test-"))
  }, 120_000)
  afterAll(() => {
    if (root !== undefined) fs.rmSync(root, { recursive: true, force: true })
  })

  it.each(["etcd-effect", "etcd-3.4"] as const)(
    "%s starts, answers a Range, has an RSS, and stop leaves nothing",
    async (system) => {
      const server = system === "etcd-3.4" ? await startEtcdServer(root) : await startOurs({ root })
      try {
        expect(server.system).toBe(system)
        expect(await probeRange(server.endpoint)).toBe(true)
        expect(readRss(server.pid)).toBeGreaterThan(5 * 1024 * 1024)
        expect(server.exited()).toBeUndefined()
      } finally {
        await server.stop()
      }
      expect(server.exited()).toBeDefined()
      expect(fs.readdirSync(root)).toEqual([])
      expect(await probeRange(server.endpoint, 300)).toBe(false)
    },
    60_000
  )

  it("--quick --rounds 1 --only put,watch --etcd 3.4 --instrument bench: both systems' numbers, no errors", async () => {
    const { code, stdout, stderr } = await finished(
      runCompare([
        "--quick",
        "--rounds",
        "1",
        "--only",
        "put,watch",
        "--etcd",
        "3.4",
        "--instrument",
        "bench",
        "--no-write"
      ])
    )
    expect(code, stderr).toBe(0)
    expect(stdout, stderr).not.toContain("errors:")
    expect(stderr).not.toContain("ERROR")
    for (const id of ["watch", "put"]) {
      const line = stdout.split("\n").find((l) => l.startsWith(`${id} `))
      expect(line, stdout).toBeDefined()
      // etcd median (starred: the better, the only etcd), ours median, ratio: numbers, "–" when missing
      const cells = line!.split(/\s{2,}/)
      expect(cells[1]).toBe("bench")
      const [etcd, ours, ratio] = cells.slice(4, 7)
      expect(etcd, line).toMatch(/^[\d,.]+\*$/)
      for (const cell of [ours, ratio]) expect(cell, line).toMatch(/^[\d,.]+$/)
      expect(Number(ratio)).toBeGreaterThan(0)
    }
    const dir = /data under (\S+)/.exec(stderr)![1]!
    expect(fs.existsSync(dir)).toBe(false)
  }, 0)

  it.skipIf(goBins["ETCD_36_BIN"] === undefined || goBins["ETCD_BENCHMARK_BIN"] === undefined)(
    "--pin with etcd 3.4, 3.6 and ours on etcd's benchmark tool: every system's numbers, no errors",
    async () => {
      const { code, stdout, stderr } = await finished(
        runCompare([
          "--quick",
          "--rounds",
          "1",
          "--only",
          "put,watch-latency-100",
          "--etcd",
          "3.4,3.6",
          "--instrument",
          "etcd-tool",
          "--pin",
          "--no-write"
        ])
      )
      expect(code, stderr).toBe(0)
      expect(stderr).not.toContain("ERROR")
      expect(stdout).toContain("pinned")
      for (const id of ["put", "watch-latency-100"]) {
        const line = stdout.split("\n").find((l) => l.startsWith(`${id} `))
        expect(line, stdout).toBeDefined()
        const cells = line!.split(/\s{2,}/)
        expect(cells[1]).toBe("etcd-tool")
        const medians = cells.slice(4, 7)
        for (const cell of medians) expect(cell, line).toMatch(/^[\d,.]+\*?$/)
        // exactly one of the two etcds is the better one
        expect(medians.slice(0, 2).filter((c) => c.endsWith("*"))).toHaveLength(1)
      }
    },
    0
  )

  // mid-run: the second phase has started (the first measured, its server stopped) and its server
  // is up or starting; each waits on those events, not on time. No Go: --etcd 3.4, --instrument bench.
  it.each([
    ["etcd-3.4", "etcd-"],
    ["etcd-effect", "ours-"]
  ] as const)(
    "SIGINT mid-run, while %s is measured, stops its server and removes the temp dir",
    async (system, dataDirPrefix) => {
      const args = ["--quick", "--rounds", "1", "--only", "watch-idle", "--etcd", "3.4", "--instrument", "bench"]
      const run = runCompare([...args, "--no-write"])
      const progress = () => run.out.stderr.length
      const ended = () => run.child.exitCode !== null || run.child.signalCode !== null
      // the line's head is printed as its measurement starts
      const started = new RegExp(`round 1  ${system.padEnd(11)}  $`)
      await untilDone(
        `bench:compare to start measuring ${system}`,
        () => ended() || started.test(run.out.stderr),
        progress
      )
      const dir = /data under (\S+)\n/.exec(run.out.stderr)?.[1] ?? ""
      expect(dir, run.out.stderr).not.toBe("")
      await untilDone(
        `${system}'s server to be spawned`,
        () => ended() || processesMentioning(path.join(dir, dataDirPrefix)).length > 0,
        progress
      )
      expect(ended(), run.out.stderr).toBe(false)
      run.child.kill("SIGINT")
      const { code, stderr } = await unstalled("bench:compare to exit after SIGINT", run.done)
      expect(code, stderr).toBe(130)
      expect(stderr).toContain("bench:compare: SIGINT, stopping the server and cleaning up")
      expect(fs.existsSync(dir)).toBe(false)
      expect(processesMentioning(dir)).toEqual([])
    },
    0
  )

  // a build of the Go instruments takes minutes (and waits for another one under way): a signal then
  // ends it and its go commands too. The build waits on a lock this test holds, in a cache of its own.
  it.skipIf(!goInstalled)(
    "SIGINT while benchmarks/go/build.sh runs ends the build: no build.sh or go left",
    async () => {
      const cache = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-go-cache-test-"))
      const holder = spawn("flock", [path.join(cache, ".lock"), "-c", "echo held; exec sleep 600"], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      try {
        let held = ""
        holder.stdout.on("data", (c: Buffer) => (held += c.toString()))
        await untilDone(
          "the test to hold the build lock",
          () => held.includes("held"),
          () => held
        )
        const env: NodeJS.ProcessEnv = { ...process.env, ETCD_BENCH_BIN_CACHE: cache }
        for (const k of ["ETCD_36_BIN", "ETCD_37_BIN", "ETCD_BENCHMARK_BIN", "KUBE_CLIENT_BIN"]) delete env[k]
        const args = ["--quick", "--rounds", "1", "--only", "watch-idle", "--etcd", "3.4,3.6", "--instrument", "bench"]
        const run = runCompare([...args, "--no-write"], env)
        const building = () => processesWithEnv(`ETCD_BENCH_BIN_CACHE=${cache}`)
        // build.sh has started and waits on the lock (its `flock` child), inside our cache
        await untilDone(
          "build.sh to wait on the lock",
          () => run.child.exitCode !== null || building().some((p) => p.cmdline.startsWith("flock")),
          () => run.out.stderr.length
        )
        expect(run.out.stderr).toContain("bench:compare: benchmarks/go/build.sh (cached after the first build)")
        run.child.kill("SIGINT")
        const { code, stderr } = await unstalled("bench:compare to exit after SIGINT", run.done)
        expect(code, stderr).toBe(130)
        expect(stderr).not.toContain("data under")
        // the build's group was killed: nothing of it is left to build once the lock is free
        await untilDone(
          "the build's processes to go",
          () => building().length === 0,
          () => building().length
        )
      } finally {
        holder.kill("SIGKILL")
        fs.rmSync(cache, { recursive: true, force: true })
      }
    },
    0
  )
})
