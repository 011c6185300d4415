/**
 * The KV service over raw gRPC (no client library): message conversion, headers on every
 * response, etcd's error codes and texts, and the rpcs the server does not serve.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type InProcessServer, rawClient, startInProcess, unaryCall } from "./support/in-process.js"

const b = (s: string) => Buffer.from(s)
const text = (x: Buffer) => x.toString()

describe("KV service", () => {
  let srv: InProcessServer
  let kv: ReturnType<typeof rawClient>
  beforeAll(async () => {
    srv = await startInProcess({ maxRequestBytes: 64 * 1024 })
    kv = rawClient("KV", srv.endpoint)
  })
  afterAll(async () => {
    kv.close()
    await srv.close()
  })

  it("puts and ranges, with cluster_id, member_id, revision and raft_term in every header", async () => {
    const put = await call(kv, "Put", { key: b("k1"), value: b("v1") })
    expect(put.header.cluster_id).toBe(srv.server.clusterId.toString())
    expect(put.header.member_id).toBe(srv.server.memberId.toString())
    expect(put.header.raft_term).toBe("2")
    const rev = Number(put.header.revision)
    expect(rev).toBeGreaterThan(1)
    const got = await call(kv, "Range", { key: b("k1") })
    expect(got.header.revision).toBe(String(rev))
    expect(got.header.member_id).toBe(srv.server.memberId.toString())
    expect(got.count).toBe("1")
    expect(got.kvs).toHaveLength(1)
    expect(text(got.kvs[0].key)).toBe("k1")
    expect(text(got.kvs[0].value)).toBe("v1")
    expect(got.kvs[0].create_revision).toBe(String(rev))
    expect(got.kvs[0].version).toBe("1")
    const missing = await call(kv, "Range", { key: b("nope") })
    expect(missing.kvs).toEqual([])
    expect(missing.count).toBe("0")
  })

  it("answers prev_kv on put and delete, and ranges with limit, sort and keys_only", async () => {
    for (const k of ["p/a", "p/b", "p/c"]) await call(kv, "Put", { key: b(k), value: b(k.toUpperCase()) })
    const again = await call(kv, "Put", { key: b("p/a"), value: b("A2"), prev_kv: true })
    expect(text(again.prev_kv.value)).toBe("P/A")
    const limited = await call(kv, "Range", {
      key: b("p/"),
      range_end: b("p0"),
      limit: 2,
      sort_order: 2,
      sort_target: 0,
      keys_only: true
    })
    expect(limited.kvs.map((x: any) => text(x.key))).toEqual(["p/c", "p/b"])
    expect(limited.more).toBe(true)
    expect(limited.count).toBe("3")
    expect(limited.kvs[0].value.length).toBe(0)
    const del = await call(kv, "DeleteRange", { key: b("p/"), range_end: b("p0"), prev_kv: true })
    expect(del.deleted).toBe("3")
    expect(del.prev_kvs.map((x: any) => text(x.value))).toEqual(["A2", "P/B", "P/C"])
  })

  it("maps store errors to etcd's gRPC codes and exact texts", async () => {
    const empty = await unaryCall(kv, "Put", { key: b(""), value: b("x") })
    expect(empty).toEqual({ ok: false, code: 3, details: "etcdserver: key is not provided" })

    const r1 = await call(kv, "Put", { key: b("c"), value: b("1") })
    await call(kv, "Put", { key: b("c"), value: b("2") })
    await call(kv, "Compact", { revision: r1.header.revision })
    const old = await unaryCall(kv, "Range", { key: b("c"), revision: Number(r1.header.revision) - 1 })
    expect(old).toEqual({ ok: false, code: 11, details: "etcdserver: mvcc: required revision has been compacted" })
    const again = await unaryCall(kv, "Compact", { revision: r1.header.revision })
    expect(again).toEqual({ ok: false, code: 11, details: "etcdserver: mvcc: required revision has been compacted" })
    const future = await unaryCall(kv, "Compact", { revision: 1_000_000 })
    expect(future).toEqual({ ok: false, code: 11, details: "etcdserver: mvcc: required revision is a future revision" })
    const futureRange = await unaryCall(kv, "Range", { key: b("c"), revision: 1_000_000 })
    expect(futureRange).toEqual({
      ok: false,
      code: 11,
      details: "etcdserver: mvcc: required revision is a future revision"
    })
    const badLease = await unaryCall(kv, "Put", { key: b("l"), value: b("x"), lease: "12345" })
    expect(badLease).toEqual({ ok: false, code: 5, details: "etcdserver: requested lease not found" })
  })

  it("physical compaction waits and then answers", async () => {
    const r = await call(kv, "Put", { key: b("phys"), value: b("1") })
    await call(kv, "Put", { key: b("phys"), value: b("2") })
    const res = await call(kv, "Compact", { revision: r.header.revision, physical: true })
    expect(Number(res.header.revision)).toBeGreaterThanOrEqual(Number(r.header.revision) + 1)
  })

  it("runs txns: compares from the matching oneof member, nested responses carry only their revision", async () => {
    const p = await call(kv, "Put", { key: b("t"), value: b("1") })
    const res = await call(kv, "Txn", {
      compare: [{ result: 0, target: 2, key: b("t"), mod_revision: p.header.revision }],
      success: [
        { request_put: { key: b("t"), value: b("2") } },
        { request_range: { key: b("t") } },
        { request_txn: { success: [{ request_range: { key: b("t") } }] } }
      ],
      failure: []
    })
    expect(res.succeeded).toBe(true)
    expect(res.header.member_id).toBe(srv.server.memberId.toString())
    expect(res.responses).toHaveLength(3)
    const [put, range, nested] = res.responses
    expect(put.response).toBe("response_put")
    expect(put.response_put.header).toEqual({
      cluster_id: "0",
      member_id: "0",
      revision: res.header.revision,
      raft_term: "0"
    })
    expect(text(range.response_range.kvs[0].value)).toBe("2")
    expect(nested.response_txn.succeeded).toBe(true)
    expect(text(nested.response_txn.responses[0].response_range.kvs[0].value)).toBe("2")

    // target VERSION with the mod_revision member set: Go's GetVersion() reads 0, so "version = 0" fails
    const mismatched = await call(kv, "Txn", {
      compare: [{ result: 0, target: 0, key: b("t"), mod_revision: 0 }],
      success: [],
      failure: [{ request_range: { key: b("t") } }]
    })
    expect(mismatched.succeeded).toBe(false)
  })

  it("rejects bad txns with etcd's errors", async () => {
    const emptyOp = await unaryCall(kv, "Txn", { compare: [], success: [{}], failure: [] })
    expect(emptyOp).toEqual({ ok: false, code: 3, details: "etcdserver: key not found" })
    const dup = await unaryCall(kv, "Txn", {
      success: [{ request_put: { key: b("d"), value: b("1") } }, { request_put: { key: b("d"), value: b("2") } }]
    })
    expect(dup).toEqual({ ok: false, code: 3, details: "etcdserver: duplicate key given in txn request" })
    const many = await unaryCall(kv, "Txn", {
      success: Array.from({ length: 129 }, (_, i) => ({ request_range: { key: b(`m${i}`) } }))
    })
    expect(many).toEqual({ ok: false, code: 3, details: "etcdserver: too many operations in txn request" })
  })

  it("refuses requests over max-request-bytes (store check) and over the gRPC limit", async () => {
    // its own key: in a shuffled run the test that writes k1 may come later, and counts its versions
    await call(kv, "Put", { key: b("k-served"), value: b("v") })
    const tooLarge = await unaryCall(kv, "Put", { key: b("big"), value: Buffer.alloc(70 * 1024) })
    expect(tooLarge).toEqual({ ok: false, code: 3, details: "etcdserver: request is too large" })
    const overGrpc = await unaryCall(kv, "Put", { key: b("big"), value: Buffer.alloc(64 * 1024 + 600 * 1024) })
    expect(overGrpc.ok).toBe(false)
    if (!overGrpc.ok) expect(overGrpc.code).toBe(8)
    // and still serves
    expect((await call(kv, "Range", { key: b("k-served") })).count).toBe("1")
  })

  it("ends a call whose deadline passed and keeps serving", async () => {
    await call(kv, "Put", { key: b("k-served"), value: b("v") })
    const r = await unaryCall(kv, "Range", { key: b("k-served") }, { deadline: Date.now() - 1 })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.code).toBe(4)
    expect((await call(kv, "Range", { key: b("k-served") })).count).toBe("1")
  })

  it("answers the rpcs it does not serve with a clear Unimplemented, and Authenticate as etcd with auth disabled", async () => {
    const cluster = rawClient("Cluster", srv.endpoint)
    const maintenance = rawClient("Maintenance", srv.endpoint)
    const auth = rawClient("Auth", srv.endpoint)
    try {
      const add = await unaryCall(cluster, "MemberAdd", { peerURLs: ["http://127.0.0.1:1"] })
      expect(add).toEqual({
        ok: false,
        code: 12,
        details: "etcd-effect: Cluster.MemberAdd is not implemented (one member)"
      })
      const move = await unaryCall(maintenance, "MoveLeader", { targetID: 1 })
      expect(move.ok === false && move.code).toBe(12)
      const userAdd = await unaryCall(auth, "UserAdd", { name: "u", password: "p" })
      expect(userAdd.ok).toBe(true)
      const authn = await unaryCall(auth, "Authenticate", { name: "u", password: "p" })
      expect(authn).toEqual({ ok: false, code: 9, details: "etcdserver: authentication is not enabled" })
      const status = await call(auth, "AuthStatus", {})
      expect(status.enabled).toBe(false)
    } finally {
      cluster.close()
      maintenance.close()
      auth.close()
    }
  })
})
