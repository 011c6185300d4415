/**
 * The code cache of the command line's client bundle (src/cli/compile-cache.ts): a cache is used
 * for the bundle it was made from and never for a rewritten one, an unsafe cache directory is not
 * used at all, and the bin writes a cache and runs the same with it.
 */
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { compileCacheDir, pruneStale } from "../../src/cli/compile-cache.js"
import { mainJs, repoRoot } from "../server/support/process.js"

const run = promisify(execFile)
const temps: Array<string> = []
const tempDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-cc-test-"))
  temps.push(d)
  return d
}
afterEach(() => {
  for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/**
 * One run of `file` through runCached in a fresh process (V8 keeps compiled scripts per process, so
 * a second compile in this one would never read the cache), from the built module.
 */
const runChild = (file: string, base: string | undefined): { cache: string; v: unknown } => {
  const module = pathToFileURL(path.join(repoRoot, "dist/src/cli/compile-cache.js")).href
  const script = `import { compileCacheDir, runCached } from ${JSON.stringify(module)}
const r = runCached(${JSON.stringify(file)}, ${base === undefined ? "undefined" : `compileCacheDir(${JSON.stringify(base)})`})
r.save()
console.log(JSON.stringify({ cache: r.cache, v: r.exports.v }))`
  return JSON.parse(execFileSync("node", ["--input-type=module", "-e", script], { encoding: "utf8" }))
}

describe("runCached", () => {
  it("uses the cache of the same script and never the cache of a rewritten one of the same length", () => {
    const base = tempDir()
    const file = path.join(base, "script.cjs")
    fs.writeFileSync(file, `#!/usr/bin/env node\nmodule.exports = { v: "one" }\n`)
    expect(runChild(file, base)).toEqual({ cache: "absent", v: "one" })
    expect(fs.readdirSync(compileCacheDir(base)!)).toHaveLength(1)
    expect(runChild(file, base)).toEqual({ cache: "used", v: "one" })
    // same length, other code: V8 would take the old bytecode (it checks the length only)
    fs.writeFileSync(file, `#!/usr/bin/env node\nmodule.exports = { v: "two" }\n`)
    expect(runChild(file, base)).toEqual({ cache: "absent", v: "two" })
    expect(runChild(file, base)).toEqual({ cache: "used", v: "two" })
  })

  it("runs without a cache when none is wanted, and a truncated cache is rejected, not run", () => {
    const base = tempDir()
    const file = path.join(base, "script.cjs")
    fs.writeFileSync(file, `module.exports = { v: 40 + 2 }\n`)
    expect(runChild(file, undefined)).toEqual({ cache: "off", v: 42 })
    expect(runChild(file, base)).toEqual({ cache: "absent", v: 42 })
    const dir = compileCacheDir(base)!
    const [cacheFile] = fs.readdirSync(dir)
    // cut short (as by a full disk): V8's length check rejects it
    const bytes = fs.readFileSync(path.join(dir, cacheFile!))
    fs.writeFileSync(path.join(dir, cacheFile!), bytes.subarray(0, bytes.length >> 1))
    expect(runChild(file, base)).toEqual({ cache: "rejected", v: 42 })
    expect(runChild(file, base)).toEqual({ cache: "used", v: 42 })
  })
})

describe("pruneStale", () => {
  it("removes the caches not written for over a week, and keeps the others", () => {
    const dir = compileCacheDir(tempDir())!
    const old = path.join(dir, "old.bin")
    const recent = path.join(dir, "recent.bin")
    fs.writeFileSync(old, "x")
    fs.writeFileSync(recent, "y")
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000)
    fs.utimesSync(old, eightDaysAgo, eightDaysAgo)
    pruneStale(dir)
    expect(fs.readdirSync(dir)).toEqual(["recent.bin"])
  })
})

describe("compileCacheDir", () => {
  it("refuses a directory others may write, and is off with NODE_DISABLE_COMPILE_CACHE", () => {
    const base = tempDir()
    const dir = compileCacheDir(base)!
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    fs.chmodSync(dir, 0o777)
    expect(compileCacheDir(base)).toBeUndefined()
    fs.chmodSync(dir, 0o700)
    expect(compileCacheDir(base)).toBe(dir)
    process.env["NODE_DISABLE_COMPILE_CACHE"] = "1"
    try {
      expect(compileCacheDir(base)).toBeUndefined()
    } finally {
      delete process.env["NODE_DISABLE_COMPILE_CACHE"]
    }
  })
})

describe("the bin", () => {
  // help and flag errors are answered from the table and get/put/del/watch run on the lean path,
  // all without loading the program: a command the program runs (here against no server) is what
  // loads it and writes the cache
  const deadServer = ["--endpoints", "127.0.0.1:1", "--dial-timeout", "200ms"]
  // the command fails (exit 1): its output is what execFile's error holds
  const runFailing = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
    run("node", [mainJs, ...args], { env }).then(
      () => expect.fail(`${args.join(" ")} succeeded with no server`),
      (e: { readonly code: number; readonly stderr: string }) => {
        expect(e.code).toBe(1)
        return e
      }
    )
  /** a cache file's variant: what follows the bundle's identity (version, arch, dev, ino, size, times) */
  const variant = (file: string) =>
    file
      .split("-")
      .slice(7)
      .join("-")
      .replace(/\.bin$/, "")
  it("writes a cache per command word and prints the same with it", async () => {
    const tmp = tempDir()
    const env = { ...process.env, TMPDIR: tmp }
    const first = await runFailing(["lease", "list", ...deadServer], env)
    const caches = fs.readdirSync(tmp).filter((d) => d.startsWith("etcd-effect-compile-cache-"))
    expect(caches).toHaveLength(1)
    const files = () =>
      fs
        .readdirSync(path.join(tmp, caches[0]!))
        .filter((f) => f.endsWith(".bin"))
        .sort()
    // the bin's own cache (launch.ts: one for the lean words, one for the rest) beside the program's
    expect(files().map(variant).sort()).toEqual(["bin-other", "lease-list"])
    const second = await runFailing(["lease", "list", ...deadServer], env)
    expect(second.stderr).toBe(first.stderr)
    expect(first.stderr).toContain("Error: context deadline exceeded")
    await runFailing(["endpoint", "status", ...deadServer], env)
    expect(files().map(variant).sort()).toEqual(["bin-other", "endpoint-status", "lease-list"])
  }, 60_000)
})
