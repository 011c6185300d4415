/**
 * The npm package as a user gets it: `npm pack`, then `npm install ./etcd-effect-*.tgz` in an empty
 * directory outside the repository (its node_modules out of reach). The installed `etcd-effect`
 * program serves and answers put/get/watch, and a TypeScript program importing "etcd-effect"
 * type-checks against the package's declarations and runs.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCommand } from "../support/etcd.js"
import { freePort } from "../support/ports.js"
import { ensureBuilt, repoRoot } from "../server/support/process.js"

/** Runs a command in `cwd`; rejects with its output when it fails. */
const sh = (file: string, args: Array<string>, cwd: string, timeoutMs = 180_000): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error === null
        ? resolve(stdout)
        : reject(new Error(`${file} ${args.join(" ")}: ${error.message}\n${stdout}\n${stderr}`))
    )
  )

/** Starts a long-running command and resolves with its stdout once `until` holds, then kills it. */
const outputUntil = (
  file: string,
  args: Array<string>,
  until: (stdout: string) => boolean,
  timeoutMs = 60_000
): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${file} ${args.join(" ")}: no expected output in ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.stderr.on("data", (d) => (stderr += d))
    child.stdout.on("data", (d) => {
      stdout += d
      if (until(stdout)) {
        clearTimeout(timer)
        child.kill("SIGINT")
        resolve(stdout)
      }
    })
  })

/** The client example a user writes: the package's root export, typed. */
const example = `
import { Effect, Stream } from "effect"
import { Client } from "etcd-effect"

const endpoint = process.argv[2]!
const program = Effect.gen(function*() {
  const etcd = yield* Client.EtcdClient
  const { header } = yield* etcd.kv.put("/ex/a", "1")
  yield* etcd.kv.put("/ex/a", "2")
  const got = yield* etcd.kv.get("/ex/", { prefix: true })
  const events = yield* etcd.watch("/ex/", { prefix: true, startRevision: header.revision }).pipe(
    Stream.flatMap((r) => Stream.fromIterable(r.events)),
    Stream.take(2),
    Stream.runCollect
  )
  const text = (b: Uint8Array): string => Buffer.from(b).toString()
  console.log(JSON.stringify({ values: got.kvs.map((kv) => text(kv.value)), watched: [...events].map((e) => text(e.kv.value)) }))
}).pipe(Effect.scoped)

Effect.runPromise(program.pipe(Effect.provide(Client.EtcdClient.layer({ endpoints: [endpoint] }))))
`

describe("the npm package, installed from its tarball", () => {
  let dir: string
  let app: string
  let files: Array<string>
  let server: ChildProcess | undefined
  let newestEffect3: string

  beforeAll(async () => {
    await ensureBuilt()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-pkg-"))
    // --ignore-scripts: `prepare` would rebuild dist/ under other test files' processes
    const packed = JSON.parse(
      await sh("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], repoRoot)
    )
    files = packed[0].files.map((f: { path: string }) => f.path)
    app = path.join(dir, "app")
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    // as README says: the package with the newest effect 3.x (a peer: one copy of effect), and
    // @types/node, what any TypeScript program on Node has beside the package
    newestEffect3 = (await sh("npm", ["view", "effect@3", "version", "--json"], app)).trim()
    newestEffect3 = [JSON.parse(newestEffect3)].flat().at(-1) as string
    await sh(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        path.join(dir, packed[0].filename),
        "effect@3",
        "@types/node@20"
      ],
      app
    )
  }, 240_000)
  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server!.once("exit", r))
      server.kill("SIGKILL")
      await exited
    }
    // an npm install of thousands of files: removed off the event loop (see docs-examples.test.ts)
    if (dir !== undefined) await fs.promises.rm(dir, { recursive: true, force: true })
  }, 0)

  it("carries the compiled library, its program and the protos, and nothing of tests or benchmarks", () => {
    expect(files).toContain("dist/src/index.js")
    expect(files).toContain("dist/src/index.d.ts")
    expect(files).toContain("dist/cli/main.js")
    expect(files).toEqual(
      expect.arrayContaining(["proto/rpc.proto", "proto/kv.proto", "proto/auth.proto", "README.md", "package.json"])
    )
    const stray = files.filter(
      (f) =>
        /^(test|bench|benchmarks|docs|src)\//.test(f) ||
        f.startsWith("dist/test/") ||
        f.startsWith("dist/benchmarks/") ||
        f.endsWith(".tsbuildinfo")
    )
    expect(stray).toEqual([])
    const manifest = JSON.parse(fs.readFileSync(path.join(app, "node_modules/etcd-effect/package.json"), "utf8"))
    expect(manifest.engines.node).toBeDefined()
    expect(manifest.license).toBe("Apache-2.0")
  })

  it("effect and @effect/* are peers: with the newest effect 3.x installed beside it, one copy of each", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(app, "node_modules/etcd-effect/package.json"), "utf8"))
    const peers = Object.keys(manifest.peerDependencies ?? {})
    expect(peers).toEqual(expect.arrayContaining(["effect", "@effect/platform", "@effect/platform-node"]))
    for (const name of peers) {
      expect(manifest.dependencies?.[name], name).toBeUndefined()
      expect(manifest.peerDependencies[name], name).toMatch(/^\^/)
    }
    expect(JSON.parse(fs.readFileSync(path.join(app, "node_modules/effect/package.json"), "utf8")).version).toBe(
      newestEffect3
    )
    // no nested copy anywhere under node_modules
    const copies: Array<string> = []
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        if (!e.isDirectory()) continue
        const p = path.join(d, e.name)
        if (e.name === "node_modules") {
          if (fs.existsSync(path.join(p, "effect/package.json"))) copies.push(path.join(p, "effect"))
          walk(p)
        } else if (d.endsWith("node_modules") || path.basename(d).startsWith("@")) walk(p)
      }
    }
    walk(app)
    expect(copies).toEqual([path.join(app, "node_modules/effect")])
  })

  it("the load generator and the protos are subpaths (etcd-effect/bench, etcd-effect/proto), not in the root export", async () => {
    const probe = `const root = await import("etcd-effect"); const bench = await import("etcd-effect/bench");
      const proto = await import("etcd-effect/proto");
      console.log(JSON.stringify({ rootBench: "Bench" in root, rootProto: "Proto" in root, run: typeof bench.run,
        client: typeof root.Client.EtcdClient, kv: typeof proto.packageDefinition["etcdserverpb.KV"] }))`
    const out = await sh("node", ["--input-type=module", "-e", probe], app)
    expect(JSON.parse(out)).toEqual({
      rootBench: false,
      rootProto: false,
      run: "function",
      client: "function",
      kv: "object"
    })
  }, 60_000)

  it("npx etcd-effect serves, and its put, get and watch work against it", async () => {
    const bin = path.join(app, "node_modules/.bin/etcd-effect")
    const port = await freePort()
    const endpoint = `127.0.0.1:${port}`
    let log = ""
    server = spawn(
      bin,
      [
        "serve",
        "--data-dir",
        path.join(dir, "data"),
        "--listen-client-urls",
        `http://${endpoint}`,
        "--listen-metrics-urls",
        ""
      ],
      {
        cwd: app,
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    server.stdout!.on("data", (d) => (log += d))
    server.stderr!.on("data", (d) => (log += d))
    const deadline = Date.now() + 30_000
    for (;;) {
      const r = await runCommand(bin, ["put", "/pkg/x", "1", "--endpoints", endpoint, "--dial-timeout", "1s"])
      if (r.code === 0) break
      if (Date.now() > deadline) throw new Error(`the installed server did not answer:\n${log}\n${r.stderr}`)
    }
    expect((await runCommand(bin, ["get", "/pkg/x", "--endpoints", endpoint])).stdout).toBe("/pkg/x\n1\n")
    // --rev 1 replays the put; the watch runs until interrupted
    const watched = await outputUntil(bin, ["watch", "/pkg/x", "--rev", "1", "--endpoints", endpoint], (out) =>
      out.endsWith("\n1\n")
    )
    expect(watched).toBe("PUT\n/pkg/x\n1\n")
    // a TypeScript user's program: type-checks against the installed declarations, then runs
    fs.writeFileSync(path.join(app, "example.ts"), example)
    fs.writeFileSync(
      path.join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          types: ["node"],
          lib: ["ES2022"],
          skipLibCheck: true,
          outDir: "out"
        },
        files: ["example.ts"]
      })
    )
    await sh(path.join(repoRoot, "node_modules/.bin/tsc"), ["-p", "."], app)
    const ran = await runCommand("node", [path.join(app, "out/example.js"), endpoint])
    expect(ran.stderr).toBe("")
    expect(JSON.parse(ran.stdout)).toEqual({ values: ["2"], watched: ["1", "2"] })
    const exited = new Promise((r) => server!.once("exit", r))
    server.kill("SIGTERM")
    await exited
  }, 120_000)

  it("`npx etcd-effect serve &` then `kill $!` stops the server, though npx does not pass the signal on", async () => {
    // npm exec runs the bin through `sh -c` and signals only that shell: the server sees npx go
    // (serve-npx-parent.ts) and stops gracefully. Its stderr is the pipe npx was given, so the
    // pipe closes only once the server itself has exited.
    const port = await freePort()
    const endpoint = `127.0.0.1:${port}`
    const npx = spawn(
      "npx",
      ["etcd-effect", "serve", "--data-dir", path.join(dir, "npx-data"), "--listen-client-urls", `http://${endpoint}`],
      { cwd: app, stdio: ["ignore", "pipe", "pipe"] }
    )
    let log = ""
    npx.stderr.on("data", (d) => (log += d))
    const closed = new Promise<void>((resolve) => npx.once("close", () => resolve()))
    const deadline = Date.now() + 60_000
    while (!log.includes("ready to serve client requests")) {
      if (Date.now() > deadline || npx.exitCode !== null) throw new Error(`npx serve did not start:\n${log}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    npx.kill("SIGTERM")
    await closed
    expect(log).toContain('message="server stopped"')
    // nothing listens any more
    const after = await runCommand(path.join(app, "node_modules/.bin/etcd-effect"), [
      "get",
      "x",
      "--endpoints",
      endpoint,
      "--dial-timeout",
      "300ms"
    ])
    expect(after.stderr).toBe("Error: context deadline exceeded\n")
  }, 120_000)
})
