/**
 * The client's own Watch codec against protobufjs (via proto-loader, the project's reference codec):
 * every WatchResponse protobufjs encodes, ours decodes to the same values (int64 edges, negative
 * watch ids, empty and binary bytes, unknown fields); every request ours encodes, protobufjs
 * decodes to what was meant. Plus clientv3's key-range rules.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import type * as grpc from "@grpc/grpc-js"
import { packageDefinition } from "../../src/proto/index.js"
import { keyRange, prefixEnd } from "../../src/client/key-range.js"
import {
  decodeWatchResponse,
  encodeCancelRequest,
  encodeCreateRequest,
  encodeProgressRequest
} from "../../src/client/watch-codec.js"

const watchMethod = (packageDefinition["etcdserverpb.Watch"] as grpc.ServiceDefinition)["Watch"]!
const serializeResponse = watchMethod.responseSerialize as (value: unknown) => Buffer
const deserializeRequest = watchMethod.requestDeserialize as (bytes: Buffer) => any

const INT64_MAX = (1n << 63n) - 1n
const UINT64_MAX = (1n << 64n) - 1n
const int64 = fc.oneof(
  fc.bigInt(0n, 1000n),
  fc.bigInt(0n, (1n << 53n) + 5n),
  fc.bigInt(-(1n << 63n), INT64_MAX),
  fc.constantFrom(0n, 1n, -1n, INT64_MAX, -(1n << 63n), (1n << 32n) - 1n, 1n << 32n, (1n << 53n) - 1n, 1n << 53n)
)
const uint64 = fc.oneof(fc.bigInt(0n, UINT64_MAX), fc.constantFrom(0n, UINT64_MAX, (1n << 32n) - 1n, 1n << 53n))
const bytes = fc.uint8Array({ maxLength: 40 })

const keyValue = fc.record({
  key: bytes,
  create_revision: int64,
  mod_revision: int64,
  version: int64,
  value: bytes,
  lease: int64
})
const event = fc.record({ type: fc.constantFrom(0, 1), kv: keyValue, prev_kv: fc.option(keyValue, { nil: null }) })
const watchResponse = fc.record({
  header: fc.record({ cluster_id: uint64, member_id: uint64, revision: int64, raft_term: uint64 }),
  watch_id: fc.oneof(fc.integer({ min: -1, max: 1 << 30 }), fc.constantFrom(-1, 0, 2 ** 32, 2 ** 40)),
  created: fc.boolean(),
  canceled: fc.boolean(),
  compact_revision: int64,
  cancel_reason: fc.string({ maxLength: 30 }),
  fragment: fc.boolean(),
  events: fc.array(event, { maxLength: 6 })
})

type Generated = fc.Arbitrary<any> extends fc.Arbitrary<infer T> ? T : never

const toWire = (r: Generated): unknown =>
  JSON.parse(
    JSON.stringify(r, (_k, v) =>
      typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? { __b: [...v] } : v
    ),
    (_k, v) => (v !== null && typeof v === "object" && "__b" in v ? Buffer.from(v.__b) : v)
  )

const kvOf = (kv: any) => ({
  key: [...kv.key],
  createRevision: kv.create_revision,
  modRevision: kv.mod_revision,
  version: kv.version,
  value: [...kv.value],
  lease: kv.lease
})

describe("watch codec", () => {
  it.prop(
    "decodes what protobufjs encodes",
    [watchResponse],
    ([r]) => {
      const decoded = decodeWatchResponse(serializeResponse(toWire(r)))
      expect(decoded.header).toEqual({
        clusterId: r.header.cluster_id,
        memberId: r.header.member_id,
        revision: r.header.revision,
        raftTerm: r.header.raft_term
      })
      expect(decoded.watchId).toBe(r.watch_id)
      expect(decoded.created).toBe(r.created)
      expect(decoded.canceled).toBe(r.canceled)
      expect(decoded.compactRevision).toBe(r.compact_revision)
      expect(decoded.cancelReason).toBe(r.cancel_reason)
      expect(decoded.fragment).toBe(r.fragment)
      expect(
        decoded.events.map((e) => ({
          type: e.type,
          kv: kvOf({ ...e.kv, create_revision: e.kv.createRevision, mod_revision: e.kv.modRevision }),
          prevKv:
            e.prevKv === undefined
              ? null
              : kvOf({ ...e.prevKv, create_revision: e.prevKv.createRevision, mod_revision: e.prevKv.modRevision })
        }))
      ).toEqual(
        r.events.map((e: any) => ({
          type: e.type,
          kv: kvOf(e.kv),
          prevKv: e.prev_kv === null ? null : kvOf(e.prev_kv)
        }))
      )
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("skips unknown fields of every wire type", () => {
    const known = serializeResponse({
      header: { revision: "7" },
      watch_id: "3",
      events: [{ type: 1, kv: { key: Buffer.from("k"), mod_revision: "7" } }]
    })
    // field 15 varint, field 16 fixed64, field 17 length-delimited, field 18 fixed32
    const unknown = Buffer.from([
      0x78, 0x96, 0x01, 0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x8a, 0x01, 2, 0xaa, 0xbb, 0x95, 0x01, 1, 2, 3, 4
    ])
    const decoded = decodeWatchResponse(Buffer.concat([unknown, known, unknown]))
    expect(decoded.header.revision).toBe(7n)
    expect(decoded.watchId).toBe(3)
    expect(decoded.events).toHaveLength(1)
    expect(decoded.events[0]!.type).toBe(1)
    expect(Buffer.from(decoded.events[0]!.kv.key).toString()).toBe("k")
  })

  it("rejects a truncated message", () => {
    const full = serializeResponse({
      events: [{ kv: { key: Buffer.from("some key"), value: Buffer.from("some value") } }]
    })
    expect(() => decodeWatchResponse(full.subarray(0, full.length - 3))).toThrow(RangeError)
  })

  it.prop(
    "encodes create requests protobufjs reads back",
    [
      fc.record({
        key: bytes,
        rangeEnd: bytes,
        startRevision: int64,
        progressNotify: fc.boolean(),
        filters: fc.subarray([0, 1]),
        prevKv: fc.boolean(),
        fragment: fc.boolean()
      })
    ],
    ([c]) => {
      const decoded = deserializeRequest(encodeCreateRequest(c))
      expect(decoded.request_union).toBe("create_request")
      const cr = decoded.create_request
      expect([...cr.key]).toEqual([...c.key])
      expect([...cr.range_end]).toEqual([...c.rangeEnd])
      expect(BigInt(cr.start_revision)).toBe(c.startRevision)
      expect(cr.progress_notify).toBe(c.progressNotify)
      expect(cr.filters).toEqual(c.filters)
      expect(cr.prev_kv).toBe(c.prevKv)
      expect(cr.fragment).toBe(c.fragment)
      expect(BigInt(cr.watch_id)).toBe(0n) // ids are always the server's (AutoWatchID)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop("encodes cancel requests", [fc.oneof(fc.integer({ min: -1, max: 2 ** 31 }), fc.constant(0))], ([id]) => {
    const decoded = deserializeRequest(encodeCancelRequest(id))
    expect(decoded.request_union).toBe("cancel_request")
    expect(Number(decoded.cancel_request.watch_id)).toBe(id)
  })

  it("encodes a progress request with its oneof set", () => {
    const decoded = deserializeRequest(encodeProgressRequest())
    expect(decoded.request_union).toBe("progress_request")
  })
})

describe("key ranges (clientv3 op.go)", () => {
  const b = (s: string) => new Uint8Array(Buffer.from(s, "latin1"))
  it("prefix end increments the last byte below 0xff and truncates after it", () => {
    expect(prefixEnd(b("abc"))).toEqual(b("abd"))
    expect(prefixEnd(b("a\xff"))).toEqual(b("b"))
    expect(prefixEnd(b("\xff\xff"))).toEqual(b("\x00"))
  })
  it.prop(
    "every key with the prefix is inside [key, end), and the end is outside",
    [fc.uint8Array({ minLength: 1, maxLength: 6 }), fc.uint8Array({ maxLength: 4 })],
    ([prefix, suffix]) => {
      const end = prefixEnd(prefix)
      const key = Buffer.concat([prefix, suffix])
      const allFF = prefix.every((x) => x === 0xff)
      if (!allFF) {
        expect(Buffer.compare(key, Buffer.from(end))).toBeLessThan(0)
        expect(Buffer.from(end).subarray(0, prefix.length).equals(Buffer.from(prefix))).toBe(false)
      } else {
        expect(end).toEqual(new Uint8Array([0]))
      }
    }
  )
  it("empty key with prefix or fromKey means every key", () => {
    expect(keyRange("", { prefix: true })).toEqual({ key: b("\x00"), rangeEnd: b("\x00") })
    expect(keyRange("", { fromKey: true })).toEqual({ key: b("\x00"), rangeEnd: b("\x00") })
    expect(keyRange("k", { fromKey: true })).toEqual({ key: b("k"), rangeEnd: b("\x00") })
    expect(keyRange("a", { rangeEnd: "c" })).toEqual({ key: b("a"), rangeEnd: b("c") })
    expect(keyRange("a")).toEqual({ key: b("a"), rangeEnd: new Uint8Array(0) })
  })
})
