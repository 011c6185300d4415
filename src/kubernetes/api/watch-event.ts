/**
 * apimachinery's watch.Event: what every storage watch (etcd3 watchChan, the etcd2 watcher, the
 * Cacher) and the HTTP watch deliver. ADDED/MODIFIED carry the new state, DELETED the last state
 * with the deletion resourceVersion, BOOKMARK an empty object of the watched kind carrying only
 * `metadata.resourceVersion` (and possibly the initial-events-end annotation), ERROR a Status.
 */
import type { KubeObject } from "./object-meta.js"
import type { Status } from "./status.js"

/** The type of a watch event, as on the wire. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"

/** apimachinery's watch.Event: an object with its change, or a Status for ERROR. */
export type WatchEvent =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; readonly object: KubeObject }
  | { readonly type: "ERROR"; readonly object: Status }

/** `metav1.InitialEventsAnnotationKey`: set to "true" on the bookmark that ends the initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"

/** An ADDED event of `object`. */
export const added = (object: KubeObject): WatchEvent => ({ type: "ADDED", object })
/** A MODIFIED event of `object`'s new state. */
export const modified = (object: KubeObject): WatchEvent => ({ type: "MODIFIED", object })
/** A DELETED event of `object`'s last state. */
export const deleted = (object: KubeObject): WatchEvent => ({ type: "DELETED", object })
/** An ERROR event carrying `status`. */
export const errorEvent = (status: Status): WatchEvent => ({ type: "ERROR", object: status })

/** A BOOKMARK: only the resourceVersion (and, for the end of initial events, the annotation). */
export const bookmark = (
  rv: bigint | string,
  initialEventsEnd = false,
  typeMeta: { apiVersion?: string; kind?: string } = {}
): WatchEvent => ({
  type: "BOOKMARK",
  object: {
    ...typeMeta,
    metadata: initialEventsEnd
      ? { resourceVersion: rv.toString(), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" } }
      : { resourceVersion: rv.toString() }
  }
})
