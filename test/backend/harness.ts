/**
 * Shared helpers for the backend tests: temp dirs, a Map model of the three buckets, and a bundle
 * of the child-process fixture (esbuild, which vitest's vite already ships) so children run plain
 * `node` against the real sources without a project build.
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { BackendShape, BucketName } from "../../src/backend/backend.js"
import { compareBytes } from "../../src/backend/sorted-bucket.js"

export const BUCKET_NAMES: ReadonlyArray<BucketName> = ["key", "meta", "lease"]

const here = path.dirname(fileURLToPath(import.meta.url))
export const projectRoot = path.resolve(here, "../..")

export const makeTempDir = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `etcd-effect-${prefix}-`))
export const removeDir = (dir: string): void => fs.rmSync(dir, { recursive: true, force: true })

export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex")
export const unhex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "hex"))

/** The reference model: per bucket, hex key → value; sorted views are cached until the next change. */
export class Model {
  readonly buckets: Record<BucketName, Map<string, Uint8Array>> = {
    key: new Map(),
    meta: new Map(),
    lease: new Map(),
    auth: new Map(),
    authUsers: new Map(),
    authRoles: new Map()
  }
  private sorted: Partial<Record<BucketName, Array<{ key: Uint8Array; k: string; v: string }>>> = {}
  apply(ops: ReadonlyArray<{ bucket: BucketName; key: Uint8Array; value: Uint8Array | undefined }>): void {
    for (const op of ops) {
      if (op.value === undefined) this.buckets[op.bucket].delete(hex(op.key))
      else this.buckets[op.bucket].set(hex(op.key), Uint8Array.from(op.value))
      delete this.sorted[op.bucket]
    }
  }
  private view(bucket: BucketName) {
    return (this.sorted[bucket] ??= [...this.buckets[bucket].entries()]
      .map(([k, v]) => ({ key: unhex(k), k, v: hex(v) }))
      .sort((a, b) => compareBytes(a.key, b.key)))
  }
  range(bucket: BucketName, start: Uint8Array, end: Uint8Array | undefined, limit?: number): Array<[string, string]> {
    const out: Array<[string, string]> = []
    if (limit !== undefined && limit <= 0) return out
    for (const e of this.view(bucket)) {
      if (compareBytes(e.key, start) < 0) continue
      if (end !== undefined && compareBytes(e.key, end) >= 0) break
      out.push([e.k, e.v])
      if (limit !== undefined && out.length >= limit) break
    }
    return out
  }
}

export const rangeHex = (
  b: BackendShape,
  bucket: BucketName,
  start: Uint8Array,
  end: Uint8Array | undefined,
  limit?: number
): Array<[string, string]> => b.range(bucket, start, end, limit).map(([k, v]) => [hex(k), hex(v)])

export const dumpHex = (b: BackendShape): Record<BucketName, Array<[string, string]>> => ({
  key: rangeHex(b, "key", new Uint8Array(0), undefined),
  meta: rangeHex(b, "meta", new Uint8Array(0), undefined),
  lease: rangeHex(b, "lease", new Uint8Array(0), undefined),
  auth: rangeHex(b, "auth", new Uint8Array(0), undefined),
  authUsers: rangeHex(b, "authUsers", new Uint8Array(0), undefined),
  authRoles: rangeHex(b, "authRoles", new Uint8Array(0), undefined)
})

// ---- child processes --------------------------------------------------------------------------

/** Bundles test/backend/fixtures/child.ts (our sources inlined, packages external) for plain node. */
export const bundleChild = async (): Promise<{ file: string; dir: string }> => {
  const { build } = await import("esbuild")
  const cache = path.join(projectRoot, "node_modules", ".cache")
  fs.mkdirSync(cache, { recursive: true })
  // Inside the project so `effect` and `lmdb` resolve from node_modules; world-readable for the uid test.
  const dir = fs.mkdtempSync(path.join(cache, "etcd-effect-backend-test-"))
  fs.chmodSync(dir, 0o755)
  const file = path.join(dir, "child.mjs")
  await build({
    entryPoints: [path.join(here, "fixtures", "child.ts")],
    outfile: file,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error"
  })
  fs.chmodSync(file, 0o644)
  return { file, dir }
}

export interface Child {
  readonly proc: ChildProcess
  readonly lines: Array<string>
  /** resolves with the first line matching, rejects if the child exits first */
  readonly waitFor: (pred: (line: string) => boolean, timeoutMs?: number) => Promise<string>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly stderr: () => string
}

export const spawnChild = (
  file: string,
  args: ReadonlyArray<string>,
  options: { uid?: number; gid?: number } = {}
): Child => {
  const proc = spawn(process.execPath, [file, ...args], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {})
  })
  const lines: Array<string> = []
  let err = ""
  let buf = ""
  const listeners = new Set<() => void>()
  proc.stdout!.setEncoding("utf8")
  proc.stdout!.on("data", (chunk: string) => {
    buf += chunk
    let i: number
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, i))
      buf = buf.slice(i + 1)
    }
    for (const l of listeners) l()
  })
  proc.stderr!.setEncoding("utf8")
  proc.stderr!.on("data", (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => {
      for (const l of listeners) l()
      resolve({ code, signal })
    })
  )
  const waitFor = (pred: (line: string) => boolean, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find(pred)
        if (found !== undefined) {
          cleanup()
          resolve(found)
        } else if (proc.exitCode !== null || proc.signalCode !== null) {
          cleanup()
          reject(
            new Error(`child exited (${proc.exitCode ?? proc.signalCode}) before the expected line; stderr: ${err}`)
          )
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`timed out waiting for the child; lines: ${lines.slice(-5).join(" | ")}; stderr: ${err}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      check()
    })
  return { proc, lines, waitFor, exited, stderr: () => err }
}

export const killChild = async (c: Child): Promise<void> => {
  if (c.proc.exitCode === null && c.proc.signalCode === null) {
    c.proc.kill("SIGKILL")
    await c.exited
  }
}
