/** cacher's watchCacheEvent: one storage event as the watch cache records and dispatches it. */
import type { KubeObject } from "../api/object-meta.js"
import type { WatchEvent } from "../api/watch-event.js"
import type { Attrs } from "../storage/selection-predicate.js"

export interface WatchCacheEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"
  /** the key in the cache (storage key) */
  readonly key: string
  readonly object: KubeObject
  readonly attrs: Attrs
  /** the object before this event (from the cache's store), if it existed */
  readonly prevObject: KubeObject | undefined
  readonly prevAttrs: Attrs | undefined
  readonly resourceVersion: bigint
  /** when the cache recorded it (ms, the layer's Clock): drives the ring's size */
  readonly recordTime: number
  /**
   * The watch events made of it, one per type, shared by every watcher it goes to (upstream's
   * CacheableObject): a consumer that serializes can encode each once, keyed by identity.
   */
  converted?: { ADDED?: WatchEvent; MODIFIED?: WatchEvent; DELETED?: WatchEvent }
}

/** the ADDED / MODIFIED / DELETED watch event of a cache event, made once and shared */
export const convertedAs = (e: WatchCacheEvent, type: "ADDED" | "MODIFIED" | "DELETED"): WatchEvent => {
  const cache = (e.converted ??= {})
  const hit = cache[type]
  if (hit !== undefined) return hit
  // DELETED: the last state a watcher could see, at the deletion's (or the update's) RV
  const made: WatchEvent =
    type === "DELETED"
      ? {
          type,
          object: {
            ...e.prevObject!,
            metadata: { ...e.prevObject!.metadata, resourceVersion: e.resourceVersion.toString() }
          }
        }
      : { type, object: e.object }
  cache[type] = made
  return made
}
