/**
 * etcd's own `grpc-proxy` (Debian's etcd 3.4 binary) in front of our server: etcdctl and our Effect
 * client work through it — KV, Txn, leases, `endpoint status`, and watches, which the proxy
 * coalesces onto one server-side watcher per key range.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { Chunk, Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ETCD_BIN, skipEtcd } from "../support/etcd.js"
import { freePort } from "../support/ports.js"
import { EventType } from "../../src/client/index.js"
import { withClient } from "../client/helpers.js"
import { CtlProcess, etcdctl, stopAll } from "./support/etcdctl.js"
import { eventually, startMember } from "./support/in-process.js"

describe.skipIf(skipEtcd)("etcd grpc-proxy 3.4 in front of etcd-effect", () => {
  let member: Awaited<ReturnType<typeof startMember>>
  let proxy: ChildProcess
  let proxyLog = ""
  let endpoint: string

  beforeAll(async () => {
    member = await startMember()
    const port = await freePort()
    endpoint = `127.0.0.1:${port}`
    proxy = spawn(ETCD_BIN, ["grpc-proxy", "start", `--endpoints=${member.endpoint}`, `--listen-addr=${endpoint}`], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    proxy.stdout!.on("data", (d) => (proxyLog += d))
    proxy.stderr!.on("data", (d) => (proxyLog += d))
    // the proxy serves once it has dialled us: a read through it answers
    await eventually(
      async () => (await etcdctl(endpoint, ["get", "x", "--dial-timeout", "500ms"])).code === 0,
      20_000,
      `grpc-proxy at ${endpoint}:\n${proxyLog}`
    )
  }, 60_000)
  afterAll(async () => {
    await stopAll()
    if (proxy !== undefined && proxy.exitCode === null) {
      const exited = new Promise((r) => proxy.once("exit", r))
      proxy.kill("SIGKILL")
      await exited
    }
    await member?.close()
  })

  it("KV and Txn through the proxy land in our store", async () => {
    expect((await etcdctl(endpoint, ["put", "/p/a", "1"])).stdout).toBe("OK\n")
    expect((await etcdctl(endpoint, ["put", "/p/b", "2"])).stdout).toBe("OK\n")
    // the same read through the proxy and directly
    const via = await etcdctl(endpoint, ["get", "/p/", "--prefix", "-w", "json"])
    const direct = await etcdctl(member.endpoint, ["get", "/p/", "--prefix", "-w", "json"])
    expect(JSON.parse(via.stdout).kvs).toEqual(JSON.parse(direct.stdout).kvs)
    const txn = await etcdctl(endpoint, ["txn"], 'value("/p/a") = "1"\n\nput /p/a 3\n\nput /p/a 4\n\n')
    expect(txn.stdout).toBe("SUCCESS\n\nOK\n")
    expect((await etcdctl(member.endpoint, ["get", "/p/a", "--print-value-only"])).stdout).toBe("3\n")
    expect((await etcdctl(endpoint, ["del", "/p/", "--prefix"])).stdout).toBe("2\n")
  })

  it("watchers of one key range share one watcher on our server, and all see every event in order", async () => {
    // the proxy keeps watches of its own on us (leader tracking): they stay as they are
    const own = member.watchable.watcherCount()
    const watchers = [0, 1, 2].map(() => new CtlProcess(endpoint, ["watch", "/w/", "--prefix"]))
    // each etcdctl registers with the proxy; the proxy holds one watch on us for the range
    await eventually(
      async () => {
        await etcdctl(endpoint, ["put", "/w/probe", "x"])
        return watchers.every((w) => w.stdout.includes("/w/probe"))
      },
      20_000,
      "every watcher registered"
    )
    expect(member.watchable.watcherCount()).toBe(own + 1)
    for (let i = 0; i < 5; i++) await etcdctl(member.endpoint, ["put", `/w/${i}`, `v${i}`])
    await etcdctl(member.endpoint, ["del", "/w/0"])
    const tail = [0, 1, 2, 3, 4].map((i) => `PUT\n/w/${i}\nv${i}\n`).join("") + "DELETE\n/w/0\n\n" // etcdctl prints the (empty) value of a delete
    for (const w of watchers) {
      await eventually(() => w.stdout.endsWith(tail), 10_000, `watch output ${JSON.stringify(w.stdout)}`)
      // after the probes (one or more, each printed once), exactly the events of our writes
      expect(w.stdout.replace(/^(PUT\n\/w\/probe\nx\n)+/, "")).toBe(tail)
    }
    await Promise.all(watchers.map((w) => w.stop()))
    // the last client gone, the proxy cancels the shared watcher on us
    await eventually(() => member.watchable.watcherCount() === own, 10_000, `watchers back to ${own}`)
  }, 60_000)

  it("leases through the proxy: grant, keep-alive, timetolive with keys, revoke", async () => {
    const granted = await etcdctl(endpoint, ["lease", "grant", "60"])
    const id = /^lease ([0-9a-f]+) granted with TTL\(60s\)$/.exec(granted.stdout.trim())?.[1]
    expect(id, granted.stdout + granted.stderr).toBeDefined()
    await etcdctl(endpoint, ["put", "/l/k", "v", "--lease", id!])
    expect((await etcdctl(endpoint, ["lease", "keep-alive", id!, "--once"])).stdout).toMatch(
      new RegExp(`lease ${id} keepalived with TTL\\(60\\)`)
    )
    expect((await etcdctl(endpoint, ["lease", "timetolive", id!, "--keys"])).stdout).toMatch(
      /attached keys\(\[\/l\/k\]\)/
    )
    expect((await etcdctl(endpoint, ["lease", "revoke", id!])).stdout).toBe(`lease ${id} revoked\n`)
    expect((await etcdctl(member.endpoint, ["get", "/l/k", "--count-only", "-w", "json"])).stdout).not.toMatch(
      /"count"/
    )
  })

  it("endpoint status through the proxy reports our member", async () => {
    const via = JSON.parse(
      (await etcdctl(endpoint, ["endpoint", "status", "-w", "json"])).stdout.replace(/:(\d{16,})/g, ':"$1"')
    )
    const direct = JSON.parse(
      (await etcdctl(member.endpoint, ["endpoint", "status", "-w", "json"])).stdout.replace(/:(\d{16,})/g, ':"$1"')
    )
    expect(via[0].Status.header.member_id).toBe(direct[0].Status.header.member_id)
    expect(via[0].Status.version).toBe(direct[0].Status.version)
    expect(via[0].Status.leader).toBe(direct[0].Status.leader)
  })

  it("our Effect client works through the proxy: KV and a watch from a revision", async () => {
    const before = member.watchable.watcherCount()
    const events = await withClient(endpoint, (etcd) =>
      Effect.gen(function* () {
        const { header } = yield* etcd.kv.put("/c/a", "1")
        yield* etcd.kv.put("/c/a", "2")
        yield* etcd.kv.delete("/c/a")
        const got = yield* etcd.kv.get("/c/", { prefix: true })
        expect(got.kvs).toEqual([])
        const responses = yield* etcd.watch("/c/", { prefix: true, startRevision: header.revision }).pipe(
          Stream.flatMap((r) => Stream.fromIterable(r.events)),
          Stream.take(3),
          Stream.runCollect
        )
        return Chunk.toArray(responses).map(
          (e) => `${e.type === EventType.PUT ? "PUT" : "DELETE"} ${e.kv.modRevision - header.revision}`
        )
      })
    )
    expect(events).toEqual(["PUT 0", "PUT 1", "DELETE 2"])
    // the proxy cancels its watcher on us after our client's cancel: leave the server as found
    // (the test above counts our server's watchers; in a shuffled run it may come next)
    await eventually(() => member.watchable.watcherCount() === before, 10_000, `watchers back to ${before}`)
  })
})
