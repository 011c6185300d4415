/**
 * A V8 code cache for the command line's client bundle. Node 20 has no `module.enableCompileCache()`
 * (Node 22) and none for ES modules, so the client commands run from one CommonJS script compiled
 * through `vm.Script` with the bytecode V8 produced on an earlier run: a start-up then skips
 * parsing and compiling what it runs (issue 12, start-up; docs/benchmarks.md).
 *
 * The cache lives in a directory of the temp dir that only this user may write (a cache is code:
 * one planted by someone else must never run), one file per bundle version: the file name is
 * the bundle's identity (device, inode, size, change and modification times) and the Node
 * version, so a rebuilt bundle never meets the old bundle's bytecode. V8 itself only checks the
 * source's length. Any cache problem is silent: the script then compiles as usual.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Script } from "node:vm"
import { makeDirs } from "../backend/make-dirs.js"

/** What happened to the cache on this run. */
export type CacheState = "used" | "rejected" | "absent" | "off"

/** The user's cache directory, or undefined when caching is off or the directory is not safe. */
export const compileCacheDir = (base: string = tmpdir()): string | undefined => {
  // Node 22's switch for its own compile cache, honoured here the same way
  if (process.env["NODE_DISABLE_COMPILE_CACHE"] !== undefined) return undefined
  const uid = process.getuid?.() ?? 0
  const dir = join(base, `etcd-effect-compile-cache-${uid}`)
  try {
    makeDirs(dir, 0o700)
    const st = statSync(dir)
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? dir : undefined
  } catch {
    return undefined
  }
}

/** Caches not written for this long are of bundles gone (each build and command writes its own). */
const STALE_MS = 7 * 24 * 3600 * 1000

/** Removes the caches of `dir` written more than a week ago (run when a new cache is written). */
export const pruneStale = (dir: string, now = Date.now()): void => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    try {
      if (now - statSync(p).mtimeMs > STALE_MS) rmSync(p, { force: true })
    } catch {
      // removed by another run meanwhile
    }
  }
}

/**
 * The cache file of `file` as it is now (a rewrite gives another name), for one `variant` of its
 * use: a cache holds the functions its first run compiled, so each command keeps its own.
 */
export const cacheFileFor = (file: string, dir: string, variant = ""): string => {
  const st = statSync(file, { bigint: true })
  const name = `${process.version}-${process.arch}-${st.dev}-${st.ino}-${st.size}-${st.mtimeNs}-${st.ctimeNs}`
  return join(dir, `${name}${/^[a-z][a-z-]{0,30}$/.test(variant) ? `-${variant}` : ""}.bin`)
}

/**
 * Runs `file` (CommonJS) with the cache of `dir`. When no cache was used, `save` writes one: call it
 * after the command ran (the bin does at exit), so the functions it compiled are in it too.
 */
export const runCached = (
  file: string,
  dir: string | undefined,
  variant = ""
): { readonly exports: unknown; readonly cache: CacheState; readonly save: () => void } => {
  const text = readFileSync(file, "utf8")
  // a `#!` line (the program's own, kept by the bundler) is not JavaScript inside the wrapper
  const source = text.startsWith("#!") ? `//${text.slice(2)}` : text
  let cacheFile: string | undefined
  let cachedData: Buffer | undefined
  if (dir !== undefined) {
    try {
      cacheFile = cacheFileFor(file, dir, variant)
      cachedData = readFileSync(cacheFile)
    } catch {
      // no cache yet
    }
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  const cache: CacheState =
    cacheFile === undefined
      ? "off"
      : cachedData === undefined
        ? "absent"
        : script.cachedDataRejected === true
          ? "rejected"
          : "used"
  const save = () => {
    if (cacheFile === undefined || cache === "used") return
    try {
      const tmp = `${cacheFile}.${process.pid}.tmp`
      writeFileSync(tmp, script.createCachedData(), { mode: 0o600 })
      renameSync(tmp, cacheFile)
      pruneStale(dirname(cacheFile))
    } catch {
      // a read-only or full temp dir: run without a cache next time too
    }
  }
  const module = { exports: {} as unknown }
  const wrapper = script.runInThisContext() as (...args: Array<unknown>) => void
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file))
  return { exports: module.exports, cache, save }
}
