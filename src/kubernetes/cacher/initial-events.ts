/**
 * The ADDED events a watch from resourceVersion 0 starts with (the watch cache's state under its
 * key that passes its selectors), shared by every watch that asks for the same key and selectors
 * while the cache has not changed.
 *
 * When many clients reconnect at once (an apiserver restart: every kube-proxy's watch of
 * EndpointSlices with one label selector, every informer of a kind), each would walk the same
 * objects and test the same selectors. With the list made once per cache state, 10,000 watches
 * opened together over 10,000 objects cost one walk per namespace instead of 10,000 (issue 29,
 * docs/benchmarks.md "The Kubernetes side"). The events are read-only: a watcher's head is a new
 * array when it adds a bookmark.
 */
import type { WatchEvent } from "../api/watch-event.js"
import type { Attrs } from "../storage/selection-predicate.js"
import type { WatchCacheShape } from "./watch-cache.js"

/** At most this many distinct key+selector lists are kept for one cache state. */
const MAX_LISTS = 1024

export interface InitialList {
  readonly events: ReadonlyArray<WatchEvent>
  readonly resourceVersion: bigint
}

export class InitialEvents {
  private generation = -1
  private resourceVersion = -1n
  private readonly lists = new Map<string, InitialList>()

  /**
   * The state under `key` (a prefix for a recursive watch) that `filter` keeps, as ADDED events;
   * `selectors` names the filter (the label and field selectors' canonical text).
   */
  of(
    watchCache: WatchCacheShape,
    key: string,
    recursive: boolean,
    selectors: string,
    filter: (key: string, attrs: Attrs) => boolean
  ): InitialList {
    // a bookmark moves the cache's RV without changing its objects: a list carries the RV it was read at
    if (watchCache.generation !== this.generation || watchCache.resourceVersion !== this.resourceVersion) {
      this.generation = watchCache.generation
      this.resourceVersion = watchCache.resourceVersion
      this.lists.clear()
    }
    const id = `${recursive ? "r" : "s"} ${key} ${selectors}`
    const known = this.lists.get(id)
    if (known !== undefined) return known
    // the filter keeps only keys under `key` (or `key` itself), so its prefix bounds the walk
    const snap = watchCache.snapshot(key)
    const events: Array<WatchEvent> = []
    for (const el of snap.elements) if (filter(el.key, el.attrs)) events.push({ type: "ADDED", object: el.object })
    const list: InitialList = { events, resourceVersion: snap.resourceVersion }
    if (this.lists.size >= MAX_LISTS) this.lists.clear()
    this.lists.set(id, list)
    return list
  }
}
