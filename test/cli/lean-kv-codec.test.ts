/**
 * The lean path's KV codec (src/client/lean-kv-codec.ts) against the full client's: requests it
 * encodes decode through proto-loader (protobufjs) to what op.ts builds, and answers protobufjs
 * encodes decode to what op.ts reads from them — for any keys, values, revisions and ids.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import type * as grpc from "@grpc/grpc-js"
import {
  decodeDeleteRangeResponse,
  decodePutResponse,
  decodeRangeResponse,
  encodeDeleteRange,
  encodePut,
  encodeRange
} from "../../src/client/lean-kv-codec.js"
import { deleteRequest, deleteResult, putRequest, putResult, rangeRequest, rangeResult } from "../../src/client/op.js"
import { packageDefinition } from "../../src/proto/index.js"

const method = (name: string) => (packageDefinition["etcdserverpb.KV"] as grpc.ServiceDefinition)[name]!
const Range = method("Range")
const Put = method("Put")
const DeleteRange = method("DeleteRange")

/** proto-loader's reading of a request, as plain data */
const asRequest = (m: grpc.MethodDefinition<unknown, unknown>, bytes: Buffer): unknown =>
  JSON.parse(JSON.stringify(m.requestDeserialize(bytes)))
const unframed = (frame: Buffer): Buffer => {
  expect(frame[0]).toBe(0)
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5)
  return frame.subarray(5)
}

const key = FastCheck.string({ maxLength: 8 })
const int64 = FastCheck.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n })
const uint64 = FastCheck.bigInt({ min: 0n, max: (1n << 64n) - 1n })
const revision = FastCheck.bigInt({ min: 0n, max: (1n << 50n) - 1n })
const bytes = FastCheck.uint8Array({ maxLength: 8 })
const header = FastCheck.record({ cluster_id: uint64, member_id: uint64, revision: int64, raft_term: uint64 })
const kv = FastCheck.record({
  key: bytes,
  create_revision: int64,
  mod_revision: int64,
  version: int64,
  value: bytes,
  lease: int64
})
/** protobufjs' input form: int64 as decimal strings, bytes as Buffer */
const wire = (value: unknown): unknown =>
  typeof value === "bigint"
    ? value.toString()
    : value instanceof Uint8Array
      ? Buffer.from(value)
      : Array.isArray(value)
        ? value.map(wire)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wire(v)]))
          : value
/** bytes as hex and int64 as text, whichever representation the reader chose */
const plain = (value: unknown): unknown =>
  typeof value === "bigint"
    ? value.toString()
    : value instanceof Uint8Array
      ? Buffer.from(value).toString("hex")
      : Array.isArray(value)
        ? value.map(plain)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
          : value

describe("lean KV codec", () => {
  it.prop(
    "Range, Put and DeleteRange requests read as op.ts's",
    [
      key,
      FastCheck.option(key, { nil: undefined }),
      FastCheck.constantFrom("none", "prefix", "fromKey"),
      revision,
      revision,
      FastCheck.boolean(),
      FastCheck.boolean(),
      key,
      int64
    ],
    ([k, end, mode, rev, limit, flagA, flagB, value, lease]) => {
      const range = {
        prefix: mode === "prefix",
        fromKey: mode === "fromKey",
        rangeEnd: mode === "none" ? end : undefined
      }
      const get = { ...range, revision: rev, limit, keysOnly: flagA, countOnly: flagB }
      expect(asRequest(Range, unframed(encodeRange(k, get)))).toEqual(
        asRequest(Range, Range.requestSerialize(rangeRequest(k, get)))
      )
      expect(asRequest(Put, unframed(encodePut(k, value, { lease, prevKv: flagA })))).toEqual(
        asRequest(Put, Put.requestSerialize(putRequest(k, value, { lease, prevKv: flagA })))
      )
      expect(asRequest(DeleteRange, unframed(encodeDeleteRange(k, { ...range, prevKv: flagB })))).toEqual(
        asRequest(DeleteRange, DeleteRange.requestSerialize(deleteRequest(k, { ...range, prevKv: flagB })))
      )
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "Range, Put and DeleteRange answers read as op.ts reads them",
    [
      header,
      FastCheck.array(kv, { maxLength: 3 }),
      FastCheck.boolean(),
      int64,
      FastCheck.option(kv, { nil: undefined })
    ],
    ([h, kvs, more, count, prev]) => {
      const range = Range.responseSerialize(wire({ header: h, kvs, more, count }))
      expect(plain(decodeRangeResponse(range))).toEqual(plain(rangeResult(Range.responseDeserialize(range) as never)))
      const put = Put.responseSerialize(wire({ header: h, ...(prev === undefined ? {} : { prev_kv: prev }) }))
      expect(plain(decodePutResponse(put))).toEqual(plain(putResult(Put.responseDeserialize(put) as never)))
      const del = DeleteRange.responseSerialize(wire({ header: h, deleted: count, prev_kvs: kvs }))
      expect(plain(decodeDeleteRangeResponse(del))).toEqual(
        plain(deleteResult(DeleteRange.responseDeserialize(del) as never))
      )
    },
    { fastCheck: { numRuns: 300 } }
  )
})
