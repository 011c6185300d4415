/**
 * What a watch delivers: clientv3's WatchResponse without the error fields, since terminal
 * conditions (compaction, cancel, permission, no leader) end the Stream as typed failures instead.
 */
import type { Event, ResponseHeader } from "./key-value.js"

/** One element of a watch's Stream: whole revisions of events, a creation notice, or a progress notification. */
export interface WatchResponse {
  readonly header: ResponseHeader
  /** whole revisions, in revision order (fragments are already merged) */
  readonly events: ReadonlyArray<Event>
  /** the creation notice; only delivered with `createdNotify`, and only for the first creation */
  readonly created: boolean
  /**
   * A progress notification: no events, and every event up to `header.revision` has been delivered
   * (periodic `progressNotify`, or the answer to `requestProgress()`).
   */
  readonly progressNotify: boolean
}

/** A watch_id response as it comes off the wire (etcdserverpb.WatchResponse). */
export interface WireWatchResponse {
  header: ResponseHeader
  watchId: number
  created: boolean
  canceled: boolean
  compactRevision: bigint
  cancelReason: string
  fragment: boolean
  events: Array<Event>
}

/** `IsProgressNotify` of clientv3. */
export const isProgressNotify = (r: WireWatchResponse): boolean =>
  r.events.length === 0 && !r.canceled && !r.created && r.compactRevision === 0n && r.header.revision !== 0n
