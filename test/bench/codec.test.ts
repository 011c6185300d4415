/**
 * The bench's hand-written protobuf against protobufjs (the project's reference codec): the shallow
 * WatchResponse scan reads what protobufjs encodes (ids, flags, header revision, every event's
 * mod_revision and value position; unknown fields and prev_kv skipped), the unary scans read Put
 * and Range answers, and the requests it encodes decode to what was meant.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import type * as grpc from "@grpc/grpc-js"
import { packageDefinition } from "../../src/proto/index.js"
import { prefixEnd, putFrame, rangeFrame, watchCreateFrame } from "../../src/bench/requests.js"
import { rangeKvCount, responseRevision } from "../../src/bench/unary-scan.js"
import { WatchScanner } from "../../src/bench/watch-scan.js"

const method = (service: string, name: string) =>
  (packageDefinition[`etcdserverpb.${service}`] as grpc.ServiceDefinition)[name]!
const watch = method("Watch", "Watch")
const put = method("KV", "Put")
const range = method("KV", "Range")
const serialize = (m: grpc.MethodDefinition<any, any>, value: unknown) => m.responseSerialize(value) as Buffer
const deserializeRequest = (m: grpc.MethodDefinition<any, any>, frame: Buffer) => {
  expect(frame[0]).toBe(0)
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5)
  return m.requestDeserialize(frame.subarray(5)) as any
}

const revision = fc.oneof(
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 1, max: 2 ** 40 }),
  fc.constantFrom(1, 127, 128, 2 ** 28 - 1, 2 ** 28, 2 ** 35, 2 ** 53 - 1)
)
const bytes = fc.uint8Array({ maxLength: 300 })
const kv = fc.record({
  key: fc.uint8Array({ maxLength: 200 }),
  create_revision: fc.oneof(revision, fc.constant(0)),
  mod_revision: revision,
  version: fc.nat(),
  value: bytes,
  lease: fc.nat()
})
const event = fc.record({ type: fc.constantFrom(0, 1), kv, prev_kv: fc.option(kv, { nil: null }) })
const response = fc.record({
  header: fc.record({ cluster_id: fc.nat(), member_id: fc.nat(), revision: fc.nat(), raft_term: fc.nat() }),
  watch_id: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.constantFrom(-1, 0, 2 ** 40)),
  created: fc.boolean(),
  canceled: fc.boolean(),
  compact_revision: fc.nat(),
  cancel_reason: fc.string({ maxLength: 30 }),
  fragment: fc.boolean(),
  events: fc.array(event, { maxLength: 40 })
})

const wire = (r: any) => ({
  ...r,
  header: {
    ...r.header,
    cluster_id: String(r.header.cluster_id),
    member_id: String(r.header.member_id),
    revision: String(r.header.revision),
    raft_term: String(r.header.raft_term)
  },
  watch_id: String(r.watch_id),
  compact_revision: String(r.compact_revision),
  events: r.events.map((e: any) => ({ ...e, kv: wireKv(e.kv), prev_kv: e.prev_kv === null ? null : wireKv(e.prev_kv) }))
})
const wireKv = (k: any) => ({
  key: Buffer.from(k.key),
  create_revision: String(k.create_revision),
  mod_revision: String(k.mod_revision),
  version: String(k.version),
  value: Buffer.from(k.value),
  lease: String(k.lease)
})

describe("bench protobuf", () => {
  it.prop(
    "scans what protobufjs encodes",
    [response, fc.boolean(), fc.nat(40)],
    ([r, wantValues, offset]) => {
      const body = serialize(watch, wire(r))
      // inside a larger buffer, as messages sit in DATA chunks
      const buf = Buffer.concat([Buffer.alloc(offset, 0xee), body, Buffer.alloc(7, 0xee)])
      const scanner = new WatchScanner(wantValues)
      scanner.scan(buf, offset, offset + body.length)
      expect(scanner.revision).toBe(r.header.revision)
      expect(scanner.watchId).toBe(r.watch_id)
      expect(scanner.created).toBe(r.created)
      expect(scanner.canceled).toBe(r.canceled)
      expect(scanner.compactRevision).toBe(r.compact_revision)
      expect(scanner.cancelReason).toBe(r.cancel_reason)
      expect(scanner.fragment).toBe(r.fragment)
      expect(scanner.events).toBe(r.events.length)
      expect([...scanner.modRevisions.subarray(0, scanner.events)]).toEqual(r.events.map((e: any) => e.kv.mod_revision))
      if (wantValues) {
        r.events.forEach((e: any, i: number) => {
          const start = scanner.valueStarts[i]!
          // an empty value may be omitted (-1) or written with length 0
          if (e.kv.value.length === 0) expect(start === -1 || scanner.valueLengths[i] === 0).toBe(true)
          else expect([...buf.subarray(start, start + scanner.valueLengths[i]!)]).toEqual([...e.kv.value])
        })
      }
    },
    { fastCheck: { numRuns: 400 } }
  )

  it("reuses one scanner across messages without leaking fields", () => {
    const scanner = new WatchScanner(false)
    const a = serialize(
      watch,
      wire({
        header: { cluster_id: 0, member_id: 0, revision: 9, raft_term: 0 },
        watch_id: 3,
        created: true,
        canceled: true,
        compact_revision: 4,
        cancel_reason: "x",
        fragment: true,
        events: []
      })
    )
    const b = serialize(watch, { events: [{ kv: { key: Buffer.from("k"), mod_revision: "5" } }] })
    scanner.scan(a, 0, a.length)
    scanner.scan(b, 0, b.length)
    expect([
      scanner.watchId,
      scanner.created,
      scanner.canceled,
      scanner.compactRevision,
      scanner.cancelReason,
      scanner.fragment,
      scanner.revision
    ]).toEqual([0, false, false, 0, "", false, 0])
    expect(scanner.events).toBe(1)
    expect(scanner.modRevisions[0]).toBe(5)
  })

  it("skips unknown fields and rejects a truncated message", () => {
    const known = serialize(watch, {
      watch_id: "3",
      events: [{ type: 1, kv: { key: Buffer.from("k"), mod_revision: "7" } }]
    })
    // field 15 varint, 16 fixed64, 17 length-delimited, 18 fixed32
    const unknown = Buffer.from([
      0x78, 0x96, 0x01, 0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x8a, 0x01, 2, 0xaa, 0xbb, 0x95, 0x01, 1, 2, 3, 4
    ])
    const buf = Buffer.concat([unknown, known, unknown])
    const scanner = new WatchScanner(false)
    scanner.scan(buf, 0, buf.length)
    expect([scanner.watchId, scanner.events, scanner.modRevisions[0]]).toEqual([3, 1, 7])
    const full = serialize(watch, {
      events: [{ kv: { key: Buffer.from("some key"), mod_revision: "3", value: Buffer.from("some value") } }]
    })
    expect(() => scanner.scan(full, 0, full.length - 3)).toThrow(RangeError)
  })

  it.prop("reads Put and Range answers", [fc.nat(), fc.array(kv, { maxLength: 5 }), fc.nat()], ([rev, kvs, count]) => {
    const p = serialize(put, {
      header: { revision: String(rev), member_id: "77" },
      prev_kv: kvs[0] === undefined ? null : wireKv(kvs[0])
    })
    expect(responseRevision(p, 0, p.length)).toBe(rev)
    const r = serialize(range, {
      header: { revision: String(rev) },
      kvs: kvs.map(wireKv),
      more: true,
      count: String(count)
    })
    expect(rangeKvCount(r, 0, r.length)).toBe(kvs.length)
  })

  it.prop(
    "encodes requests protobufjs reads back",
    [
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 2000 }),
      fc.uint8Array({ maxLength: 50 }),
      fc.oneof(fc.constant(0), revision),
      fc.boolean()
    ],
    ([key, value, end, start, prevKv]) => {
      const p = deserializeRequest(put, putFrame(key, value))
      expect([...p.key]).toEqual([...key])
      expect([...p.value]).toEqual([...value])
      expect(p.lease).toBe("0")
      const r = deserializeRequest(range, rangeFrame(key))
      expect([...r.key]).toEqual([...key])
      expect(r.serializable).toBe(false) // linearizable
      const w = deserializeRequest(watch, watchCreateFrame({ key, rangeEnd: end, startRevision: start, prevKv }))
      expect(w.request_union).toBe("create_request")
      expect([...w.create_request.key]).toEqual([...key])
      expect([...w.create_request.range_end]).toEqual([...end])
      expect(Number(w.create_request.start_revision)).toBe(start)
      expect(w.create_request.prev_kv).toBe(prevKv)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("computes prefix range ends like clientv3", () => {
    expect([...prefixEnd(Buffer.from("catchup/"))]).toEqual([...Buffer.from("catchup0")])
    expect([...prefixEnd(Uint8Array.of(0x61, 0xff))]).toEqual([0x62])
    expect([...prefixEnd(Uint8Array.of(0xff, 0xff))]).toEqual([0])
  })
})
