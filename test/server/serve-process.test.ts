/**
 * `etcd-effect serve` as a real process (compiled dist/): durability across SIGKILL under
 * acknowledged write load, graceful SIGTERM (exit 0, streams ended, data kept), etcd's flags and
 * ETCD_* variables, and start-up errors as one line with exit code 1.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/ports.js"
import { call, rawClient, sleep, unaryCall } from "./support/in-process.js"
import { ensureBuilt, ServeProcess, tempDir } from "./support/process.js"
import { RawWatch } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)

describe("etcd-effect serve (process)", () => {
  const dirs: Array<string> = []
  const procs: Array<ServeProcess> = []
  const dir = () => {
    const d = tempDir()
    dirs.push(d)
    return d
  }
  const start = async (options: Parameters<typeof ServeProcess.start>[0]) => {
    const p = await ServeProcess.start(options)
    procs.push(p)
    return p
  }
  /** Runs serve expecting it to fail at start-up; returns exit code and stderr. */
  const failing = async (
    args: ReadonlyArray<string>,
    options: { dataDir?: string; port?: number; env?: Record<string, string> } = {}
  ) => {
    const p = ServeProcess.spawn(
      { dataDir: options.dataDir ?? dir(), args, ...(options.env === undefined ? {} : { env: options.env }) },
      options.port ?? (await freePort())
    )
    procs.push(p)
    const code = await Promise.race([p.exited, sleep(30_000).then(() => "timeout" as const)])
    return { code, stderr: p.stderr, stdout: p.stdout }
  }

  beforeAll(async () => {
    await ensureBuilt()
  }, 300_000)
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL")))
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })

  it("SIGKILL under acknowledged write load loses no acknowledged write", async () => {
    const dataDir = dir()
    const first = await start({ dataDir })
    const acked = new Map<string, { value: string; rev: number }>()
    let stop = false
    const kv = rawClient("KV", first.endpoint)
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const key = `load/${w}/${i}`
        const value = `v-${w}-${i}`
        const r = await unaryCall(kv, "Put", { key: b(key), value: b(value) })
        if (!r.ok) return
        acked.set(key, { value, rev: Number(r.value.header.revision) })
      }
    }
    const writers = Array.from({ length: 8 }, (_, w) => writer(w))
    // kill once there is load to lose (a count, not a time: a busy machine writes slower)
    for (let waited = 0; acked.size <= 60 && waited < 30_000; waited += 20) await sleep(20)
    await first.kill("SIGKILL")
    stop = true
    await Promise.all(writers)
    kv.close()
    expect(acked.size).toBeGreaterThan(50)

    const second = await start({ dataDir, port: first.port })
    const kv2 = rawClient("KV", second.endpoint)
    try {
      const all = await call(kv2, "Range", { key: b("load/"), range_end: b("load0") })
      const stored = new Map<string, any>(all.kvs.map((x: any) => [x.key.toString(), x]))
      for (const [key, { value, rev }] of acked) {
        const got = stored.get(key)
        expect(got, `acknowledged ${key} lost`).toBeDefined()
        expect(got.value.toString()).toBe(value)
        expect(Number(got.mod_revision)).toBe(rev)
      }
      const maxAcked = Math.max(...[...acked.values()].map((a) => a.rev))
      expect(Number(all.header.revision)).toBeGreaterThanOrEqual(maxAcked)
    } finally {
      kv2.close()
      await second.kill("SIGTERM")
    }
  })

  it("SIGTERM: ends open streams with Unavailable, exits 0 saying no more than etcd; data, ids and a new term after restart", async () => {
    const dataDir = dir()
    const p = await start({ dataDir })
    const kv = rawClient("KV", p.endpoint)
    const cluster = rawClient("Cluster", p.endpoint)
    const m = rawClient("Maintenance", p.endpoint)
    await call(kv, "Put", { key: b("kept"), value: b("yes") })
    const before = await call(cluster, "MemberList", {})
    const status1 = await call(m, "Status", {})
    const w = new RawWatch(p.endpoint)
    w.create({ key: b("kept") })
    await w.waitFor(1)
    kv.close()
    cluster.close()
    m.close()

    // a stop that hung on the open stream would run into the test's timeout
    const code = await p.kill("SIGTERM")
    expect(code).toBe(0)
    // at the default log level: what etcd says at start-up (ready, the URL it serves), and the stop
    const messages = p.stderr
      .trim()
      .split("\n")
      .map((l) => /message="([^"]*)"/.exec(l)?.[1] ?? l)
    expect(messages).toEqual([
      "ready to serve client requests",
      "serving client traffic insecurely; this is strongly discouraged!",
      "server stopped"
    ])
    expect(p.stderr).toContain(`address=http://127.0.0.1:${p.port}\n`)
    // the client learns of the end from the socket, after the exit: wait for it
    while (w.error === undefined && !w.ended) await sleep(10)
    expect(w.error?.code).toBe(14)
    w.close()

    const again = await start({ dataDir, port: p.port })
    const kv2 = rawClient("KV", again.endpoint)
    const cluster2 = rawClient("Cluster", again.endpoint)
    const m2 = rawClient("Maintenance", again.endpoint)
    try {
      expect((await call(kv2, "Range", { key: b("kept") })).kvs[0].value.toString()).toBe("yes")
      const after = await call(cluster2, "MemberList", {})
      expect(after.members[0].ID).toBe(before.members[0].ID)
      expect(after.header.cluster_id).toBe(before.header.cluster_id)
      const status2 = await call(m2, "Status", {})
      expect(BigInt(status2.raftTerm)).toBe(BigInt(status1.raftTerm) + 1n)
    } finally {
      kv2.close()
      cluster2.close()
      m2.close()
      expect(await again.kill("SIGINT")).toBe(0)
    }
  })

  it("takes etcd's flags (a single member's cluster flags too) and their ETCD_* variables; the data dir defaults to <name>.etcd", async () => {
    const cwd = dir()
    const port = await freePort()
    const p = await start({
      dataDir: undefined,
      cwd,
      port,
      args: [
        "--advertise-client-urls",
        "http://advertised.example:2379",
        "--auto-compaction-mode=revision",
        // a single-member etcd command line's cluster flags (nothing listens on the peer URL)
        "--listen-peer-urls=http://127.0.0.1:2380",
        "--initial-cluster-token=tkn",
        "--initial-cluster-state=new"
      ],
      env: {
        ETCD_NAME: "from-env",
        ETCD_AUTO_COMPACTION_RETENTION: "10",
        ETCD_MAX_REQUEST_BYTES: "4096",
        ETCD_INITIAL_CLUSTER: "from-env=http://localhost:2380"
      }
    })
    const cluster = rawClient("Cluster", p.endpoint)
    const kv = rawClient("KV", p.endpoint)
    try {
      const list = await call(cluster, "MemberList", {})
      expect(list.members[0].name).toBe("from-env")
      expect(list.members[0].clientURLs).toEqual(["http://advertised.example:2379"])
      // etcd's default --initial-advertise-peer-urls
      expect(list.members[0].peerURLs).toEqual(["http://localhost:2380"])
      const big = await unaryCall(kv, "Put", { key: b("big"), value: Buffer.alloc(5000) })
      expect(big).toEqual({ ok: false, code: 3, details: "etcdserver: request is too large" })
    } finally {
      cluster.close()
      kv.close()
      await p.kill("SIGTERM")
    }
    expect(fs.existsSync(path.join(cwd, "from-env.etcd", "member"))).toBe(true)
  })

  it("start-up errors: one line on stderr, exit code 1 (port in use, locked data dir, bad flag values)", async () => {
    // (the other start-up checks run in-process in serve-errors.test.ts; these cover the program's
    // plumbing: store and server errors, and the command line's parse errors, as etcd words them)
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()))
    const busyPort = (blocker.address() as net.AddressInfo).port
    const held = dir()
    const owner = await start({ dataDir: held })
    // two at a time: each is a whole Node start-up on a 2-core machine
    const [inUse, locked] = await Promise.all([failing([], { port: busyPort }), failing([], { dataDir: held })])
    const [badDuration, badInt] = await Promise.all([
      failing(["--experimental-watch-progress-notify-interval", "10x"]),
      failing(["--max-request-bytes", "lots"])
    ])
    const [badMode, unknownFlag] = await Promise.all([
      failing(["--auto-compaction-mode", "weird"]),
      failing(["--quota-backend-byte", "1"])
    ])
    // Node 20's recursive mkdir loops for ever (signals included) on a path /proc refuses
    const proc = await failing([], { dataDir: "/proc/etcd-effect-test" })
    blocker.close()
    await owner.kill("SIGTERM")
    expect(inUse.code).toBe(1)
    expect(inUse.stderr).toBe(`etcd-effect: listen tcp 127.0.0.1:${busyPort}: bind: address already in use\n`)
    expect(locked.code).toBe(1)
    expect(locked.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(locked.stderr).toMatch(/^etcd-effect: .*(lock|in use|held)/i)
    expect(badDuration).toMatchObject({
      code: 1,
      stderr: 'Error: invalid value "10x" for flag --experimental-watch-progress-notify-interval: parse error\n'
    })
    expect(badInt).toMatchObject({
      code: 1,
      stderr: 'Error: invalid value "lots" for flag --max-request-bytes: parse error\n'
    })
    expect(badMode).toMatchObject({ code: 1, stderr: 'Error: unknown auto-compaction-mode "weird"\n' })
    expect(unknownFlag).toMatchObject({ code: 1, stderr: "Error: unknown flag: --quota-backend-byte\n" })
    expect(proc).toMatchObject({
      code: 1,
      stderr: "etcd-effect: data dir /proc/etcd-effect-test is not accessible: ENOENT (no such file or directory)\n"
    })
  })
})

describe("etcdEffectTarget (for the client suites)", () => {
  it("starts, crash-restarts keeping data and port, and disposes", async () => {
    const { etcdEffectTarget } = await import("./support/etcd-effect-target.js")
    const server = await etcdEffectTarget.start()
    const kv = rawClient("KV", server.endpoint)
    try {
      await call(kv, "Put", { key: b("survives"), value: b("1") })
      await server.restart(50)
      const kv2 = rawClient("KV", server.endpoint)
      try {
        expect((await call(kv2, "Range", { key: b("survives") })).kvs[0].value.toString()).toBe("1")
      } finally {
        kv2.close()
      }
    } finally {
      kv.close()
      await server.dispose()
    }
  })
})
