/**
 * The request checks of etcd's v3rpc/key.go, run before a request touches the store: empty keys,
 * ignore_value/ignore_lease conflicts, invalid sort options (3.5+: 3.4 has no such check and would
 * crash on an unknown sort target), the txn op limit, and checkIntervals (a key put twice, or put
 * and deleted, in one txn). Each returns the EtcdError etcd answers with, or undefined.
 */
import { type EtcdError, Errors } from "../errors.js"
import { keyString } from "./key-string.js"
import type { DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from "./kv.js"

const isEnum = (v: number | undefined, max: number): boolean =>
  v === undefined || (Number.isInteger(v) && v >= 0 && v <= max)

export const checkRangeRequest = (r: RangeRequest): EtcdError | undefined => {
  if (r.key.length === 0) return Errors.emptyKey()
  if (!isEnum(r.sortOrder, 2)) return Errors.invalidSortOption()
  if (!isEnum(r.sortTarget, 4)) return Errors.invalidSortOption()
  return undefined
}

export const checkPutRequest = (r: PutRequest): EtcdError | undefined => {
  if (r.key.length === 0) return Errors.emptyKey()
  if (r.ignoreValue === true && r.value !== undefined && r.value.length !== 0) return Errors.valueProvided()
  if (r.ignoreLease === true && r.lease !== undefined && r.lease !== 0n) return Errors.leaseProvided()
  return undefined
}

export const checkDeleteRequest = (r: DeleteRangeRequest): EtcdError | undefined =>
  r.key.length === 0 ? Errors.emptyKey() : undefined

/**
 * checkTxnRequest: the widest of compare/success/failure may hold at most `maxTxnOps` entries, and
 * a nested txn gets what its parent left (maxTxnOps - parent's widest).
 */
export const checkTxnRequest = (r: TxnRequest, maxTxnOps: number): EtcdError | undefined => {
  let opc = r.compare.length
  if (opc < r.success.length) opc = r.success.length
  if (opc < r.failure.length) opc = r.failure.length
  if (opc > maxTxnOps) return Errors.tooManyOps()
  for (const c of r.compare) if (c.key.length === 0) return Errors.emptyKey()
  for (const u of r.success) {
    const e = checkRequestOp(u, maxTxnOps - opc)
    if (e !== undefined) return e
  }
  for (const u of r.failure) {
    const e = checkRequestOp(u, maxTxnOps - opc)
    if (e !== undefined) return e
  }
  return undefined
}

export const checkRequestOp = (u: RequestOp, maxTxnOps: number): EtcdError | undefined => {
  switch (u?._tag) {
    case "Range":
      return checkRangeRequest(u.request)
    case "Put":
      return checkPutRequest(u.request)
    case "DeleteRange":
      return checkDeleteRequest(u.request)
    case "Txn":
      return checkTxnRequest(u.request, maxTxnOps)
    default:
      // an empty RequestOp
      return Errors.keyNotFound()
  }
}

// ---------------------------------------------------------------------------------------------
// checkIntervals

/**
 * A delete interval as etcd's adt "string affine" interval: [begin, end) where an empty end would
 * mean +infinity. A single-key delete is [k, k+"\0"). A from-key delete's end is the literal "\0",
 * so it contains nothing: etcd does not catch a from-key delete overlapping a put, and neither do we.
 */
interface Interval {
  readonly begin: string
  readonly end: string
}

const intersectsPoint = (dels: ReadonlyArray<Interval>, k: string): boolean => {
  for (const iv of dels) {
    // begin < k+"\0"  (i.e. begin <= k)  and  k < end  (empty end = +infinity)
    if (iv.begin <= k && (iv.end === "" || k < iv.end)) return true
  }
  return false
}

interface IntervalsResult {
  readonly puts: Set<string>
  readonly dels: Array<Interval>
}

/**
 * checkIntervals: rejects a txn whose ops (at one level, or across a level and its nested txns) put
 * the same key twice, or put a key that a delete at that level or in a nested txn covers. Puts in
 * the success and failure branches of one nested txn may overlap (only one branch runs).
 */
export const checkIntervals = (reqs: ReadonlyArray<RequestOp>): EtcdError | IntervalsResult => {
  const dels: Array<Interval> = []
  for (const req of reqs) {
    if (req?._tag !== "DeleteRange") continue
    const d = req.request
    const k = keyString(d.key)
    dels.push(
      d.rangeEnd !== undefined && d.rangeEnd.length !== 0
        ? { begin: k, end: keyString(d.rangeEnd) }
        : { begin: k, end: k + "\0" }
    )
  }

  const puts = new Set<string>()
  for (const req of reqs) {
    if (req?._tag !== "Txn") continue
    const thenR = checkIntervals(req.request.success)
    if (!("puts" in thenR)) return thenR
    const elseR = checkIntervals(req.request.failure)
    if (!("puts" in elseR)) return elseR
    for (const k of thenR.puts) {
      if (puts.has(k)) return Errors.duplicateKey()
      if (intersectsPoint(dels, k)) return Errors.duplicateKey()
      puts.add(k)
    }
    for (const k of elseR.puts) {
      // a key from the success branch may repeat: the branches are mutually exclusive
      if (puts.has(k) && !thenR.puts.has(k)) return Errors.duplicateKey()
      if (intersectsPoint(dels, k)) return Errors.duplicateKey()
      puts.add(k)
    }
    // union of the nested deletes, bounded by ["\0", +inf): every interval beginning at >= "\0"
    for (const iv of thenR.dels) if (iv.begin >= "\0") dels.push(iv)
    for (const iv of elseR.dels) if (iv.begin >= "\0") dels.push(iv)
  }

  for (const req of reqs) {
    if (req?._tag !== "Put") continue
    const k = keyString(req.request.key)
    if (puts.has(k)) return Errors.duplicateKey()
    if (intersectsPoint(dels, k)) return Errors.duplicateKey()
    puts.add(k)
  }
  return { puts, dels }
}

/** Every check etcd's kvServer.Txn makes before proposing: checkTxnRequest, then checkIntervals per branch. */
export const checkTxn = (r: TxnRequest, maxTxnOps: number): EtcdError | undefined => {
  const e = checkTxnRequest(r, maxTxnOps)
  if (e !== undefined) return e
  const s = checkIntervals(r.success)
  if (!("puts" in s)) return s
  const f = checkIntervals(r.failure)
  if (!("puts" in f)) return f
  return undefined
}
