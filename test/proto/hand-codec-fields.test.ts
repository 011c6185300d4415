/**
 * The guard over the hand-written protobuf codecs (hand-codec-fields.ts lists them): every field of
 * every message they touch is either handled or left with a reason, checked against the loaded
 * proto Root, so a field added to a .proto fails here instead of vanishing with every test green.
 * The round trips below prove each "handles" claim: a message with every handled field set to a
 * distinct non-default value goes through the hand codec and back through protobufjs unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import protobuf from "protobufjs"
import type { Event as ClientEvent, KeyValue as ClientKeyValue, ResponseHeader } from "../../src/client/key-value.js"
import {
  decodeDeleteRangeResponse,
  decodePutResponse,
  decodeRangeResponse,
  encodeDeleteRange,
  encodePut,
  encodeRange
} from "../../src/client/lean-kv-codec.js"
import {
  decodeWatchResponse,
  encodeCancelRequest,
  encodeCreateRequest,
  encodeProgressRequest
} from "../../src/client/watch-codec.js"
import type { Event, KeyValue } from "../../src/mvcc/key-value.js"
import { protoRoot } from "../../src/proto/load.js"
import { headerFirst, rangeResponseSerializer } from "../../src/server/kv-wire.js"
import { FrameWriter, WatchResponseEncoder } from "../../src/server/watch-wire.js"
import { rangeKvCount, responseRevision } from "../../src/bench/unary-scan.js"
import { WatchScanner } from "../../src/bench/watch-scan.js"
import { type HandCodec, handCodecs } from "./hand-codec-fields.js"

type Json = Record<string, unknown>

/** fields of `message` in `root` that no entry for it handles or leaves */
const unaccounted = (root: protobuf.Root, codecs: ReadonlyArray<HandCodec>): Array<string> =>
  codecs.flatMap((c) => {
    const type = root.lookupType(c.message)
    const known = new Set([...c.handles, ...Object.keys(c.leaves ?? {})])
    const missing = type.fieldsArray.filter((f) => !known.has(f.name))
    const stale = [...known].filter((name) => type.fields[name] === undefined)
    return [
      ...missing.map((f) => `${c.message}.${f.name} (field ${f.id}) is new to ${c.codec}: handle it or leave it with a reason`),
      ...stale.map((name) => `${c.codec} names ${c.message}.${name}, which the .proto no longer has`)
    ]
  })

/** distinct values: each field of a generated message gets its own */
let counter = 0
const next = () => ++counter

/** `message` as protobufjs JSON (int64 as strings, bytes as base64) with `fields` (default: all) set */
const full = (message: string, fields?: ReadonlyArray<string>, depth = 0): Json => {
  const type = protoRoot.lookupType(message)
  const out: Json = {}
  const oneofsDone = new Set<string>()
  for (const f of type.fieldsArray) {
    if (fields !== undefined && !fields.includes(f.name)) continue
    if (f.partOf !== null && fields === undefined) {
      if (oneofsDone.has(f.partOf.name)) continue
      oneofsDone.add(f.partOf.name)
    }
    const one = (): unknown => {
      f.resolve()
      if (f.resolvedType instanceof protobuf.Type) return depth > 2 ? {} : full(f.resolvedType.fullName.slice(1), undefined, depth + 1)
      if (f.resolvedType instanceof protobuf.Enum) return Math.max(...Object.values(f.resolvedType.values))
      switch (f.type) {
        case "bool":
          return true
        case "string":
          return `s${next()}`
        case "bytes":
          return Buffer.from([next() % 250, 7]).toString("base64")
        default:
          return String(next())
      }
    }
    out[f.name] = f.repeated ? [one(), one()] : one()
  }
  return out
}

const asJson = (message: string, bytes: Uint8Array): Json => {
  const type = protoRoot.lookupType(message)
  return type.toObject(type.decode(bytes), { longs: String, bytes: String, enums: Number, defaults: false }) as Json
}
const encode = (message: string, json: Json): Uint8Array => {
  const type = protoRoot.lookupType(message)
  return type.encode(type.fromObject(json)).finish()
}
/** the same JSON after protobufjs' own trip (it drops what is default) */
const normal = (message: string, json: Json): Json => asJson(message, encode(message, json))

const handles = (codec: string, message: string) =>
  handCodecs.find((c) => c.codec === codec && c.message === message)!.handles

const b64 = (s: unknown) => new Uint8Array(Buffer.from(s as string, "base64"))
const toB64 = (b: Uint8Array) => Buffer.from(b).toString("base64")

// the server's fast-path shapes: ints as numbers or bigints, bytes as Uint8Array
const serverKv = (j: Json) => ({
  key: b64(j.key),
  create_revision: Number(j.create_revision),
  mod_revision: Number(j.mod_revision),
  version: Number(j.version),
  value: b64(j.value),
  lease: BigInt(j.lease as string)
})
const serverHeader = (j: Json) => ({
  cluster_id: BigInt(j.cluster_id as string),
  member_id: BigInt(j.member_id as string),
  revision: Number(j.revision),
  raft_term: BigInt(j.raft_term as string)
})
const mvccKv = (j: Json): KeyValue => ({
  key: b64(j.key),
  createRevision: Number(j.create_revision),
  modRevision: Number(j.mod_revision),
  version: Number(j.version),
  value: b64(j.value),
  lease: BigInt(j.lease as string)
})

// the client's decoded shapes back to protobufjs JSON: only what they carry
const kvJson = (kv: ClientKeyValue): Json => ({
  key: toB64(kv.key),
  create_revision: String(kv.createRevision),
  mod_revision: String(kv.modRevision),
  version: String(kv.version),
  value: toB64(kv.value),
  lease: String(kv.lease)
})
const headerJson = (h: ResponseHeader): Json => ({
  cluster_id: String(h.clusterId),
  member_id: String(h.memberId),
  revision: String(h.revision),
  raft_term: String(h.raftTerm)
})
const eventJson = (e: ClientEvent): Json => ({
  type: e.type,
  kv: kvJson(e.kv),
  ...(e.prevKv === undefined ? {} : { prev_kv: kvJson(e.prevKv) })
})

const unframe = (b: Uint8Array) => b.subarray(5)

describe("hand-written protobuf codecs cover every field of their messages", () => {
  it("every field of the loaded .proto files is handled or left with a reason", () => {
    expect(unaccounted(protoRoot, handCodecs)).toEqual([])
  })

  it("a field added to a .proto is reported (a planted field on RangeResponse and KeyValue)", () => {
    const planted = protobuf.Root.fromJSON(protoRoot.toJSON())
    planted.lookupType("etcdserverpb.RangeResponse").add(new protobuf.Field("shard", 99, "string"))
    planted.lookupType("mvccpb.KeyValue").add(new protobuf.Field("ttl", 99, "int64"))
    const report = unaccounted(planted, handCodecs)
    expect(report.filter((r) => r.startsWith("etcdserverpb.RangeResponse.shard"))).toHaveLength(3)
    expect(report.filter((r) => r.startsWith("mvccpb.KeyValue.ttl"))).toHaveLength(4)
  })

  it("server/kv-wire.ts: RangeResponse and the header before other responses, as protobufjs writes them", () => {
    const message = "etcdserverpb.RangeResponse"
    const j = full(message, handles("server/kv-wire.ts rangeResponseSerializer", message))
    const reference = (v: unknown) => Buffer.from(encode(message, v as Json))
    const shaped = { ...j, header: serverHeader(j.header as Json), kvs: (j.kvs as Array<Json>).map(serverKv), count: Number(j.count) }
    expect(asJson(message, rangeResponseSerializer(reference)(shaped))).toEqual(normal(message, j))
    const put = full("etcdserverpb.PutResponse")
    const putRef = (v: unknown) => Buffer.from(encode("etcdserverpb.PutResponse", v as Json))
    const written = headerFirst(putRef)({ ...put, header: serverHeader(put.header as Json) })
    expect(asJson("etcdserverpb.PutResponse", written)).toEqual(normal("etcdserverpb.PutResponse", put))
  })

  it("server/watch-wire.ts: the header, events with prev_kv, watch_id and a compaction", () => {
    const message = "etcdserverpb.WatchResponse"
    const header = full("etcdserverpb.ResponseHeader")
    const events = [full("mvccpb.Event"), full("mvccpb.Event")]
    const encoder = new WatchResponseEncoder(() => serverHeader(header), () => new Uint8Array(0))
    const out = new FrameWriter()
    const revision = Number(header.revision)
    const mvcc: Array<Event> = events.map((e) => ({ type: e.type as 0 | 1, kv: mvccKv(e.kv as Json) }))
    const prevs = new Map(events.map((e, i) => [mvcc[i]!.kv, mvccKv(e.prev_kv as Json)]))
    const prev = (key: Uint8Array) => [...prevs].find(([kv]) => kv.key === key)?.[1]
    encoder.response(out, { watchId: 7, events: mvcc, revision, compactRevision: 0 }, prev)
    encoder.response(out, { watchId: 8, events: [], revision, compactRevision: 5 }, undefined)
    const [withEvents, compacted] = out.takeMessages()
    const fields = handles("server/watch-wire.ts WatchResponseEncoder.response", message)
    expect(fields).toEqual(["header", "watch_id", "canceled", "compact_revision", "events"])
    expect(asJson(message, withEvents!)).toEqual(normal(message, { header, watch_id: "7", events }))
    expect(asJson(message, compacted!)).toEqual(
      normal(message, { header, watch_id: "8", canceled: true, compact_revision: "5" })
    )
  })

  it("client/watch-codec.ts: every WatchResponse field decoded; requests encoded whole", () => {
    const message = "etcdserverpb.WatchResponse"
    const j = full(message, handles("client/watch-codec.ts decodeWatchResponse", message))
    const r = decodeWatchResponse(encode(message, j))
    const back: Json = {
      header: headerJson(r.header),
      watch_id: String(r.watchId),
      created: r.created,
      canceled: r.canceled,
      compact_revision: String(r.compactRevision),
      cancel_reason: r.cancelReason,
      fragment: r.fragment,
      events: r.events.map(eventJson)
    }
    expect(normal(message, back)).toEqual(normal(message, j))

    const create = full(
      "etcdserverpb.WatchCreateRequest",
      handles("client/watch-codec.ts encodeCreateRequest", "etcdserverpb.WatchCreateRequest")
    )
    const createBytes = encodeCreateRequest({
      key: b64(create.key),
      rangeEnd: b64(create.range_end),
      startRevision: BigInt(create.start_revision as string),
      progressNotify: create.progress_notify as boolean,
      filters: create.filters as Array<number>,
      prevKv: create.prev_kv as boolean,
      fragment: create.fragment as boolean
    })
    expect(asJson("etcdserverpb.WatchRequest", createBytes)).toEqual(
      normal("etcdserverpb.WatchRequest", { create_request: create })
    )
    expect(asJson("etcdserverpb.WatchRequest", encodeCancelRequest(42))).toEqual({ cancel_request: { watch_id: "42" } })
    expect(asJson("etcdserverpb.WatchRequest", encodeProgressRequest())).toEqual({ progress_request: {} })
  })

  it("client/lean-kv-codec.ts: the CLI's Range, Put and DeleteRange both ways", () => {
    const range = full("etcdserverpb.RangeRequest", handles("client/lean-kv-codec.ts encodeRange", "etcdserverpb.RangeRequest"))
    // the lean path takes keys as text and a range end as the CLI's options give it
    const key = "k"
    const rangeBytes = encodeRange(key, {
      rangeEnd: "z",
      revision: BigInt(range.revision as string),
      limit: BigInt(range.limit as string),
      keysOnly: true,
      countOnly: true,
      serializable: true,
      sortOrder: range.sort_order as number,
      sortTarget: range.sort_target as number
    } as Parameters<typeof encodeRange>[1])
    const b64text = (s: string) => Buffer.from(s).toString("base64")
    expect(asJson("etcdserverpb.RangeRequest", unframe(rangeBytes))).toEqual(
      normal("etcdserverpb.RangeRequest", { ...range, key: b64text(key), range_end: b64text("z") })
    )
    const put = full("etcdserverpb.PutRequest", handles("client/lean-kv-codec.ts encodePut", "etcdserverpb.PutRequest"))
    const putBytes = encodePut("k", "v", {
      lease: BigInt(put.lease as string),
      prevKv: true,
      ignoreValue: true,
      ignoreLease: true
    })
    expect(asJson("etcdserverpb.PutRequest", unframe(putBytes))).toEqual(
      normal("etcdserverpb.PutRequest", { ...put, key: b64text("k"), value: b64text("v") })
    )
    const del = encodeDeleteRange("k", { rangeEnd: "z", prevKv: true } as Parameters<typeof encodeDeleteRange>[1])
    expect(asJson("etcdserverpb.DeleteRangeRequest", unframe(del))).toEqual({
      key: b64text("k"),
      range_end: b64text("z"),
      prev_kv: true
    })

    const rr = full("etcdserverpb.RangeResponse")
    const decoded = decodeRangeResponse(encode("etcdserverpb.RangeResponse", rr))
    expect(
      normal("etcdserverpb.RangeResponse", {
        header: headerJson(decoded.header),
        kvs: decoded.kvs.map(kvJson),
        more: decoded.more,
        count: String(decoded.count)
      })
    ).toEqual(normal("etcdserverpb.RangeResponse", rr))
    const pr = full("etcdserverpb.PutResponse")
    const p = decodePutResponse(encode("etcdserverpb.PutResponse", pr))
    expect(
      normal("etcdserverpb.PutResponse", { header: headerJson(p.header), prev_kv: kvJson(p.prevKv!) })
    ).toEqual(normal("etcdserverpb.PutResponse", pr))
    const dr = full("etcdserverpb.DeleteRangeResponse")
    const d = decodeDeleteRangeResponse(encode("etcdserverpb.DeleteRangeResponse", dr))
    expect(
      normal("etcdserverpb.DeleteRangeResponse", {
        header: headerJson(d.header),
        deleted: String(d.deleted),
        prev_kvs: d.prevKvs.map(kvJson)
      })
    ).toEqual(normal("etcdserverpb.DeleteRangeResponse", dr))
  })

  it("bench/: the scanners read what they name", () => {
    const message = "etcdserverpb.WatchResponse"
    const j = full(message, handles("bench/watch-scan.ts WatchScanner", message))
    const bytes = encode(message, j)
    const scanner = new WatchScanner(true)
    scanner.scan(bytes, 0, bytes.length)
    const events = j.events as Array<Json>
    expect({
      revision: scanner.revision,
      watchId: scanner.watchId,
      created: scanner.created,
      canceled: scanner.canceled,
      compactRevision: scanner.compactRevision,
      cancelReason: scanner.cancelReason,
      fragment: scanner.fragment,
      events: scanner.events,
      modRevisions: [...scanner.modRevisions.subarray(0, scanner.events)],
      values: [0, 1].map((i) =>
        toB64(bytes.subarray(scanner.valueStarts[i]!, scanner.valueStarts[i]! + scanner.valueLengths[i]!))
      )
    }).toEqual({
      revision: Number((j.header as Json).revision),
      watchId: Number(j.watch_id),
      created: true,
      canceled: true,
      compactRevision: Number(j.compact_revision),
      cancelReason: j.cancel_reason,
      fragment: true,
      events: 2,
      modRevisions: events.map((e) => Number((e.kv as Json).mod_revision)),
      values: events.map((e) => (e.kv as Json).value)
    })
    const rr = full("etcdserverpb.RangeResponse")
    const rb = encode("etcdserverpb.RangeResponse", rr)
    expect(responseRevision(rb, 0, rb.length)).toBe(Number((rr.header as Json).revision))
    expect(rangeKvCount(rb, 0, rb.length)).toBe(2)
  })
})
