/**
 * The Lease, Maintenance and Cluster services over raw gRPC.
 */
import type * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import { readBolt } from "../../src/backend/bbolt/index.js"
import { API_VERSION } from "../../src/server/index.js"
import { call, type InProcessServer, rawClient, sleep, startInProcess, unaryCall } from "./support/in-process.js"

const b = (s: string) => Buffer.from(s)

describe("Lease service", () => {
  let srv: InProcessServer
  let kv: ReturnType<typeof rawClient>
  let lease: ReturnType<typeof rawClient>
  beforeAll(async () => {
    srv = await startInProcess()
    kv = rawClient("KV", srv.endpoint)
    lease = rawClient("Lease", srv.endpoint)
  })
  afterAll(async () => {
    kv.close()
    lease.close()
    await srv.close()
  })

  it("grants, lists, reports time to live with keys, and revokes with the keys", async () => {
    // the leases other tests of this server granted (in a shuffled run, some come first)
    const others = (await call(lease, "LeaseLeases", {})).leases.map((l: any) => l.ID)
    const g = await call(lease, "LeaseGrant", { TTL: 60 })
    expect(g.TTL).toBe("60")
    expect(BigInt(g.ID)).toBeGreaterThan(0n)
    expect(g.header.member_id).toBe(srv.server.memberId.toString())
    const mine = await call(lease, "LeaseGrant", { TTL: 30, ID: 4242 })
    expect(mine.ID).toBe("4242")
    const dup = await unaryCall(lease, "LeaseGrant", { TTL: 30, ID: 4242 })
    expect(dup).toEqual({ ok: false, code: 9, details: "etcdserver: lease already exists" })

    await call(kv, "Put", { key: b("lk/2"), value: b("x"), lease: g.ID })
    await call(kv, "Put", { key: b("lk/1"), value: b("y"), lease: g.ID })
    const ttl = await call(lease, "LeaseTimeToLive", { ID: g.ID, keys: true })
    expect(ttl.grantedTTL).toBe("60")
    expect(Number(ttl.TTL)).toBeGreaterThan(55)
    expect(ttl.keys.map((k: Buffer) => k.toString())).toEqual(["lk/1", "lk/2"])
    const list = await call(lease, "LeaseLeases", {})
    expect(list.leases.map((l: any) => l.ID).sort()).toEqual([...others, g.ID, "4242"].sort())

    const rev = await call(lease, "LeaseRevoke", { ID: g.ID })
    expect(Number(rev.header.revision)).toBeGreaterThan(0)
    const gone = await call(kv, "Range", { key: b("lk/"), range_end: b("lk0") })
    expect(gone.count).toBe("0")
    const again = await unaryCall(lease, "LeaseRevoke", { ID: g.ID })
    expect(again).toEqual({ ok: false, code: 5, details: "etcdserver: requested lease not found" })
    const unknown = await call(lease, "LeaseTimeToLive", { ID: g.ID })
    expect(unknown.TTL).toBe("-1")
  })

  it("keep-alive stream: renews in order, TTL 0 for a missing lease, half-close ends it with OK", async () => {
    const g = await call(lease, "LeaseGrant", { TTL: 20 })
    const stream: grpc.ClientDuplexStream<any, any> = lease.LeaseKeepAlive()
    const got: Array<any> = []
    let status: grpc.StatusObject | undefined
    stream.on("data", (r) => got.push(r))
    stream.on("status", (s) => {
      status = s
    })
    stream.on("error", () => {})
    stream.write({ ID: g.ID })
    stream.write({ ID: "999999" })
    stream.write({ ID: g.ID })
    stream.end()
    const deadline = Date.now() + 5000
    while (status === undefined && Date.now() < deadline) await sleep(5)
    expect(status?.code).toBe(0)
    expect(got.map((r) => [r.ID, r.TTL])).toEqual([
      [g.ID, "20"],
      ["999999", "0"],
      [g.ID, "20"]
    ])
    for (const r of got) expect(r.header.member_id).toBe(srv.server.memberId.toString())
  })
})

describe("Maintenance and Cluster services", () => {
  let srv: InProcessServer
  let kv: ReturnType<typeof rawClient>
  let m: ReturnType<typeof rawClient>
  beforeAll(async () => {
    srv = await startInProcess({ name: "node-a" })
    kv = rawClient("KV", srv.endpoint)
    m = rawClient("Maintenance", srv.endpoint)
  })
  afterAll(async () => {
    kv.close()
    m.close()
    await srv.close()
  })

  it("Status: our API version, this member as leader, term, sizes", async () => {
    await call(kv, "Put", { key: b("a"), value: b("1") })
    const s = await call(m, "Status", {})
    expect(s.version).toBe(API_VERSION)
    expect(s.leader).toBe(srv.server.memberId.toString())
    expect(s.header.member_id).toBe(s.leader)
    expect(s.raftTerm).toBe("2")
    expect(s.raftIndex).toBe(s.header.revision)
    expect(Number(s.dbSize)).toBeGreaterThan(0)
    expect(s.isLearner).toBe(false)
    expect(s.errors).toEqual([])
  })

  it("MemberList: this member with its name and client URL", async () => {
    const cluster = rawClient("Cluster", srv.endpoint)
    try {
      const r = await call(cluster, "MemberList", {})
      expect(r.members).toHaveLength(1)
      expect(r.members[0]).toMatchObject({
        ID: srv.server.memberId.toString(),
        name: "node-a",
        clientURLs: [`http://${srv.endpoint}`],
        isLearner: false
      })
      expect(r.header.cluster_id).toBe(srv.server.clusterId.toString())
    } finally {
      cluster.close()
    }
  })

  it("Alarm: none; Defragment: ok; Hash: stable, changes with the data; HashKV: checks revisions", async () => {
    expect((await call(m, "Alarm", { action: 0 })).alarms).toEqual([])
    await call(m, "Defragment", {})
    const h1 = await call(m, "Hash", {})
    const h2 = await call(m, "Hash", {})
    expect(h1.hash).toBe(h2.hash)
    await call(kv, "Put", { key: b("b"), value: b("2") })
    const h3 = await call(m, "Hash", {})
    expect(h3.hash).not.toBe(h1.hash)
    const kvh = await call(m, "HashKV", { revision: 0 })
    expect(kvh.compact_revision).toBe("-1")
    expect(kvh.header.revision).toBe(h3.header.revision)
    const future = await unaryCall(m, "HashKV", { revision: 10_000 })
    expect(future).toEqual({ ok: false, code: 11, details: "etcdserver: mvcc: required revision is a future revision" })
  })

  it("Snapshot: a consistent copy of the backend as etcd's bbolt file in pieces, ending with its sha256", async () => {
    await call(kv, "Put", { key: b("snap-key"), value: b("snap-value") })
    const stream: grpc.ClientReadableStream<any> = m.Snapshot({})
    const pieces: Array<any> = []
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (p) => pieces.push(p))
      stream.on("end", () => resolve())
      stream.on("error", reject)
    })
    expect(pieces.length).toBeGreaterThan(0)
    expect(pieces[pieces.length - 1].remaining_bytes).toBe("0")
    const data = Buffer.concat(pieces.map((p) => p.blob))
    for (const p of pieces) expect(p.blob.length).toBeLessThanOrEqual(32 * 1024)
    // etcd's stream: the bbolt database, then its sha256
    const db = data.subarray(0, data.length - 32)
    expect(
      createHash("sha256")
        .update(db)
        .digest()
        .equals(data.subarray(data.length - 32))
    ).toBe(true)
    const keyEntries = readBolt(db).buckets.find((x) => x.name.toString() === "key")!.entries
    expect(keyEntries.some(([, v]) => Buffer.from(v).includes(b("snap-value")))).toBe(true)
  })
})
