/**
 * etcd rejects a proposal whose marshalled InternalRaftRequest exceeds --max-request-bytes with
 * "etcdserver: request is too large" (etcdserver/v3_server.go processInternalRaftRequestOnce). Only
 * what goes through raft is checked: Put, DeleteRange, Compact and Txns that write; Range and
 * read-only Txns are not. This computes the protobuf size of our request shapes exactly (proto3:
 * zero scalars omitted; a oneof member always encoded) plus the InternalRaftRequest envelope, taking
 * the request header's id at its widest (10-byte varint), so the estimate is exact or a few bytes
 * conservative.
 */
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from "./kv.js"
import { varintSizeBig, varintSizeNum } from "./kv-codec.js"

const bytesField = (tagLen: number, b: Uint8Array | undefined): number =>
  b === undefined || b.length === 0 ? 0 : tagLen + varintSizeNum(b.length) + b.length
const intField = (n: number | undefined): number => (n === undefined || n === 0 ? 0 : 1 + varintSizeNum(n))
const boolField = (b: boolean | undefined): number => (b === true ? 2 : 0)
const msgField = (tagLen: number, size: number): number => tagLen + varintSizeNum(size) + size

export const putRequestSize = (r: PutRequest): number =>
  bytesField(1, r.key) +
  bytesField(1, r.value) +
  (r.lease === undefined || r.lease === 0n ? 0 : 1 + varintSizeBig(r.lease)) +
  boolField(r.prevKv) +
  boolField(r.ignoreValue) +
  boolField(r.ignoreLease)

export const deleteRangeRequestSize = (r: DeleteRangeRequest): number =>
  bytesField(1, r.key) + bytesField(1, r.rangeEnd) + boolField(r.prevKv)

export const rangeRequestSize = (r: RangeRequest): number =>
  bytesField(1, r.key) +
  bytesField(1, r.rangeEnd) +
  intField(r.limit) +
  intField(r.revision) +
  intField(r.sortOrder) +
  intField(r.sortTarget) +
  boolField(r.serializable) +
  boolField(r.keysOnly) +
  boolField(r.countOnly) +
  intField(r.minModRevision) +
  intField(r.maxModRevision) +
  intField(r.minCreateRevision) +
  intField(r.maxCreateRevision)

export const compareSize = (c: Compare): number => {
  let s = intField(c.result) + intField(c.target) + bytesField(1, c.key) + bytesField(2, c.rangeEnd) // range_end = 64
  // the target_union member is always present on the wire, even when zero
  switch (c.target) {
    case 0:
      s += 1 + varintSizeNum(c.version)
      break
    case 1:
      s += 1 + varintSizeNum(c.createRevision)
      break
    case 2:
      s += 1 + varintSizeNum(c.modRevision)
      break
    case 3:
      s += 1 + varintSizeNum(c.value.length) + c.value.length
      break
    case 4:
      s += 1 + varintSizeBig(c.lease)
      break
  }
  return s
}

export const requestOpSize = (u: RequestOp): number => {
  switch (u?._tag) {
    case "Range":
      return msgField(1, rangeRequestSize(u.request))
    case "Put":
      return msgField(1, putRequestSize(u.request))
    case "DeleteRange":
      return msgField(1, deleteRangeRequestSize(u.request))
    case "Txn":
      return msgField(1, txnRequestSize(u.request))
    default:
      return 0
  }
}

export const txnRequestSize = (r: TxnRequest): number => {
  let s = 0
  for (const c of r.compare) s += msgField(1, compareSize(c))
  for (const u of r.success) s += msgField(1, requestOpSize(u))
  for (const u of r.failure) s += msgField(1, requestOpSize(u))
  return s
}

export const compactionRequestSize = (revision: number, physical: boolean): number =>
  intField(revision) + boolField(physical)

/** header (field 100: 2-byte tag, length, id field with a 10-byte varint) */
const HEADER_SIZE = 2 + 1 + 1 + 10

/** Size of the InternalRaftRequest carrying a request of `size` bytes (one-byte field tag). */
export const internalRaftRequestSize = (size: number): number => HEADER_SIZE + msgField(1, size)
