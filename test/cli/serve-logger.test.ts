/**
 * `serve`'s logging as etcd's flags set it (issue 46, item 3): with `--logger zap` or etcd 3.6's
 * `--log-format`, every line on every `--log-outputs` target (stderr, stdout, a file) is one of
 * zap's, in the shape etcd 3.6 prints: the shape is checked on a real etcd 3.6's first lines too
 * (when benchmarks/go/build.sh has built it), so the checks are the oracle's, not our own idea.
 * `--log-level` filters.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePorts } from "../support/ports.js"
import { ensureBuilt, ServeProcess, tempDir } from "../server/support/process.js"

const etcd36 = ((): string | undefined => {
  try {
    const out = execFileSync("bash", ["benchmarks/go/build.sh", "--cached"], { encoding: "utf8" })
    const bin = /^ETCD_36_BIN=(.*)$/m.exec(out)?.[1]
    return bin !== undefined && fs.existsSync(bin) ? bin : undefined
  } catch {
    return undefined
  }
})()

/** zap's level names (zapcore.LowercaseLevelEncoder) */
const LEVELS = ["debug", "info", "warn", "error", "dpanic", "panic", "fatal"]
/** etcd 3.6's EncodeTime layout, "2006-01-02T15:04:05.000000Z0700" */
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d{4})$/

/** One JSON line as etcd 3.6 writes it: level, ts, caller, msg first (strings), then the fields. */
const zapJson = (line: string) => {
  const o = JSON.parse(line) as Record<string, unknown>
  expect(Object.keys(o).slice(0, 4), line).toEqual(["level", "ts", "caller", "msg"])
  expect(LEVELS, line).toContain(o["level"])
  expect(o["ts"], line).toMatch(TS)
  expect(typeof o["caller"], line).toBe("string")
  expect(typeof o["msg"], line).toBe("string")
  return o as { level: string; ts: string; caller: string; msg: string }
}

/** One console line: ts, level, caller, msg tab-separated, then the fields as `{"k": "v"}`. */
const zapConsole = (line: string) => {
  const [ts, level, caller, msg, fields, ...rest] = line.split("\t")
  expect(rest, line).toEqual([])
  expect(ts, line).toMatch(TS)
  expect(LEVELS, line).toContain(level)
  expect(caller, line).not.toBe("")
  if (fields !== undefined) {
    expect(fields, line).toMatch(/^\{".*\}$/)
    expect(fields, line).not.toMatch(/":[^ ]|",[^ ]/)
    JSON.parse(fields)
  }
  return { level: level!, msg: msg! }
}

const lines = (text: string) => text.split("\n").filter((l) => l !== "")

/** The first `n` lines etcd 3.6 prints to stderr with these flags (then it is stopped). */
const etcd36Lines = (bin: string, dir: string, args: ReadonlyArray<string>, n: number) =>
  freePorts(2).then(
    ([client, peer]) =>
      new Promise<Array<string>>((resolve, reject) => {
        const child = spawn(
          bin,
          [
            "--data-dir",
            path.join(dir, `etcd36-${client}`),
            "--listen-client-urls",
            `http://127.0.0.1:${client}`,
            "--advertise-client-urls",
            `http://127.0.0.1:${client}`,
            "--listen-peer-urls",
            `http://127.0.0.1:${peer}`,
            "--initial-advertise-peer-urls",
            `http://127.0.0.1:${peer}`,
            "--initial-cluster",
            `default=http://127.0.0.1:${peer}`,
            ...args
          ],
          { stdio: ["ignore", "ignore", "pipe"] }
        )
        let err = ""
        child.stderr.on("data", (d) => {
          err += d
          if (lines(err).length > n) child.kill("SIGKILL")
        })
        child.on("error", reject)
        child.on("exit", () => resolve(lines(err).slice(0, n)))
      })
  )

describe("serve --logger zap, --log-format, --log-outputs, --log-level", () => {
  let dir: string
  beforeAll(async () => {
    await ensureBuilt()
    dir = tempDir()
  }, 300_000)
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  // one warning (a quota above etcd's maximum) among the info lines
  const QUOTA = ["--quota-backend-bytes", "9000000000"]

  /** Serves with `args` until ready, stops it (SIGTERM), and answers its stdout and stderr. */
  const served = async (name: string, args: ReadonlyArray<string>) => {
    const s = await ServeProcess.start({ dataDir: path.join(dir, name), args: [...QUOTA, ...args] })
    expect(await s.kill("SIGTERM"), s.stderr).toBe(0)
    return { stdout: s.stdout, stderr: s.stderr }
  }

  it.skipIf(etcd36 === undefined)(
    "the checks hold for etcd 3.6's own lines (json and console)",
    async () => {
      const json = await etcd36Lines(etcd36!, dir, ["--log-format", "json"], 6)
      expect(json.length).toBe(6)
      for (const l of json) zapJson(l)
      expect(json.map((l) => zapJson(l).level)).toContain("warn")
      const console = await etcd36Lines(etcd36!, dir, ["--log-format", "console"], 6)
      expect(console.length).toBe(6)
      for (const l of console) zapConsole(l)
    },
    60_000
  )

  it("JSON lines in zap's shape on every output: stderr, stdout and a file", async () => {
    const file = path.join(dir, "zap.log")
    const out = await served("outputs", [
      "--logger",
      "zap",
      "--log-format",
      "json",
      "--log-outputs",
      `stderr,stdout,${file}`
    ])
    const text = fs.readFileSync(file, "utf8")
    expect(out.stdout).toBe(out.stderr)
    expect(text).toBe(out.stderr)
    const records = lines(text).map(zapJson)
    expect(records.map((r) => [r.level, r.msg])).toEqual(
      expect.arrayContaining([
        ["warn", "quota exceeds the maximum value (8589934592); using it anyway"],
        ["info", "ready to serve client requests"],
        ["info", "serving client traffic insecurely; this is strongly discouraged!"],
        ["info", "server stopped"]
      ])
    )
    // fields follow, with their values' own JSON types
    const ready = lines(text).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(ready.find((r) => r["msg"] === "ready to serve client requests")).toMatchObject({ name: "default" })
  }, 60_000)

  it("etcd 3.6's --log-format alone is zap's (json, console); without it, logfmt", async () => {
    const json = await served("format-json", ["--log-format", "json"])
    expect(json.stdout).toBe("")
    expect(lines(json.stderr).map(zapJson).length).toBeGreaterThan(2)
    const console = await served("format-console", ["--log-format", "console"])
    const records = lines(console.stderr).map(zapConsole)
    expect(records.map((r) => r.msg)).toContain("ready to serve client requests")
    const plain = await served("format-none", [])
    expect(lines(plain.stderr).every((l) => l.startsWith("timestamp="))).toBe(true)
  }, 60_000)

  it("--log-level filters: warn drops info, error drops warn", async () => {
    const warn = await served("level-warn", ["--logger", "zap", "--log-level", "warn"])
    expect(lines(warn.stderr).map((l) => zapJson(l).level)).toEqual(["warn"])
    const error = await served("level-error", ["--log-format", "json", "--log-level", "error"])
    expect(error.stderr).toBe("")
    const debug = await served("level-debug", ["--log-format", "json", "--log-level", "debug"])
    expect(lines(debug.stderr).map((l) => zapJson(l).level)).toEqual(expect.arrayContaining(["warn", "info"]))
  }, 60_000)
})
