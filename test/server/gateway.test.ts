/**
 * The JSON gateway and etcd's HTTP endpoints on the client port, against a real etcd 3.4.23:
 * the same requests (curl's, through fetch) to both, and the same status, Content-Type, forwarded
 * gRPC metadata header, Trailer header and body back — after masking what differs by nature: cluster and member ids, raft term and index, the
 * version, db sizes, hashes, peer URLs and a live lease's remaining TTL. Every gateway path is
 * covered, with the errors a client can cause (bad JSON, wrong types, bad base64, unknown enum
 * names, key not provided, lease not found, compacted and future revisions, unknown paths and
 * methods); unknown fields are ignored by both.
 *
 * The watch stream is compared the same way, line by line as the lines arrive (curl -N): created,
 * events from puts, cancel from a second request in the body, a compacted start revision, a bad
 * first request; closing the connection cancels the watch on our side.
 */
import * as Http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { eventually, type InProcessServer, startInProcess } from "./support/in-process.js"

interface Reply {
  readonly status: number
  readonly contentType: string | null
  /** the gRPC call's header and trailer metadata grpc-gateway forwards */
  readonly grpcMetadata: string | null
  readonly trailer: string | null
  readonly body: string
}

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** One request on its own connection, as one curl invocation sends it. */
const request = (
  base: string,
  path: string,
  body: string | undefined,
  method = "POST",
  headers: Record<string, string> = {}
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = Http.request(`${base}${path}`, { method, agent: false, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("error", reject)
      res.on("end", () => {
        const header = (name: string) => {
          const v = res.headers[name]
          return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v
        }
        resolve({
          status: res.statusCode ?? 0,
          contentType: header("content-type"),
          grpcMetadata: header("grpc-metadata-content-type"),
          trailer: header("trailer"),
          body: Buffer.concat(chunks).toString("utf8")
        })
      })
    })
    req.on("error", reject)
    req.end(body)
  })

/** Masks what legitimately differs between two members (see the module comment). */
const normalize = (path: string, reply: Reply): unknown => {
  if (!reply.contentType?.startsWith("application/json") || reply.body === "") return reply
  const json = JSON.parse(reply.body) as Record<string, any>
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk)
    if (typeof v !== "object" || v === null) return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      out[k] = ["cluster_id", "member_id", "raft_term"].includes(k) ? "<masked>" : walk(x)
    }
    return out
  }
  const body = walk(json) as Record<string, any>
  if (path.endsWith("maintenance/status")) {
    for (const k of ["version", "dbSize", "dbSizeInUse", "leader", "raftIndex", "raftTerm", "raftAppliedIndex"]) {
      if (k in body) body[k] = "<masked>"
    }
  }
  if (path.endsWith("maintenance/hash") && "hash" in body) body["hash"] = "<masked>"
  if (path.endsWith("auth/authenticate") && typeof body["token"] === "string") body["token"] = "<token>"
  if (path.endsWith("member/list")) {
    body["members"] = (body["members"] as Array<Record<string, unknown>>).map((m) => ({
      ...m,
      ID: "<masked>",
      peerURLs: "<masked>",
      clientURLs: "<masked>"
    }))
  }
  if (path.endsWith("lease/timetolive") && Number(body["TTL"]) > 0) body["TTL"] = "<positive>"
  if (path.endsWith("lease/leases") && Array.isArray(body["leases"])) {
    body["leases"] = [...body["leases"]].sort((a, b) => (BigInt(a.ID) < BigInt(b.ID) ? -1 : 1))
  }
  return { ...reply, body }
}

/** A watch over the gateway: the response's lines as they arrive. */
class GatewayWatch {
  private readonly abort = new AbortController()
  private buffered = ""
  readonly lines: Array<string> = []
  status = 0
  ended = false
  private readonly done: Promise<void>

  constructor(base: string, body: string) {
    this.done = (async () => {
      try {
        const res = await fetch(`${base}/v3/watch`, { method: "POST", body, signal: this.abort.signal })
        this.status = res.status
        const reader = res.body!.getReader()
        const decoder = new TextDecoder()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          this.buffered += decoder.decode(value, { stream: true })
          let nl: number
          while ((nl = this.buffered.indexOf("\n")) >= 0) {
            this.lines.push(this.buffered.slice(0, nl))
            this.buffered = this.buffered.slice(nl + 1)
          }
        }
        if (this.buffered !== "") this.lines.push(this.buffered)
      } catch {
        // aborted
      } finally {
        this.ended = true
      }
    })()
  }

  /** The first `n` lines, once they have arrived. */
  async take(n: number): Promise<Array<unknown>> {
    await eventually(() => this.lines.length >= n || this.ended, 10_000, `${n} watch lines`)
    return this.lines
      .slice(0, n)
      .map((l) =>
        normalize("watch", { status: 200, contentType: "application/json", grpcMetadata: null, trailer: null, body: l })
      )
  }

  async close(): Promise<void> {
    this.abort.abort()
    await this.done
  }
}

describe.skipIf(skipEtcd)("JSON gateway: ours vs etcd 3.4", () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  const bases: Array<string> = []

  beforeAll(async () => {
    const [e, o] = await Promise.all([EtcdProcess.start(), startInProcess({ name: "test" })])
    etcd = e
    ours = o
    bases.push(etcd.clientUrl, `http://${ours.endpoint}`)
  }, 60_000)

  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  /** Sends the request to both and compares the normalized replies. */
  const same = async (path: string, body: string | undefined, method = "POST"): Promise<unknown> => {
    const [theirs, mine] = await Promise.all(bases.map((b) => request(b, path, body, method)))
    const expected = normalize(path, theirs!)
    const what = `${method} ${path} ${(body ?? "").slice(0, 200)}\n${mine!.body.slice(0, 300)}`
    expect(normalize(path, mine!), what).toEqual(expected)
    return expected
  }

  it("KV: range, put, deleterange, txn and their errors", async () => {
    await same("/v3/kv/put", JSON.stringify({ key: b64("foo"), value: b64("bar") }))
    await same("/v3/kv/put", JSON.stringify({ key: b64("foo/a"), value: b64("1"), prev_kv: true }))
    await same("/v3/kv/put", JSON.stringify({ key: b64("foo/b"), value: b64("2"), prevKv: true }))
    await same("/v3/kv/range", JSON.stringify({ key: b64("foo") }))
    await same("/v3/kv/range", JSON.stringify({ key: b64("foo/"), range_end: b64("foo0") }))
    await same(
      "/v3/kv/range",
      JSON.stringify({ key: b64("foo/"), range_end: b64("foo0"), limit: 1, sort_order: "DESCEND" })
    )
    await same("/v3/kv/range", JSON.stringify({ key: b64("foo/"), range_end: b64("foo0"), count_only: true }))
    await same(
      "/v3/kv/range",
      JSON.stringify({ key: b64("foo/"), rangeEnd: b64("foo0"), keysOnly: true, revision: "2" })
    )
    await same("/v3/kv/range", JSON.stringify({ key: b64("nope") }))
    await same("/v3/kv/range", `{"key":"${b64("foo")}","limit":"5","unknown_field":{"x":[1,2]}}`)
    // bad input
    await same("/v3/kv/range", `{"key":"Zm9v",`)
    await same("/v3/kv/range", `{"key" "Zm9v"}`)
    await same("/v3/kv/range", `{"key":"Zm9v"]`)
    await same("/v3/kv/range", `[1]`)
    await same("/v3/kv/range", `"x"`)
    await same("/v3/kv/range", `{"key":5}`)
    await same("/v3/kv/range", `{"key":"YQ"}`)
    await same("/v3/kv/range", `{"key":"Y!=="}`)
    await same("/v3/kv/range", `{"key":"YQ=="," limit":1,"limit":"x"}`)
    await same("/v3/kv/range", `{"key":"YQ==","limit":1.5}`)
    await same("/v3/kv/range", `{"key":"YQ==","limit":"99999999999999999999"}`)
    await same("/v3/kv/range", `{"key":"YQ==","limit":true}`)
    await same("/v3/kv/range", `{"key":"YQ==","count_only":"true"}`)
    await same("/v3/kv/range", `{"key":"YQ==","sort_order":"BOGUS"}`)
    await same("/v3/kv/range", `{"key":"YQ==","sort_order":true}`)
    // encoding/json's nesting limit (10000), also inside a field nobody reads
    await same("/v3/kv/range", `{"key":"YQ==","x":${"[".repeat(10001)}${"]".repeat(10001)}}`)
    await same("/v3/kv/range", `{"key":"YQ==","x":${"[".repeat(9999)}${"]".repeat(9999)}}`)
    await same("/v3/kv/range", `{}`)
    await same("/v3/kv/range", `null`)
    await same("/v3/kv/range", ``)
    await same("/v3/kv/put", JSON.stringify({ key: b64("foo"), value: b64("x"), lease: "123" }))
    await same("/v3/kv/put", JSON.stringify({ value: b64("x") }))
    // over --max-request-bytes (etcd's check), and over the gRPC message limit (+512 KiB)
    await same(
      "/v3/kv/put",
      JSON.stringify({ key: b64("big"), value: Buffer.alloc(1_800_000, 120).toString("base64") })
    )
    await same(
      "/v3/kv/put",
      JSON.stringify({ key: b64("big"), value: Buffer.alloc(3_000_000, 120).toString("base64") })
    )
    // txn: compares by name and by number, nested txn, errors
    await same(
      "/v3/kv/txn",
      JSON.stringify({
        compare: [{ key: b64("foo"), result: "EQUAL", target: "VALUE", value: b64("bar") }],
        success: [{ request_put: { key: b64("foo"), value: b64("baz") } }, { request_range: { key: b64("foo") } }],
        failure: [{ request_delete_range: { key: b64("foo") } }]
      })
    )
    await same(
      "/v3/kv/txn",
      JSON.stringify({
        compare: [{ key: b64("foo"), result: "GREATER", target: "MOD", mod_revision: "100" }],
        success: [],
        failure: [{ request_txn: { success: [{ request_range: { key: b64("foo/a") } }] } }]
      })
    )
    await same(
      "/v3/kv/txn",
      JSON.stringify({ compare: [{ key: b64("foo"), result: 3, target: "VERSION", version: 1 }] })
    )
    await same("/v3/kv/txn", `{"compare":[{"key":"Zm9v","result":"BOGUS"}]}`)
    await same("/v3/kv/txn", `{"success":{}}`)
    await same("/v3/kv/txn", `{"success":[{"request_put":[]}]}`)
    await same("/v3/kv/deleterange", JSON.stringify({ key: b64("foo/"), range_end: b64("foo0"), prev_kv: true }))
    await same("/v3/kv/deleterange", JSON.stringify({ key: b64("foo/a") }))
    // /v3beta is etcd 3.3's prefix; 3.4 no longer serves /v3alpha
    await same("/v3beta/kv/range", JSON.stringify({ key: b64("foo") }))
    await same("/v3alpha/kv/range", JSON.stringify({ key: b64("foo") }))
  })

  it("Lease: grant, timetolive, leases, keepalive, revoke (and the /v3/kv/lease aliases)", async () => {
    await same("/v3/lease/grant", JSON.stringify({ ID: "1000", TTL: "60" }))
    await same("/v3/lease/grant", JSON.stringify({ ID: 2000, TTL: 60 }))
    await same("/v3/lease/grant", JSON.stringify({ ID: "1000", TTL: "60" }))
    await same("/v3/kv/put", JSON.stringify({ key: b64("leased"), value: b64("v"), lease: "1000" }))
    await same("/v3/lease/timetolive", JSON.stringify({ ID: "1000", keys: true }))
    await same("/v3/kv/lease/timetolive", JSON.stringify({ ID: "1000" }))
    await same("/v3/lease/leases", "{}")
    await same("/v3/kv/lease/leases", "{}")
    await same("/v3/lease/keepalive", JSON.stringify({ ID: "1000" }))
    await same("/v3/lease/keepalive", JSON.stringify({ ID: "999" }))
    await same("/v3/lease/keepalive", "")
    await same("/v3/lease/keepalive", `{"ID":true}`)
    await same("/v3/lease/revoke", JSON.stringify({ ID: "1000" }))
    await same("/v3/kv/lease/revoke", JSON.stringify({ ID: "1000" }))
    await same("/v3/lease/timetolive", JSON.stringify({ ID: "1000" }))
    await same("/v3/kv/range", JSON.stringify({ key: b64("leased") }))
    await same("/v3/lease/revoke", JSON.stringify({ ID: "2000" }))
    await same("/v3/lease/leases", "{}")
  })

  it("compaction, maintenance and cluster", async () => {
    await same("/v3/kv/compaction", JSON.stringify({ revision: "1000" }))
    await same("/v3/kv/compaction", JSON.stringify({ revision: "3" }))
    await same("/v3/kv/compaction", JSON.stringify({ revision: "2" }))
    await same("/v3/kv/range", JSON.stringify({ key: b64("foo"), revision: "2" }))
    await same("/v3/maintenance/status", "{}")
    await same("/v3/maintenance/hash", "{}")
    await same("/v3/maintenance/defragment", "{}")
    // etcd 3.4 answers Alarm without a header; ours has one (as the gRPC server always had)
    expect((await request(bases[1]!, "/v3/maintenance/alarm", "{}")).status).toBe(200)
    await same("/v3/cluster/member/list", "{}")
  })

  it("paths and methods outside the API, CORS", async () => {
    await same("/v3/kv/nope", "{}")
    await same("/v3/kv/range", undefined, "GET")
    await same("/nothing", undefined, "GET")
    const [theirs, mine] = await Promise.all(bases.map((b) => fetch(`${b}/v3/kv/range`, { method: "OPTIONS" })))
    expect(mine!.status).toBe(theirs!.status)
    for (const h of ["access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers"]) {
      expect(mine!.headers.get(h), h).toBe(theirs!.headers.get(h))
    }
    // /version: etcd's shape, our versions
    const version = await request(bases[1]!, "/version", undefined, "GET")
    expect(version.status).toBe(200)
    expect(version.contentType).toBe("application/json")
    expect(JSON.parse(version.body)).toEqual({ etcdserver: "3.5.24", etcdcluster: "3.5.0" })
    expect(Object.keys(JSON.parse((await request(bases[0]!, "/version", undefined, "GET")).body))).toEqual([
      "etcdserver",
      "etcdcluster"
    ])
  })

  it("watch: created, events as they happen, cancel, compacted start, bad first request", async () => {
    const key = b64("w")
    const rev = async () => {
      const r = await request(bases[1]!, "/v3/kv/range", JSON.stringify({ key }))
      return Number(JSON.parse(r.body).header.revision)
    }
    const watches = bases.map((b) => new GatewayWatch(b, JSON.stringify({ create_request: { key, prev_kv: true } })))
    try {
      const created = await Promise.all(watches.map((w) => w.take(1)))
      expect(created[1]).toEqual(created[0])
      expect(watches[1]!.status).toBe(200)
      await same("/v3/kv/put", JSON.stringify({ key, value: b64("1") }))
      const afterPut = await Promise.all(watches.map((w) => w.take(2)))
      expect(afterPut[1]).toEqual(afterPut[0])
      await same("/v3/kv/put", JSON.stringify({ key, value: b64("2") }))
      await same("/v3/kv/deleterange", JSON.stringify({ key }))
      const all = await Promise.all(watches.map((w) => w.take(4)))
      expect(all[1]).toEqual(all[0])
      expect(JSON.stringify(all[1]![3])).toContain('"type":"DELETE"')
    } finally {
      await Promise.all(watches.map((w) => w.close()))
    }
    // the closed connection cancelled the stream on our side
    await eventually(() => ours.server.calls().streams === 0, 5000, "the watch stream to end")

    // several requests in one body: create, then cancel it; create, then ask for progress
    for (const second of [`{"cancel_request":{"watch_id":"0"}}`, `{"progress_request":{}}`]) {
      const both = bases.map((b) => new GatewayWatch(b, `{"create_request":{"key":"${key}"}}\n${second}`))
      try {
        const lines = await Promise.all(both.map((w) => w.take(2)))
        expect(lines[1], second).toEqual(lines[0])
      } finally {
        await Promise.all(both.map((w) => w.close()))
      }
    }

    // a start revision already compacted: canceled with the compact revision
    const old = bases.map(
      (b) => new GatewayWatch(b, JSON.stringify({ create_request: { key, start_revision: "2", filters: ["NOPUT"] } }))
    )
    try {
      const lines = await Promise.all(old.map((w) => w.take(2)))
      expect(lines[1]).toEqual(lines[0])
    } finally {
      await Promise.all(old.map((w) => w.close()))
    }

    // a bad first request: the gateway's error (HTTP 500, code Unknown), no stream
    await same("/v3/watch", `{"create_request":{"key":5}}`)
    await same("/v3/watch", `{"create_request":{"key":"${key}","filters":["BAD"]}}`)
    await same("/v3/watch", `{"create_request":`)
    expect(await rev()).toBeGreaterThan(3)
  })
  it("auth: users, roles, grants, enable, authenticate, calls with the Authorization header, disable", async () => {
    for (const [path, body] of [
      ["/v3/auth/user/add", { name: "root", password: "rootpw" }],
      ["/v3/auth/user/add", { name: "alice", password: "alicepw" }],
      ["/v3/auth/user/add", { name: "alice", password: "again" }],
      ["/v3/auth/role/add", { name: "root" }],
      ["/v3/auth/role/add", { name: "app" }],
      [
        "/v3/auth/role/grant",
        { name: "app", perm: { permType: "READWRITE", key: b64("/app/"), range_end: b64("/app0") } }
      ],
      ["/v3/auth/user/grant", { user: "root", role: "root" }],
      ["/v3/auth/user/grant", { user: "alice", role: "app" }],
      ["/v3/auth/user/grant", { user: "nobody", role: "app" }],
      ["/v3/auth/user/get", { name: "alice" }],
      ["/v3/auth/role/get", { role: "app" }],
      ["/v3/auth/user/list", {}],
      ["/v3/auth/role/list", {}],
      ["/v3/auth/enable", {}]
    ] as const) {
      await same(path, JSON.stringify(body))
    }
    try {
      // no token: refused; a wrong password: refused; then each server's own token
      await same("/v3/kv/put", JSON.stringify({ key: b64("/app/x"), value: b64("1") }))
      await same("/v3/auth/authenticate", JSON.stringify({ name: "alice", password: "wrong" }))
      const tokens = await Promise.all(
        bases.map(
          async (b) =>
            JSON.parse(
              (await request(b, "/v3/auth/authenticate", JSON.stringify({ name: "alice", password: "alicepw" }))).body
            ).token as string
        )
      )
      const asAlice = async (path: string, body: unknown) => {
        const [theirs, mine] = await Promise.all(
          bases.map((b, i) => request(b, path, JSON.stringify(body), "POST", { authorization: tokens[i]! }))
        )
        expect(normalize(path, mine!), `${path} as alice`).toEqual(normalize(path, theirs!))
      }
      await asAlice("/v3/kv/put", { key: b64("/app/x"), value: b64("1") })
      await asAlice("/v3/kv/range", { key: b64("/app/x") })
      await asAlice("/v3/kv/put", { key: b64("/other"), value: b64("1") })
      await asAlice("/v3/auth/user/list", {})
      await asAlice("/v3/auth/disable", {})
      const [theirs, mine] = await Promise.all(
        bases.map((b) => request(b, "/v3/kv/put", "{}", "POST", { authorization: "not-a-token" }))
      )
      expect(normalize("/v3/kv/put", mine!)).toEqual(normalize("/v3/kv/put", theirs!))
    } finally {
      const roots = await Promise.all(
        bases.map(
          async (b) =>
            JSON.parse(
              (await request(b, "/v3/auth/authenticate", JSON.stringify({ name: "root", password: "rootpw" }))).body
            ).token as string
        )
      )
      await Promise.all(bases.map((b, i) => request(b, "/v3/auth/disable", "{}", "POST", { authorization: roots[i]! })))
    }
    // auth is off again on both: plain calls work
    await same("/v3/kv/range", JSON.stringify({ key: b64("/app/x") }))
  })
})
