/** cacher's watchCacheEvent: one storage event as the watch cache records and dispatches it. */
import type { KubeObject } from "../api/object-meta.js"
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
}
