/**
 * src/debug/put-event-trace.ts, as a developer uses it: a server started with
 * ETCD_EFFECT_TRACE_PUT_EVENT=1 stamps every stage of each watched put and, at exit, prints each
 * segment's percentiles and the slowest revisions' breakdown on stderr; without the variable it
 * prints nothing of it. (Its state is module-global, set at import: only a process can turn it on.)
 */
import * as fs from "node:fs"
import { beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt, ServeProcess, tempDir } from "../server/support/process.js"
import { call, rawClient } from "../server/support/in-process.js"
import { RawWatch } from "../server/support/raw-watch.js"

const PUTS = 5

/** A server (traced or not) that served a watch of PUTS puts, stopped; its stderr. */
const watchedPuts = async (env: Record<string, string>): Promise<string> => {
  const dir = tempDir()
  const server = await ServeProcess.start({ dataDir: dir, env })
  const kv = rawClient("KV", server.endpoint)
  const watch = new RawWatch(server.endpoint)
  try {
    watch.create({ key: Buffer.from("trace/"), range_end: Buffer.from("trace0") })
    await watch.waitFor(1, 60_000)
    for (let i = 0; i < PUTS; i++) await call(kv, "Put", { key: Buffer.from(`trace/${i}`), value: Buffer.from("v") })
    await watch.waitForEvents(PUTS, 60_000)
  } finally {
    watch.close()
    kv.close()
    expect(await server.kill("SIGTERM")).toBe(0)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return server.stderr
}

describe("the put → event trace (ETCD_EFFECT_TRACE_PUT_EVENT)", () => {
  beforeAll(ensureBuilt, 600_000)

  it("on: at exit, every segment of the path and the slowest revisions, for the puts watched", async () => {
    const stderr = await watchedPuts({ ETCD_EFFECT_TRACE_PUT_EVENT: "1" })
    const lines = stderr.split("\n")
    // the revisions written to a watch stream: the puts (the report at exit, or one at 5 s and the rest at exit)
    const written = lines.flatMap((l) => /^put→event trace: (\d+) revisions written$/.exec(l)?.[1] ?? []).map(Number)
    expect(written.reduce((a, b) => a + b, 0)).toBe(PUTS)
    for (const segment of [
      "staged→durable",
      "durable→committed",
      "committed→offered",
      "offered→taken",
      "taken→written",
      "staged→written"
    ]) {
      expect(stderr, segment).toMatch(new RegExp(`^  ${segment}: p50 [\\d.]+ p99 [\\d.]+ max [\\d.]+ ms$`, "m"))
    }
    expect(
      lines.filter((l) =>
        /^ {2}slowest rev \d+: [\d.]+ ms = staged (\?|\+[\d.]+), durable \+[\d.]+, committed \+/.test(l)
      ).length
    ).toBe(PUTS)
    expect(stderr).toMatch(/^ {2}WAL group write\+fdatasync: \d+ groups/m)
    expect(stderr).toMatch(/^ {2}event loop delay: p50/m)
  }, 180_000)

  it("off (the default): nothing of it is printed", async () => {
    const stderr = await watchedPuts({})
    expect(stderr).not.toContain("put→event trace")
    expect(stderr).not.toContain("slowest rev")
  }, 180_000)
})
