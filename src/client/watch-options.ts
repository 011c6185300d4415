/**
 * clientv3's watch OpOptions and `watchRequest`: what one watch asks the server for.
 */
import { keyRange, type RangeOptions } from "./key-range.js"
import type { CreateRequestFields } from "./watch-codec.js"

/** Options of a watch: the range, the first revision, filters, previous values, progress and fragment settings. */
export interface WatchOptions extends RangeOptions {
  /**
   * First revision to deliver, inclusive. 0n/absent: events after the revision the server is at
   * when the watch is created.
   */
  readonly startRevision?: bigint | number | undefined
  /** attach each event's previous key-value (when still in history) */
  readonly prevKv?: boolean | undefined
  /** leave out PUT events */
  readonly noPut?: boolean | undefined
  /** leave out DELETE events */
  readonly noDelete?: boolean | undefined
  /** ask the server for periodic progress notifications while idle */
  readonly progressNotify?: boolean | undefined
  /** let the server split huge responses; the client merges the pieces back (always whole revisions) */
  readonly fragment?: boolean | undefined
  /** deliver the creation notice (`created: true`) as the first response */
  readonly createdNotify?: boolean | undefined
  /**
   * Only while the server has a leader (metadata `hasleader: true`, clientv3 `WithRequireLeader`);
   * losing it fails the watch with WatchNoLeader. Such watches share a stream of their own.
   */
  readonly requireLeader?: boolean | undefined
  /** extra gRPC metadata; watches with the same metadata share one gRPC stream */
  readonly metadata?: Readonly<Record<string, string>> | undefined
}

/** The immutable part of one watch's create request; the start revision moves as it progresses. */
export interface WatchSpec {
  readonly fields: Omit<CreateRequestFields, "startRevision">
  readonly startRevision: bigint
  readonly createdNotify: boolean
}

export const watchSpec = (key: string | Uint8Array, options: WatchOptions = {}): WatchSpec => {
  const range = keyRange(key, options)
  const filters: Array<number> = []
  if (options.noPut === true) filters.push(0)
  if (options.noDelete === true) filters.push(1)
  return {
    fields: {
      key: range.key,
      rangeEnd: range.rangeEnd,
      progressNotify: options.progressNotify === true,
      filters,
      prevKv: options.prevKv === true,
      fragment: options.fragment === true
    },
    startRevision: BigInt(options.startRevision ?? 0),
    createdNotify: options.createdNotify === true
  }
}

/** The metadata a watch's gRPC stream carries, `hasleader` included. */
export const watchMetadata = (options: WatchOptions = {}): Readonly<Record<string, string>> =>
  options.requireLeader === true ? { ...options.metadata, hasleader: "true" } : { ...options.metadata }

/** clientv3's `streamKeyFromCtx`: watches share a gRPC stream iff their metadata is equal. */
export const streamKey = (metadata: Readonly<Record<string, string>>): string =>
  JSON.stringify(
    Object.entries(metadata)
      .map(([k, v]) => [k.toLowerCase(), v] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  )
