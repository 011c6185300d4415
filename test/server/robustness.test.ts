/**
 * Hostile input: random bytes, truncated and bit-flipped messages, and well-formed messages with
 * extreme values, sent to every method of every service through a raw grpc-js client with
 * identity serializers. Every call must end with a status (any code) — never a hang, never a
 * crash — and afterwards the server must still serve reads, writes and watches.
 */
import * as grpc from "@grpc/grpc-js"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serviceDefinition, serviceNames } from "../../src/proto/load.js"
import { call, type InProcessServer, rawClient, startInProcess } from "./support/in-process.js"
import { RawWatch } from "./support/raw-watch.js"

const identity = (b: Buffer) => b

interface Method {
  readonly path: string
  readonly requestStream: boolean
  readonly responseStream: boolean
  readonly encode: (o: unknown) => Buffer
}

const methods: Array<Method> = serviceNames.flatMap((service) =>
  Object.values(serviceDefinition(service)).map((d) => ({
    path: d.path,
    requestStream: d.requestStream,
    responseStream: d.responseStream,
    encode: d.requestSerialize as (o: unknown) => Buffer
  }))
)

const I64_EXTREMES = ["9223372036854775807", "-9223372036854775808", "-1", "0", "1", "4294967296", "9007199254740993"]

/** Well-formed requests with values at the edges, for the methods where they matter. */
const extremeRequests = (i64: string, bytes: Buffer, n: number): Record<string, unknown> => ({
  "/etcdserverpb.KV/Range": {
    key: bytes,
    range_end: n % 2 === 0 ? Buffer.from([0]) : bytes,
    limit: i64,
    revision: i64,
    sort_order: n,
    sort_target: n,
    min_mod_revision: i64,
    max_create_revision: i64
  },
  "/etcdserverpb.KV/Put": {
    key: bytes,
    value: bytes,
    lease: i64,
    ignore_value: n % 2 === 0,
    ignore_lease: n % 3 === 0
  },
  "/etcdserverpb.KV/DeleteRange": { key: bytes, range_end: Buffer.from([0]), prev_kv: true },
  "/etcdserverpb.KV/Txn": {
    compare: [{ key: bytes, target: n, result: n, mod_revision: i64 }],
    success: [{}, { request_put: { key: bytes, lease: i64 } }],
    failure: [{ request_txn: { success: [{ request_range: { key: bytes, revision: i64 } }] } }]
  },
  "/etcdserverpb.KV/Compact": { revision: i64, physical: n % 2 === 0 },
  "/etcdserverpb.Watch/Watch": {
    create_request: {
      key: bytes,
      range_end: bytes,
      start_revision: i64,
      watch_id: i64,
      filters: [n, 0, 1],
      fragment: true
    }
  },
  "/etcdserverpb.Lease/LeaseGrant": { TTL: i64, ID: i64 },
  "/etcdserverpb.Lease/LeaseRevoke": { ID: i64 },
  "/etcdserverpb.Lease/LeaseKeepAlive": { ID: i64 },
  "/etcdserverpb.Lease/LeaseTimeToLive": { ID: i64, keys: true },
  "/etcdserverpb.Maintenance/HashKV": { revision: i64 },
  "/etcdserverpb.Maintenance/Alarm": { action: n, memberID: i64, alarm: n }
})

type Payload = { readonly method: number; readonly bytes: Buffer }

const payload: fc.Arbitrary<Payload> = fc.oneof(
  // random bytes
  fc.record({
    method: fc.nat(methods.length - 1),
    bytes: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a))
  }),
  // a well-formed message with extreme values, possibly truncated or with a flipped bit
  fc
    .record({
      method: fc.nat(methods.length - 1),
      i64: fc.constantFrom(...I64_EXTREMES),
      key: fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
      n: fc.integer({ min: -2, max: 99 }),
      cut: fc.option(fc.nat(40), { nil: undefined }),
      flip: fc.option(fc.nat(400), { nil: undefined })
    })
    .map(({ method, i64, key, n, cut, flip }) => {
      const m = methods[method]!
      const req = extremeRequests(i64, key, n)[m.path] ?? {}
      let bytes = m.encode(req)
      if (cut !== undefined && cut < bytes.length) bytes = bytes.subarray(0, cut)
      if (flip !== undefined && bytes.length > 0) {
        bytes = Buffer.from(bytes)
        bytes[flip % bytes.length]! ^= 1 << (flip % 8)
      }
      return { method, bytes }
    })
)

describe("robustness: malformed and hostile requests to every method", () => {
  let srv: InProcessServer
  let raw: grpc.Client
  beforeAll(async () => {
    srv = await startInProcess({ maxRequestBytes: 64 * 1024 })
    raw = new grpc.Client(srv.endpoint, grpc.credentials.createInsecure())
  })
  afterAll(async () => {
    raw.close()
    await srv.close()
  })

  const details = new Map<string, number>()
  /** Sends one payload; resolves with the final status code. */
  const send = (m: Method, bytes: Buffer): Promise<number> =>
    new Promise((settle) => {
      const resolve = (code: number, detail?: string) => {
        if (detail !== undefined && code === grpc.status.INTERNAL) {
          details.set(detail.replace(/\d+/g, "N").slice(0, 60), (details.get(detail) ?? 0) + 1)
        }
        settle(code)
      }
      const deadline = Date.now() + 5000
      if (!m.requestStream && !m.responseStream) {
        raw.makeUnaryRequest(m.path, identity, identity, bytes, { deadline }, (err) =>
          resolve(err === null ? 0 : err.code, err?.details)
        )
        return
      }
      if (!m.requestStream) {
        const s = raw.makeServerStreamRequest(m.path, identity, identity, bytes, { deadline })
        s.on("data", () => {})
        s.on("error", () => {})
        s.on("status", (st: grpc.StatusObject) => resolve(st.code, st.details))
        return
      }
      const s = raw.makeBidiStreamRequest(m.path, identity, identity, { deadline })
      s.on("data", () => {})
      s.on("error", () => {})
      s.on("status", (st: grpc.StatusObject) => resolve(st.code, st.details))
      s.write(bytes)
      s.write(bytes)
      // Watch keeps serving after a half-close; cancel it once the server had a chance to react
      s.end()
      setTimeout(() => s.cancel(), 50)
    })

  it("every call ends with a status and the server keeps serving", async () => {
    const codes = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(payload, async ({ method, bytes }) => {
        const code = await send(methods[method]!, bytes)
        codes.set(code, (codes.get(code) ?? 0) + 1)
        // DEADLINE_EXCEEDED would mean a call hung until the client gave up
        expect(code).not.toBe(grpc.status.DEADLINE_EXCEEDED)
      }),
      { numRuns: 400 }
    )
    if (process.env["ROBUST_DEBUG"] === "1") console.log([...codes.entries()], [...details.entries()])
    // Internal only ever comes from grpc-js refusing to decode a message, never from a handler
    for (const d of details.keys()) expect(d).not.toMatch(/etcd-effect: internal error/)
    // both accepted and refused requests were exercised
    expect(codes.get(0) ?? 0).toBeGreaterThan(0)
    expect([...codes.keys()].filter((c) => c !== 0 && c !== grpc.status.CANCELLED).length).toBeGreaterThan(0)

    // a random Alarm request may have raised an alarm (NOSPACE stops writes), as it would on etcd: disarm them
    const maintenance = rawClient("Maintenance", srv.endpoint)
    const raised = await call(maintenance, "Alarm", { action: "GET", memberID: 0, alarm: "NONE" })
    for (const a of raised.alarms ?? [])
      await call(maintenance, "Alarm", { action: "DEACTIVATE", memberID: a.memberID, alarm: a.alarm })
    maintenance.close()
    const kv = rawClient("KV", srv.endpoint)
    const w = new RawWatch(srv.endpoint)
    try {
      w.create({ key: Buffer.from("after") })
      await w.waitFor(1)
      const put = await call(kv, "Put", { key: Buffer.from("after"), value: Buffer.from("ok") })
      expect(Number(put.header.revision)).toBeGreaterThan(1)
      await w.waitFor(2)
      expect((await call(kv, "Range", { key: Buffer.from("after") })).kvs[0].value.toString()).toBe("ok")
      expect(srv.server.calls().unary).toBe(0)
    } finally {
      kv.close()
      w.close()
    }
  })
})
