/**
 * etcd's mvcc `watcher` (watchable_store.go) and `WatchResponse` (watcher.go): one watch on a key or
 * range, a plain mutable record owned by the watchable store. It is never a fiber: the synced path
 * and the sync loops move it between groups and push responses into its stream's channel.
 */
import { EventType, type Event } from "../mvcc/key-value.js"

/**
 * An int64 watch id (etcd's mvcc.WatchID), in one canonical form per value: a number when it is a
 * safe integer (|id| ≤ 2^53 − 1), a bigint otherwise. Since no value has two forms, Map keys and
 * `===` compare ids exactly over all of int64 (2^53 and 2^53 + 1 stay two ids), while the ids the
 * stream allocates, and any a client picks below 2^53, stay plain numbers on the per-response path.
 * Make ids from outside with `toWatchId`.
 */
export type WatchId = number | bigint

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** The canonical WatchId of an int64: a decimal string (as decoded from the wire), number or bigint. */
export const toWatchId = (v: string | number | bigint): WatchId => {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : BigInt(v)
  if (typeof v === "string") {
    // up to 15 characters (sign included) is below 10^15 < 2^53: exact as a number
    if (v.length <= 15) return Number(v)
    v = BigInt(v)
  }
  return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v
}

/** Watch id 0 asks the stream to allocate one (clientv3.AutoWatchID). */
export const AutoWatchId: WatchId = 0

/** The id of a stream-wide progress response (clientv3.InvalidWatchID). */
export const ProgressAllWatchId: WatchId = -1

/** mvcc.WatchResponse: what a watcher puts on its stream's channel. */
export interface WatchResponse {
  readonly watchId: WatchId
  /** complete revisions, in revision then operation order; empty for progress and compaction */
  readonly events: ReadonlyArray<Event>
  /**
   * Synced events: the event revision. Catch-up batches: the store revision at sync time. Victim
   * retries: minRev-1. Progress: the current store revision. Compaction: 0.
   */
  readonly revision: number
  /** non-zero only on a compaction response: the compaction revision that cancelled the watcher */
  readonly compactRevision: number
}

/** WatchCreateRequest.FilterType, numbered as on the wire. */
export const FilterType = { NOPUT: 0, NODELETE: 1 } as const
export type FilterType = (typeof FilterType)[keyof typeof FilterType]

const DROP_PUT = 1
const DROP_DELETE = 2
const FILTER_BITS = DROP_PUT | DROP_DELETE
const PREV_KV = 4

/** Filters as a bit mask (unknown enum values are ignored, as etcd's FiltersFromRequest does). */
export const filterMask = (filters: Iterable<number> | undefined): number => {
  let mask = 0
  if (filters !== undefined) {
    for (const f of filters) {
      if (f === FilterType.NOPUT) mask |= DROP_PUT
      else if (f === FilterType.NODELETE) mask |= DROP_DELETE
    }
  }
  return mask
}

/** Where a watcher's responses go: its stream's channel (a non-blocking offer). */
export interface ResponseSink {
  /** false when the channel is full or closed, like Go's `select { case ch <- r: default: }` */
  readonly offer: (response: WatchResponse) => boolean
  /**
   * true while an offer would be refused (full since a refusal, until the send loop takes): a
   * watcher then fails its send without building the response. A fan-out pass tries every watcher
   * of a full channel (1,000 per stream per revision in bench:compare's watch, and again in each
   * victim retry), so most sends fail.
   */
  readonly refusing?: boolean
}

/** Which group holds the watcher, so cancel knows where to remove it from. */
export type WatcherState = "synced" | "unsynced" | "victim" | "compacted" | "canceled"

/**
 * Keys are held as latin1 strings (one char per byte) so JS string order is bytewise order and
 * Maps can key on them. `end`: undefined = the single key, "" = every key >= key, else [key, end).
 */
export class Watcher {
  state: WatcherState = "synced"
  /** filter mask and prev_kv in one field: a server holds millions of watchers (8 B each per field) */
  private readonly options: number
  constructor(
    readonly key: string,
    readonly end: string | undefined,
    /** the requested start revision (0 = "from now"); progress waits until the store reaches it */
    readonly startRev: number,
    /** the next revision this watcher accepts */
    public minRev: number,
    readonly id: WatchId,
    /** filterMask of NOPUT/NODELETE */
    filter: number,
    /** prev_kv was asked for; the server attaches it at send time */
    prevKv: boolean,
    readonly sink: ResponseSink
  ) {
    this.options = (filter & FILTER_BITS) | (prevKv ? PREV_KV : 0)
  }

  /** filterMask of NOPUT/NODELETE */
  get filter(): number {
    return this.options & FILTER_BITS
  }

  /** prev_kv was asked for; the server attaches it at send time */
  get prevKv(): boolean {
    return (this.options & PREV_KV) !== 0
  }

  /** Whether `key` (latin1) falls in this watcher's range. */
  matches(key: string): boolean {
    const end = this.end
    if (end === undefined) return key === this.key
    return key >= this.key && (end === "" || key < end)
  }

  /**
   * watcher.send: applies the filters, then offers without blocking. A response whose events were
   * all filtered out is not sent and counts as delivered; an empty (progress) response is always sent.
   */
  send(events: ReadonlyArray<Event>, revision: number): boolean {
    let evs = events
    if (this.filter !== 0 && evs.length > 0) {
      evs = filterEvents(evs, this.filter)
      if (evs.length === 0) return true
    }
    if (this.sink.refusing === true) return false
    return this.sink.offer({ watchId: this.id, events: evs, revision, compactRevision: 0 })
  }

  /** The compaction response: {compactRevision, revision 0}. */
  sendCompacted(compactRevision: number): boolean {
    return this.sink.offer({ watchId: this.id, events: [], revision: 0, compactRevision })
  }
}

const filterEvents = (events: ReadonlyArray<Event>, mask: number): ReadonlyArray<Event> => {
  let out: Array<Event> | undefined
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const drop = (mask & (e.type === EventType.PUT ? DROP_PUT : DROP_DELETE)) !== 0
    if (drop) {
      if (out === undefined) out = events.slice(0, i)
    } else if (out !== undefined) out.push(e)
  }
  return out ?? events
}

export { keyBytes, keyString } from "../mvcc/key-string.js"
