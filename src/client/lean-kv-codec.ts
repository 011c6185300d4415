/**
 * Range, Put and DeleteRange on the wire without protobufjs, for the CLI's lean path
 * (src/cli/lean/): loading protobufjs and parsing proto/*.proto cost a one-shot `get` ~70 ms of
 * its start-up (docs/benchmarks.md, "CLI start-up"). Requests are built from the same key ranges
 * as op.ts (key-range.ts) and answers read into the same shapes (RangeResult, PutResult,
 * DeleteResult), so the CLI prints them with the same code. proto3 defaults are omitted, as Go
 * writes them; field numbers: api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto.
 */
import { keyRange, type RangeOptions } from "./key-range.js"
import { type KeyValue, emptyHeader, toBytes } from "./key-value.js"
import type { DeleteResult, PutResult, RangeResult } from "./op.js"
import { readHeader, readKeyValue, Reader, Writer } from "./watch-codec.js"
import { grpcMessage } from "../h2/grpc-message-prefix.js"

export const RANGE_PATH = "/etcdserverpb.KV/Range"
export const PUT_PATH = "/etcdserverpb.KV/Put"
export const DELETE_RANGE_PATH = "/etcdserverpb.KV/DeleteRange"

const bytesField = (w: Writer, field: number, value: Uint8Array): void => {
  if (value.length > 0) w.lengthDelimited(field, value)
}
const intField = (w: Writer, field: number, value: bigint): void => {
  if (value !== 0n) w.tag(field, 0).varint(value)
}
const boolField = (w: Writer, field: number, value: boolean): void => {
  if (value) w.tag(field, 0).varint(1n)
}

export interface LeanGetOptions extends RangeOptions {
  readonly revision: bigint
  readonly limit: bigint
  readonly keysOnly: boolean
  readonly countOnly: boolean
  readonly serializable?: boolean | undefined
  /** RangeRequest.SortOrder and SortTarget as numbers (NONE/KEY: 0) */
  readonly sortOrder?: number | undefined
  readonly sortTarget?: number | undefined
}

/** RangeRequest, framed */
export const encodeRange = (key: string, o: LeanGetOptions): Buffer => {
  const r = keyRange(key, o)
  const w = new Writer()
  bytesField(w, 1, r.key)
  bytesField(w, 2, r.rangeEnd)
  intField(w, 3, o.limit)
  intField(w, 4, o.revision)
  intField(w, 5, BigInt(o.sortOrder ?? 0))
  intField(w, 6, BigInt(o.sortTarget ?? 0))
  boolField(w, 7, o.serializable === true)
  boolField(w, 8, o.keysOnly)
  boolField(w, 9, o.countOnly)
  return grpcMessage(w.finish())
}

/** PutRequest, framed; the value is written even when empty (a put of "" stores ""). */
export const encodePut = (
  key: string,
  value: string,
  o: { lease: bigint; prevKv: boolean; ignoreValue?: boolean; ignoreLease?: boolean }
): Buffer => {
  const w = new Writer()
  bytesField(w, 1, toBytes(key))
  w.lengthDelimited(2, toBytes(value))
  intField(w, 3, o.lease)
  boolField(w, 4, o.prevKv)
  boolField(w, 5, o.ignoreValue === true)
  boolField(w, 6, o.ignoreLease === true)
  return grpcMessage(w.finish())
}

/** DeleteRangeRequest, framed */
export const encodeDeleteRange = (key: string, o: RangeOptions & { prevKv: boolean }): Buffer => {
  const r = keyRange(key, o)
  const w = new Writer()
  bytesField(w, 1, r.key)
  bytesField(w, 2, r.rangeEnd)
  boolField(w, 3, o.prevKv)
  return grpcMessage(w.finish())
}

/** Reads a message's fields: `field(tag)` returns false for a field it does not take (skipped). */
const readMessage = (buf: Uint8Array, field: (r: Reader, tag: number) => boolean): void => {
  const r = new Reader(buf, 0, buf.length)
  while (r.pos < r.end) {
    const tag = r.uint32()
    if (!field(r, tag)) r.skip(tag & 7)
  }
  if (r.pos !== r.end) throw new RangeError("kv codec: message overran its end")
}

const embedded = (r: Reader): number => {
  const len = r.uint32()
  return r.pos + len
}

export const decodeRangeResponse = (buf: Uint8Array): RangeResult => {
  let header = emptyHeader
  const kvs: Array<KeyValue> = []
  let more = false
  let count = 0n
  readMessage(buf, (r, tag) => {
    if (tag === 0x0a) header = readHeader(r, embedded(r))
    else if (tag === 0x12) kvs.push(readKeyValue(r, embedded(r)))
    else if (tag === 0x18) more = r.uint32() !== 0
    else if (tag === 0x20) count = r.int64()
    else return false
    return true
  })
  return { header, kvs, more, count }
}

export const decodePutResponse = (buf: Uint8Array): PutResult => {
  let header = emptyHeader
  let prevKv: KeyValue | undefined
  readMessage(buf, (r, tag) => {
    if (tag === 0x0a) header = readHeader(r, embedded(r))
    else if (tag === 0x12) prevKv = readKeyValue(r, embedded(r))
    else return false
    return true
  })
  return { header, prevKv }
}

export const decodeDeleteRangeResponse = (buf: Uint8Array): DeleteResult => {
  let header = emptyHeader
  let deleted = 0n
  const prevKvs: Array<KeyValue> = []
  readMessage(buf, (r, tag) => {
    if (tag === 0x0a) header = readHeader(r, embedded(r))
    else if (tag === 0x10) deleted = r.int64()
    else if (tag === 0x1a) prevKvs.push(readKeyValue(r, embedded(r)))
    else return false
    return true
  })
  return { header, deleted, prevKvs }
}
