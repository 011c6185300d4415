/**
 * Reads (kvstore_txn.go's storeTxnRead, as the store runs it): Range, read-only Txns, a key as of
 * a revision, and the history's events for the watch layer. They read at `rev()`, the newest
 * committed revision: the multi-version index makes that a consistent view while later revisions
 * are still in flight. Plain synchronous code, answered as an Exit (a Range never waits).
 */
import { Exit } from "effect"
import type { EtcdError } from "../errors.js"
import { readError } from "./corrupt-read.js"
import { applyRange, applyTxnOps, prepareTxn } from "./apply.js"
import { keyString } from "./key-string.js"
import { type Event, EventType, type KeyValue, tombstoneKv } from "./key-value.js"
import type { RangeRequest, RangeResponse, TxnRequest, TxnResponse } from "./kv.js"
import { bytesToMain, bytesToSub, decodeKeyValue, isTombstoneKey, revToBytes } from "./kv-codec.js"
import type { KvStore } from "./kvstore-state.js"
import { TxnRead } from "./kvstore-txn.js"
import { checkRangeRequest } from "./request-checks.js"

export const rangeNow = (s: KvStore, req: RangeRequest): Exit.Exit<RangeResponse, EtcdError> => {
  const e = checkRangeRequest(req)
  if (e !== undefined) return Exit.fail(e)
  if (s.stopped !== undefined) return Exit.fail(s.stopped)
  try {
    return Exit.succeed(applyRange(new TxnRead(s, s.committedRev, s.compactMainRev), req))
  } catch (e) {
    const error = readError(e, s.logError)
    return error === undefined ? Exit.die(e) : Exit.fail(error)
  }
}

/** A checked read-only Txn, served from the committed state like etcd's (no raft, no size check). */
export const readonlyTxnNow = (s: KvStore, req: TxnRequest): Exit.Exit<TxnResponse, EtcdError> => {
  if (s.stopped !== undefined) return Exit.fail(s.stopped)
  try {
    const view = new TxnRead(s, s.committedRev, s.compactMainRev)
    const path = prepareTxn(view, req, false)
    const { succeeded, responses } = applyTxnOps(view, req, path)
    return Exit.succeed({ header: { revision: view.rev() }, succeeded, responses })
  } catch (e) {
    const error = readError(e, s.logError)
    return error === undefined ? Exit.die(e) : Exit.fail(error)
  }
}

/** The key's KeyValue as of revision `rev` (undefined if absent or compacted). */
export const getAt = (s: KvStore, key: Uint8Array, rev: number): KeyValue | undefined => {
  if (rev < s.compactMainRev || rev > s.committedRev || rev <= 0) return undefined
  const ki = s.index.keyIndex(keyString(key))
  if (ki === undefined) return undefined
  const r = ki.revisionAt(rev)
  if (r === undefined) return undefined
  const v = s.backend.get("key", revToBytes(r.main, r.sub))
  return v === undefined ? undefined : decodeKeyValue(v)
}

const EVENTS_CHUNK = 1000

/** The events of revisions [from, to] (at most `maxRevisions` of them) read from the key bucket. */
export const eventsBetween = (s: KvStore, from: number, to: number, maxRevisions?: number): ReadonlyArray<Event> => {
  const last = Math.min(to, s.committedRev)
  const out: Array<Event> = []
  if (from > last) return out
  const limit = maxRevisions === undefined || maxRevisions <= 0 ? Infinity : maxRevisions
  const end = revToBytes(last + 1, 0)
  let start: Uint8Array = revToBytes(Math.max(from, 0), 0)
  let revisions = 0
  let prevMain = -1
  for (;;) {
    const entries = s.backend.range("key", start, end, EVENTS_CHUNK)
    for (const [rk, v] of entries) {
      const main = bytesToMain(rk)
      if (main !== prevMain) {
        if (revisions >= limit) return out
        revisions++
        prevMain = main
      }
      const kv = decodeKeyValue(v)
      out.push(
        isTombstoneKey(rk) ? { type: EventType.DELETE, kv: tombstoneKv(kv.key, main) } : { type: EventType.PUT, kv }
      )
    }
    if (entries.length < EVENTS_CHUNK) return out
    const lastKey = entries[entries.length - 1]![0]
    start = revToBytes(bytesToMain(lastKey), bytesToSub(lastKey) + 1)
  }
}
