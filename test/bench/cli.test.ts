/**
 * `etcd-effect bench` as built (`node dist/cli/main.js`) against our server: `-w json` prints
 * one parseable BenchResult, the table is the default, no progress bar when stderr is not a
 * terminal, and failures print `Error: <reason>` with exit code 1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCommand } from "../support/etcd.js"
import { ourTarget, type TestServer } from "../support/servers.js"
import { ensureBuilt } from "../server/support/process.js"

const MAIN = "dist/cli/main.js"

describe("etcd-effect bench (command line)", () => {
  let server: TestServer
  beforeAll(async () => {
    await ensureBuilt()
    server = await ourTarget.start()
  }, 120_000)
  afterAll(async () => {
    await server?.dispose()
  })

  const bench = (...args: Array<string>) => runCommand("node", [MAIN, "bench", ...args, "--endpoints", server.endpoint])

  it("prints a BenchResult as JSON with -w json", async () => {
    const out = await bench("put", "--total", "200", "--clients", "4", "--val-size", "16", "-w", "json")
    expect(out.stderr).toBe("")
    expect(out.code).toBe(0)
    const r = JSON.parse(out.stdout)
    expect(r).toMatchObject({
      scenario: "put",
      endpoints: [server.endpoint],
      params: { conns: 8, clients: 4, total: 200, keySize: 8, valSize: 16, keySpaceSize: 1 },
      unit: "puts/s",
      higherIsBetter: true,
      count: 200,
      errors: 0
    })
    expect(r.value).toBeGreaterThan(0)
    expect(r.durationMs).toBeGreaterThan(0)
    expect(r.latencyMs.p50).toBeLessThanOrEqual(r.latencyMs.p99)
    expect(out.stdout.trim().split("\n")).toHaveLength(1)
  })

  it("takes etcd's flag names and prints a table by default", async () => {
    const out = await bench("watch", "--streams", "2", "--watch-per-stream", "10", "--put-total", "5")
    expect(out.code).toBe(0)
    expect(out.stderr).toBe("")
    expect(out.stdout).toContain(`bench watch → ${server.endpoint}`)
    expect(out.stdout).toMatch(/events\/s\s+[\d,]+/)
    expect(out.stdout).toMatch(/count\s+100\n/)
    expect(out.stdout).toMatch(/errors\s+0\n/)
    const latency = await bench(
      "watch-latency",
      "--streams",
      "1",
      "--watchers-per-stream",
      "3",
      "--put-total",
      "5",
      "--put-rate",
      "500",
      "--prevkv",
      "-w",
      "json"
    )
    expect(JSON.parse(latency.stdout).params).toMatchObject({
      streams: 1,
      watchersPerStream: 3,
      putTotal: 5,
      putRate: 500,
      prevKv: true
    })
  })

  it("reports failures on stderr with exit code 1", async () => {
    const refused = await runCommand("node", [MAIN, "bench", "put", "--endpoints", "127.0.0.1:1"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^Error: cannot connect to 127\.0\.0\.1:1/)
    const withErrors = await bench("put", "--total", "5", "--key-size", "0")
    expect(withErrors.code).toBe(1) // the result is printed, but its numbers are not to be trusted
    expect(withErrors.stdout).toContain("5 (first: etcdserver: key is not provided)")
  })
})
