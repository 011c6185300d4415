/**
 * etcdserverpb messages ↔ MvccStore shapes. Requests arrive decoded by proto-loader (int64 as
 * decimal strings, every field present); responses leave in the encodable shape with zero-valued
 * fields left out, as Go's proto3 encoder leaves them out.
 *
 * Nothing here throws on hostile input: numbers that do not parse become 0 and unknown enum values
 * pass through to the store's checks, which answer with etcd's errors.
 */
import type * as mvcc from "../mvcc/kv.js"
import type { Event, KeyValue } from "../mvcc/key-value.js"
import type * as pb from "../proto/messages.js"
import { type MakeHeader, nestedHeader } from "./header.js"

// ---- scalars ----

/** int64 (decimal string) → number; revisions and counts stay far below 2^53. */
export const toNumber = (s: string | number | undefined | null): number => {
  const n = Number(s)
  return Number.isFinite(n) ? n : 0
}

/** int64 (decimal string) → bigint, for lease ids, which use all 64 bits. */
export const toBigInt = (s: string | number | undefined | null): bigint => {
  if (typeof s === "number") return Number.isInteger(s) ? BigInt(s) : 0n
  if (typeof s !== "string" || s.length === 0) return 0n
  try {
    return BigInt(s)
  } catch {
    return 0n
  }
}

// ---- KeyValue / Event ----

export const kvToPb = (kv: KeyValue): pb.KeyValueInit => {
  const o: { -readonly [K in keyof pb.KeyValueInit]: pb.KeyValueInit[K] } = { key: kv.key }
  if (kv.createRevision !== 0) o.create_revision = kv.createRevision
  if (kv.modRevision !== 0) o.mod_revision = kv.modRevision
  if (kv.version !== 0) o.version = kv.version
  if (kv.value.byteLength !== 0) o.value = kv.value
  if (kv.lease !== 0n) o.lease = kv.lease
  return o
}

export const eventToPb = (ev: Event, prevKv: KeyValue | undefined): pb.EventInit => {
  const kv = kvToPb(ev.kv)
  if (prevKv !== undefined) {
    return ev.type === 0 ? { kv, prev_kv: kvToPb(prevKv) } : { type: ev.type, kv, prev_kv: kvToPb(prevKv) }
  }
  return ev.type === 0 ? { kv } : { type: ev.type, kv }
}

// ---- requests ----

export const rangeRequest = (r: pb.RangeRequest): mvcc.RangeRequest => ({
  key: r.key,
  rangeEnd: r.range_end,
  limit: toNumber(r.limit),
  revision: toNumber(r.revision),
  sortOrder: r.sort_order,
  sortTarget: r.sort_target,
  serializable: r.serializable,
  keysOnly: r.keys_only,
  countOnly: r.count_only,
  minModRevision: toNumber(r.min_mod_revision),
  maxModRevision: toNumber(r.max_mod_revision),
  minCreateRevision: toNumber(r.min_create_revision),
  maxCreateRevision: toNumber(r.max_create_revision)
})

export const putRequest = (r: pb.PutRequest): mvcc.PutRequest => ({
  key: r.key,
  value: r.value,
  lease: toBigInt(r.lease),
  prevKv: r.prev_kv,
  ignoreValue: r.ignore_value,
  ignoreLease: r.ignore_lease
})

export const deleteRangeRequest = (r: pb.DeleteRangeRequest): mvcc.DeleteRangeRequest => ({
  key: r.key,
  rangeEnd: r.range_end,
  prevKv: r.prev_kv
})

/**
 * A RequestOp with no member set. The store's txn checks answer it with etcd's "key not found";
 * it never reaches the apply step.
 */
const EMPTY_OP = { _tag: "Empty" } as unknown as mvcc.RequestOp

const requestOp = (op: pb.RequestOp): mvcc.RequestOp => {
  switch (op.request) {
    case "request_range":
      return { _tag: "Range", request: rangeRequest(op.request_range) }
    case "request_put":
      return { _tag: "Put", request: putRequest(op.request_put) }
    case "request_delete_range":
      return { _tag: "DeleteRange", request: deleteRangeRequest(op.request_delete_range) }
    case "request_txn":
      return { _tag: "Txn", request: txnRequest(op.request_txn) }
    default:
      return EMPTY_OP
  }
}

/**
 * A Compare's operand comes from its oneof only when the oneof member matches the target (Go's
 * GetVersion() etc. read 0 otherwise). An unknown target compares as equal, as etcd's does.
 */
const compare = (c: pb.Compare): mvcc.Compare => {
  const base = { result: c.result, key: c.key, rangeEnd: c.range_end }
  switch (c.target) {
    case 0:
      return { ...base, target: 0, version: c.target_union === "version" ? toNumber(c.version) : 0 }
    case 1:
      return {
        ...base,
        target: 1,
        createRevision: c.target_union === "create_revision" ? toNumber(c.create_revision) : 0
      }
    case 2:
      return { ...base, target: 2, modRevision: c.target_union === "mod_revision" ? toNumber(c.mod_revision) : 0 }
    case 3:
      return { ...base, target: 3, value: c.target_union === "value" ? c.value : EMPTY }
    case 4:
      return { ...base, target: 4, lease: c.target_union === "lease" ? toBigInt(c.lease) : 0n }
    default:
      return { ...base, target: c.target } as unknown as mvcc.Compare
  }
}

const EMPTY = new Uint8Array(0)

export const txnRequest = (r: pb.TxnRequest): mvcc.TxnRequest => ({
  compare: r.compare.map(compare),
  success: r.success.map(requestOp),
  failure: r.failure.map(requestOp)
})

// ---- responses ----

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const rangeBody = (r: mvcc.RangeResponse): Mutable<pb.RangeResponseInit> => {
  const o: Mutable<pb.RangeResponseInit> = {}
  if (r.kvs.length !== 0) o.kvs = r.kvs.map(kvToPb)
  if (r.more) o.more = true
  if (r.count !== 0) o.count = r.count
  return o
}

const putBody = (r: mvcc.PutResponse): Mutable<pb.PutResponseInit> =>
  r.prevKv === undefined ? {} : { prev_kv: kvToPb(r.prevKv) }

const deleteBody = (r: mvcc.DeleteRangeResponse): Mutable<pb.DeleteRangeResponseInit> => {
  const o: Mutable<pb.DeleteRangeResponseInit> = {}
  if (r.deleted !== 0) o.deleted = r.deleted
  if (r.prevKvs.length !== 0) o.prev_kvs = r.prevKvs.map(kvToPb)
  return o
}

const txnBody = (r: mvcc.TxnResponse): Mutable<pb.TxnResponseInit> => {
  const o: Mutable<pb.TxnResponseInit> = {}
  if (r.succeeded) o.succeeded = true
  if (r.responses.length !== 0) o.responses = r.responses.map(responseOp)
  return o
}

const responseOp = (op: mvcc.ResponseOp): pb.ResponseOpInit => {
  switch (op._tag) {
    case "Range":
      return { response_range: { header: nestedHeader(op.response.header.revision), ...rangeBody(op.response) } }
    case "Put":
      return { response_put: { header: nestedHeader(op.response.header.revision), ...putBody(op.response) } }
    case "DeleteRange":
      return {
        response_delete_range: { header: nestedHeader(op.response.header.revision), ...deleteBody(op.response) }
      }
    case "Txn":
      return { response_txn: { header: nestedHeader(op.response.header.revision), ...txnBody(op.response) } }
  }
}

export const rangeResponse = (h: MakeHeader, r: mvcc.RangeResponse): pb.RangeResponseInit => ({
  header: h(r.header.revision),
  ...rangeBody(r)
})

export const putResponse = (h: MakeHeader, r: mvcc.PutResponse): pb.PutResponseInit => ({
  header: h(r.header.revision),
  ...putBody(r)
})

export const deleteRangeResponse = (h: MakeHeader, r: mvcc.DeleteRangeResponse): pb.DeleteRangeResponseInit => ({
  header: h(r.header.revision),
  ...deleteBody(r)
})

export const txnResponse = (h: MakeHeader, r: mvcc.TxnResponse): pb.TxnResponseInit => ({
  header: h(r.header.revision),
  ...txnBody(r)
})
