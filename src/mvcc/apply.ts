/**
 * etcdserver/apply.go's applierV3backend for the KV requests, with etcd 3.4/3.5 semantics:
 * - Range: fetch limit+1 to compute `more`, or everything when sorting or filtering; min/max
 *   mod/create revision filters prune kvs but not `count`; a sort target other than KEY with order
 *   NONE sorts ASCEND; ties keep key order (etcd's sort is unstable beyond 12 items, so etcd's tie
 *   order is not reproducible there; up to 12 it is insertion sort, which agrees with ours).
 * - Put: ignore_value / ignore_lease need the key to exist ("etcdserver: key not found"); the lease
 *   must exist ("etcdserver: requested lease not found").
 * - Txn: every compare (nested txns' too) is evaluated against the state before the txn runs
 *   (compareToPath); then the chosen ops are checked (puts first, then ranges' revisions), then
 *   applied in order at one revision. A nested txn's response header carries revision 0, as in etcd.
 * Everything is synchronous and throws EtcdError; the store catches at its Effect boundary.
 */
import { Errors } from "../errors.js"
import type { KeyValue } from "./key-value.js"
import { keyString } from "./key-string.js"
import {
  type Compare,
  CompareResult,
  CompareTarget,
  type DeleteRangeRequest,
  type DeleteRangeResponse,
  type PutRequest,
  type PutResponse,
  type RangeRequest,
  type RangeResponse,
  type ResponseOp,
  SortOrder,
  SortTarget,
  type TxnRequest,
  type TxnResponse
} from "./kv.js"
import { rangeEndOf, type TxnRead, type TxnWrite } from "./kvstore-txn.js"

const EMPTY = new Uint8Array(0)

const compareBytes = (a: Uint8Array, b: Uint8Array): number => {
  const n = a.length < b.length ? a.length : b.length
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!
    if (d !== 0) return d
  }
  return a.length - b.length
}

const cmpNum = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0)

const sorters: Record<number, (a: KeyValue, b: KeyValue) => number> = {
  [SortTarget.KEY]: (a, b) => compareBytes(a.key, b.key),
  [SortTarget.VERSION]: (a, b) => cmpNum(a.version, b.version),
  [SortTarget.CREATE]: (a, b) => cmpNum(a.createRevision, b.createRevision),
  [SortTarget.MOD]: (a, b) => cmpNum(a.modRevision, b.modRevision),
  [SortTarget.VALUE]: (a, b) => compareBytes(a.value, b.value)
}

/** Range (apply.go) over any view: a committed read view or an open write txn. */
export const applyRange = (txn: TxnRead, r: RangeRequest): RangeResponse => {
  const reqLimit = r.limit ?? 0
  const minMod = r.minModRevision ?? 0
  const maxMod = r.maxModRevision ?? 0
  const minCreate = r.minCreateRevision ?? 0
  const maxCreate = r.maxCreateRevision ?? 0
  const sortTarget = r.sortTarget ?? SortTarget.KEY
  let sortOrder: number = r.sortOrder ?? SortOrder.NONE

  let limit = reqLimit
  if (sortOrder !== SortOrder.NONE || minMod !== 0 || maxMod !== 0 || minCreate !== 0 || maxCreate !== 0) {
    // fetch everything; sort and truncate afterwards
    limit = 0
  }
  // fetch one extra for 'more'
  if (limit > 0) limit = limit + 1

  const rr = txn.range(keyString(r.key), rangeEndOf(r.rangeEnd), {
    limit,
    rev: r.revision ?? 0,
    count: r.countOnly === true
  })
  let kvs = rr.kvs
  if (maxMod !== 0) kvs = kvs.filter((kv) => !(kv.modRevision > maxMod))
  if (minMod !== 0) kvs = kvs.filter((kv) => !(kv.modRevision < minMod))
  if (maxCreate !== 0) kvs = kvs.filter((kv) => !(kv.createRevision > maxCreate))
  if (minCreate !== 0) kvs = kvs.filter((kv) => !(kv.createRevision < minCreate))

  // mvcc returns key order, so only a target other than KEY sorts by default
  if (sortTarget !== SortTarget.KEY && sortOrder === SortOrder.NONE) sortOrder = SortOrder.ASCEND
  if (sortOrder !== SortOrder.NONE) {
    const less = sorters[sortTarget]
    if (less !== undefined) {
      if (sortOrder === SortOrder.ASCEND) kvs.sort(less)
      else if (sortOrder === SortOrder.DESCEND) kvs.sort((a, b) => less(b, a))
    }
  }

  let more = false
  if (reqLimit > 0 && kvs.length > reqLimit) {
    kvs.length = reqLimit
    more = true
  }
  if (r.keysOnly === true) {
    for (let i = 0; i < kvs.length; i++) {
      const kv = kvs[i]!
      if (kv.value.length !== 0) kvs[i] = { ...kv, value: EMPTY }
    }
  }
  return { header: { revision: rr.rev }, kvs, more, count: rr.count }
}

/**
 * Put (apply.go). `standalone`: outside a txn the lease is checked here; inside one it was checked
 * up front (checkRequestPut).
 */
export const applyPut = (txn: TxnWrite, p: PutRequest, standalone: boolean): PutResponse => {
  let lease = p.lease ?? 0n
  if (standalone && lease !== 0n) checkLease(txn, lease)
  const k = keyString(p.key)
  let prev: KeyValue | undefined
  if (p.ignoreValue === true || p.ignoreLease === true || p.prevKv === true) {
    prev = txn.range(k, undefined).kvs[0]
  }
  if (p.ignoreValue === true || p.ignoreLease === true) {
    // ignore_{lease,value} need a previous key-value pair
    if (prev === undefined) throw Errors.keyNotFound()
  }
  const value = p.ignoreValue === true ? prev!.value : (p.value ?? EMPTY)
  if (p.ignoreLease === true) lease = prev!.lease
  const revision = txn.put(p.key, k, value, lease)
  return p.prevKv === true && prev !== undefined ? { header: { revision }, prevKv: prev } : { header: { revision } }
}

const checkLease = (txn: TxnRead, lease: bigint): void => {
  const lessor = txn.core.lessor
  if (lessor === undefined || !lessor.exists(lease)) throw Errors.leaseNotFound()
}

/** DeleteRange (apply.go). */
export const applyDeleteRange = (txn: TxnWrite, dr: DeleteRangeRequest): DeleteRangeResponse => {
  const k = keyString(dr.key)
  const end = rangeEndOf(dr.rangeEnd)
  const prevKvs = dr.prevKv === true ? txn.range(k, end).kvs : []
  const [deleted, revision] = txn.deleteRange(k, end)
  return { header: { revision }, deleted, prevKvs }
}

// ---------------------------------------------------------------------------------------------
// Txn

/** isTxnReadonly: only Range ops at the top level of both branches (a nested txn counts as a write). */
export const isTxnReadonly = (r: TxnRequest): boolean => {
  for (const u of r.success) if (u._tag !== "Range") return false
  for (const u of r.failure) if (u._tag !== "Range") return false
  return true
}

const ZERO_KV: KeyValue = { key: EMPTY, createRevision: 0, modRevision: 0, version: 0, value: EMPTY, lease: 0n }

const compareKV = (c: Compare, kv: KeyValue): boolean => {
  let result: number
  switch (c.target) {
    case CompareTarget.VALUE:
      result = Math.sign(compareBytes(kv.value, c.value ?? EMPTY))
      break
    case CompareTarget.CREATE:
      result = cmpNum(kv.createRevision, c.createRevision ?? 0)
      break
    case CompareTarget.MOD:
      result = cmpNum(kv.modRevision, c.modRevision ?? 0)
      break
    case CompareTarget.VERSION:
      result = cmpNum(kv.version, c.version ?? 0)
      break
    case CompareTarget.LEASE: {
      const l = c.lease ?? 0n
      result = kv.lease < l ? -1 : kv.lease > l ? 1 : 0
      break
    }
    default:
      result = 0
  }
  switch (c.result) {
    case CompareResult.EQUAL:
      return result === 0
    case CompareResult.NOT_EQUAL:
      return result !== 0
    case CompareResult.GREATER:
      return result > 0
    case CompareResult.LESS:
      return result < 0
    default:
      return true
  }
}

/** applyCompare: true iff the compare holds for every key in its range (a missing key compares as zeros; VALUE fails). */
export const applyCompare = (rv: TxnRead, c: Compare): boolean => {
  let kvs: Array<KeyValue>
  try {
    kvs = rv.range(keyString(c.key), rangeEndOf(c.rangeEnd)).kvs
  } catch {
    return false
  }
  if (kvs.length === 0) {
    if (c.target === CompareTarget.VALUE) return false
    return compareKV(c, ZERO_KV)
  }
  for (const kv of kvs) if (!compareKV(c, kv)) return false
  return true
}

const applyCompares = (rv: TxnRead, cmps: ReadonlyArray<Compare>): boolean => {
  for (const c of cmps) if (!applyCompare(rv, c)) return false
  return true
}

/** compareToPath: the branch taken by this txn and, in pre-order, by every nested txn on that path. */
export const compareToPath = (rv: TxnRead, rt: TxnRequest, path: Array<boolean> = []): Array<boolean> => {
  const ok = applyCompares(rv, rt.compare)
  path.push(ok)
  for (const op of ok ? rt.success : rt.failure) if (op._tag === "Txn") compareToPath(rv, op.request, path)
  return path
}

interface Cursor {
  i: number
}

type CheckFn = (rv: TxnRead, op: TxnRequest["success"][number]) => void

const checkRequests = (rv: TxnRead, rt: TxnRequest, path: ReadonlyArray<boolean>, cur: Cursor, f: CheckFn): void => {
  const reqs = path[cur.i++] === true ? rt.success : rt.failure
  for (const req of reqs) {
    if (req._tag === "Txn") checkRequests(rv, req.request, path, cur, f)
    else f(rv, req)
  }
}

/** checkRequestPut: ignore_* need the key to exist before the txn; a lease must exist. */
const checkRequestPut: CheckFn = (rv, op) => {
  if (op._tag !== "Put") return
  const req = op.request
  if (req.ignoreValue === true || req.ignoreLease === true) {
    if (rv.range(keyString(req.key), undefined).kvs.length === 0) throw Errors.keyNotFound()
  }
  const lease = req.lease ?? 0n
  if (lease !== 0n) checkLease(rv, lease)
}

/** checkRequestRange: a range's revision must be within [firstRev, rev] of the view. */
const checkRequestRange: CheckFn = (rv, op) => {
  if (op._tag !== "Range") return
  const rev = op.request.revision ?? 0
  if (rev === 0) return
  if (rev > rv.rev()) throw Errors.futureRev()
  if (rev < rv.firstRev()) throw Errors.compacted()
}

/**
 * Evaluates a txn's path against `rv` (the state before the txn) and checks the chosen ops;
 * throws the first error. Returns the path for `applyTxnOps`.
 */
export const prepareTxn = (rv: TxnRead, rt: TxnRequest, isWrite: boolean): ReadonlyArray<boolean> => {
  const path = compareToPath(rv, rt)
  if (isWrite) checkRequests(rv, rt, path, { i: 0 }, checkRequestPut)
  checkRequests(rv, rt, path, { i: 0 }, checkRequestRange)
  return path
}

/** applyTxn: runs the chosen ops in order; nested responses get header revision 0 (etcd leaves it unset). */
export const applyTxnOps = (
  txn: TxnRead,
  rt: TxnRequest,
  path: ReadonlyArray<boolean>,
  cur: Cursor = { i: 0 }
): { readonly succeeded: boolean; readonly responses: Array<ResponseOp> } => {
  const succeeded = path[cur.i++] === true
  const reqs = succeeded ? rt.success : rt.failure
  const responses = new Array<ResponseOp>(reqs.length)
  for (let i = 0; i < reqs.length; i++) {
    const req = reqs[i]!
    switch (req._tag) {
      case "Range":
        responses[i] = { _tag: "Range", response: applyRange(txn, req.request) }
        break
      case "Put":
        responses[i] = { _tag: "Put", response: applyPut(txn as TxnWrite, req.request, false) }
        break
      case "DeleteRange":
        responses[i] = { _tag: "DeleteRange", response: applyDeleteRange(txn as TxnWrite, req.request) }
        break
      case "Txn": {
        const nested = applyTxnOps(txn, req.request, path, cur)
        const response: TxnResponse = {
          header: { revision: 0 },
          succeeded: nested.succeeded,
          responses: nested.responses
        }
        responses[i] = { _tag: "Txn", response }
        break
      }
    }
  }
  return { succeeded, responses }
}
