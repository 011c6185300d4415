/**
 * The requests the bench sends, hand-encoded straight into gRPC frames (proto/rpc.proto
 * field numbers). proto3 zero values are omitted, as Go does: an empty key is no key at all, which
 * is what makes etcd answer "etcdserver: key is not provided".
 */
import { bytesFieldSize, grpcFrameWriter, varintFieldSize } from "./pb.js"

export const PUT = "/etcdserverpb.KV/Put"
export const RANGE = "/etcdserverpb.KV/Range"
export const TXN = "/etcdserverpb.KV/Txn"
export const WATCH = "/etcdserverpb.Watch/Watch"

const optionalBytesSize = (field: number, b: Uint8Array) => (b.length === 0 ? 0 : bytesFieldSize(field, b.length))

/** PutRequest{key=1, value=2} */
export const putFrame = (key: Uint8Array, value: Uint8Array): Buffer => {
  const w = grpcFrameWriter(optionalBytesSize(1, key) + optionalBytesSize(2, value))
  if (key.length > 0) w.bytes(1, key)
  if (value.length > 0) w.bytes(2, value)
  return w.buf
}

/**
 * TxnRequest{success=2: RequestOp{request_put=2: PutRequest{key=1, value=2}}}: one put, no
 * compares (etcd's `benchmark txn-put` with --txn-ops 1).
 */
export const txnPutFrame = (key: Uint8Array, value: Uint8Array): Buffer => {
  const put = optionalBytesSize(1, key) + optionalBytesSize(2, value)
  const op = bytesFieldSize(2, put)
  const w = grpcFrameWriter(bytesFieldSize(2, op))
  w.message(2, op)
  w.message(2, put)
  if (key.length > 0) w.bytes(1, key)
  if (value.length > 0) w.bytes(2, value)
  return w.buf
}

/** RangeRequest{key=1}: one key, linearizable (serializable=7 left false). */
export const rangeFrame = (key: Uint8Array): Buffer => {
  const w = grpcFrameWriter(optionalBytesSize(1, key))
  if (key.length > 0) w.bytes(1, key)
  return w.buf
}

export interface WatchCreate {
  readonly key: Uint8Array
  /** empty: the single key */
  readonly rangeEnd?: Uint8Array
  /** 0: from the current revision */
  readonly startRevision?: number
  readonly prevKv?: boolean
}

/** WatchRequest{create_request=1{key=1, range_end=2, start_revision=3, prev_kv=6}} */
export const watchCreateFrame = (c: WatchCreate): Buffer => {
  const rangeEnd = c.rangeEnd ?? new Uint8Array(0)
  const start = c.startRevision ?? 0
  const inner =
    optionalBytesSize(1, c.key) +
    optionalBytesSize(2, rangeEnd) +
    (start === 0 ? 0 : varintFieldSize(3, start)) +
    (c.prevKv === true ? varintFieldSize(6, 1) : 0)
  const w = grpcFrameWriter(bytesFieldSize(1, inner))
  w.message(1, inner)
  if (c.key.length > 0) w.bytes(1, c.key)
  if (rangeEnd.length > 0) w.bytes(2, rangeEnd)
  if (start !== 0) w.uint(3, start)
  if (c.prevKv === true) w.uint(6, 1)
  return w.buf
}

/** The range end that selects every key with `prefix` (clientv3.GetPrefixRangeEnd). */
export const prefixEnd = (prefix: Uint8Array): Uint8Array => {
  const end = Uint8Array.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1
      return end.subarray(0, i + 1)
    }
  }
  return new Uint8Array([0]) // all 0xff: every key from the prefix on
}

/**
 * Frames by key index, built on first use: the same request bytes are reused rather than encoded
 * per request (the connection copies them into its output buffer anyway). Large key spaces are
 * encoded per request instead of held.
 */
export const framesByIndex = (size: number, build: (index: number) => Uint8Array): ((index: number) => Uint8Array) => {
  if (size > 100_000) return build
  const frames: Array<Uint8Array | undefined> = new Array(size)
  return (index) => (frames[index] ??= build(index))
}

const encoder = new TextEncoder()
export const utf8 = (text: string): Uint8Array => encoder.encode(text)
