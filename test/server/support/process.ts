/**
 * `etcd-effect serve` as a child process from the built program (dist/cli/main.js, the bundle the
 * package's bin points at; built once per source change with tsc and then esbuild, under a lock so
 * parallel test files build it once). Every test
 * that runs compiled code goes through `ensureBuilt`: a second, unconditional build in another test
 * file would rewrite dist/ under the processes this one spawns.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../../support/ports.js"
import { call, rawClient, sleep } from "./in-process.js"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
export const mainJs = path.join(repoRoot, "dist/cli/main.js")
export const compareJs = path.join(repoRoot, "dist/benchmarks/compare.js")
/** the outputs whose age says whether dist/ is older than the sources */
const outputs = [mainJs, compareJs]

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p))
    else if (entry.name.endsWith(".ts") || entry.name.endsWith(".proto"))
      newest = Math.max(newest, fs.statSync(p).mtimeMs)
  }
  return newest
}

const isFresh = (): boolean => {
  if (!outputs.every((o) => fs.existsSync(o))) return false
  const built = Math.min(...outputs.map((o) => fs.statSync(o).mtimeMs))
  return ["src", "proto", "benchmarks"].every((dir) => newestMtime(path.join(repoRoot, dir)) <= built)
}

const lockDir = path.join(os.tmpdir(), `etcd-effect-build-${Buffer.from(repoRoot).toString("hex").slice(-16)}.lock`)

/** Builds dist/ unless it is newer than every source file. */
export const ensureBuilt = async (): Promise<void> => {
  const deadline = Date.now() + 240_000
  for (;;) {
    if (isFresh()) return
    try {
      fs.mkdirSync(lockDir)
    } catch {
      // someone else is building: wait for them (a lock older than the deadline is stale)
      if (Date.now() - fs.statSync(lockDir, { throwIfNoEntry: false })!.mtimeMs > 240_000)
        fs.rmSync(lockDir, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error("timed out waiting for another build")
      await sleep(500)
      continue
    }
    try {
      // tsc emits even when files outside this area fail to type-check (so its exit code is not
      // checked); then the bundle (`npm run bundle`) from what it emitted
      await new Promise<void>((resolve) =>
        execFile(path.join(repoRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json"], { cwd: repoRoot }, () =>
          resolve()
        )
      )
      await new Promise<void>((resolve, reject) =>
        execFile("npm", ["run", "-s", "bundle"], { cwd: repoRoot }, (error, _stdout, stderr) =>
          error === null ? resolve() : reject(new Error(`npm run bundle: ${stderr}`))
        )
      )
      const now = new Date()
      for (const o of outputs) if (fs.existsSync(o)) fs.utimesSync(o, now, now)
      if (!isFresh()) throw new Error("build did not produce a fresh dist/cli/main.js")
      return
    } finally {
      fs.rmSync(lockDir, { recursive: true, force: true })
    }
  }
}

export interface ServeProcessOptions {
  /** undefined: no --data-dir flag (the server's default, "<name>.etcd" in `cwd`) */
  readonly dataDir: string | undefined
  readonly cwd?: string
  readonly port?: number
  readonly args?: ReadonlyArray<string>
  readonly env?: Record<string, string>
}

/** A running `etcd-effect serve` child. */
export class ServeProcess {
  stdout = ""
  stderr = ""
  readonly exited: Promise<number | null>
  exitCode: number | null | undefined = undefined
  exitSignal: NodeJS.Signals | null = null

  private constructor(
    readonly child: ChildProcess,
    readonly port: number
  ) {
    child.stdout!.on("data", (d) => (this.stdout += d))
    child.stderr!.on("data", (d) => (this.stderr += d))
    this.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        this.exitCode = code
        this.exitSignal = signal
        resolve(code)
      })
    )
  }

  get endpoint(): string {
    return `127.0.0.1:${this.port}`
  }

  /** Spawns the server; does not wait for it to serve (see `ready`). */
  static spawn(options: ServeProcessOptions, port: number): ServeProcess {
    const extra = options.args ?? []
    const args = [
      mainJs,
      "serve",
      ...(options.dataDir === undefined ? [] : ["--data-dir", options.dataDir]),
      ...(extra.includes("--listen-client-urls") ? [] : ["--listen-client-urls", `http://127.0.0.1:${port}`]),
      // no extra metrics listener: none is the program's default, as etcd's
      ...extra
    ]
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...options.env },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    return new ServeProcess(child, port)
  }

  /** Spawns and waits until it answers Status. */
  static async start(options: ServeProcessOptions): Promise<ServeProcess> {
    const p = ServeProcess.spawn(options, options.port ?? (await freePort()))
    await p.ready()
    return p
  }

  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (this.exitCode !== undefined)
        throw new Error(`serve exited (${this.exitCode}) during start-up: ${this.stderr}`)
      // a fresh client per attempt: a refused connection puts a channel into reconnect back-off
      const client = rawClient("Maintenance", this.endpoint)
      try {
        await call(client, "Status", {}, { deadline: Date.now() + 1000 })
        return
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`serve did not become ready: ${String(e)}\n${this.stderr}`)
        await sleep(50)
      } finally {
        client.close()
      }
    }
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (this.exitCode === undefined) this.child.kill(signal)
    return this.exited
  }
}

/**
 * The lines of a server's stderr that are more than its info logs (at the default level it says
 * where it serves, as etcd does): warnings, errors, anything else it printed.
 */
export const beyondInfo = (stderr: string): Array<string> =>
  stderr.split("\n").filter((l) => l !== "" && !/^timestamp=\S+ level=INFO /.test(l))

export const tempDir = (): string => {
  let root = os.tmpdir()
  try {
    fs.accessSync("/dev/shm", fs.constants.W_OK)
    root = "/dev/shm"
  } catch {
    // tmpdir it is
  }
  return fs.mkdtempSync(path.join(root, "etcd-effect-serve-"))
}
