/**
 * The Cacher's watchers (cacher.go's `watchers` indices: allWatchers keyed by namespace/name scope,
 * valueWatchers keyed by the indexed trigger's value), as a service. The dispatcher looks up the
 * candidates of an event here; the Cacher's Storage face adds and removes watchers. Its layer's
 * scope is the Cacher's: closing it stops every watcher.
 */
import { Context, Effect, Layer } from "effect"
import type { CacheWatcher } from "./cache-watcher.js"
import { CacherConfig } from "./config.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

const scopeKey = (namespace: string, name: string) => `${namespace}\u0000${name}`

/** cacher.go's indexed watchers as the Cacher's parts see them */
export interface IndexedWatchersShape {
  /** the watchers that asked for bookmarks (the bookmark tick walks only these) */
  readonly bookmarkWatchers: ReadonlySet<CacheWatcher>
  /** how many were terminated for not keeping up */
  readonly terminated: number
  readonly size: number
  add(w: CacheWatcher): void
  /** forget: out of every index, and stopped */
  remove(w: CacheWatcher): void
  /** closed for not keeping up: its watch ends without an ERROR */
  terminate(w: CacheWatcher): void
  terminateAll(): void
  /** startDispatching: the watchers that may care about an event (its namespace/name scopes, its trigger values) */
  candidates(e: WatchCacheEvent, out: Array<CacheWatcher>): void
}

class IndexedWatchersState implements IndexedWatchersShape {
  private readonly all = new Map<number, CacheWatcher>()
  private readonly byScope = new Map<string, Set<CacheWatcher>>()
  private readonly byTrigger = new Map<string, Set<CacheWatcher>>()
  /** the watchers that asked for bookmarks (the bookmark tick walks only these) */
  readonly bookmarkWatchers = new Set<CacheWatcher>()
  /** how many were terminated for not keeping up */
  terminated = 0

  /** `trigger`: the indexed trigger's field, if the resource has one */
  constructor(private readonly trigger: string | undefined) {}

  get size(): number {
    return this.all.size
  }

  private indexOf(w: CacheWatcher): [Map<string, Set<CacheWatcher>>, string] {
    return w.triggerValue !== undefined
      ? [this.byTrigger, w.triggerValue]
      : [this.byScope, scopeKey(w.namespace, w.name)]
  }

  add(w: CacheWatcher): void {
    this.all.set(w.id, w)
    const [index, k] = this.indexOf(w)
    let set = index.get(k)
    if (set === undefined) index.set(k, (set = new Set()))
    set.add(w)
    if (w.allowWatchBookmarks) this.bookmarkWatchers.add(w)
  }

  /** forget: out of every index, and stopped */
  remove(w: CacheWatcher): void {
    if (!this.all.delete(w.id)) return
    const [index, k] = this.indexOf(w)
    const set = index.get(k)
    set?.delete(w)
    if (set?.size === 0) index.delete(k)
    this.bookmarkWatchers.delete(w)
    w.stop()
  }

  /** closed for not keeping up: its watch ends without an ERROR */
  terminate(w: CacheWatcher): void {
    this.terminated++
    w.terminated = true
    this.remove(w)
  }

  terminateAll(): void {
    for (const w of Array.from(this.all.values())) this.remove(w)
  }

  /** startDispatching: the watchers that may care about an event (its namespace/name scopes, its trigger values) */
  candidates(e: WatchCacheEvent, out: Array<CacheWatcher>): void {
    const ns1 = e.attrs.fields["metadata.namespace"] ?? ""
    const ns2 = e.prevAttrs?.fields["metadata.namespace"] ?? ns1
    const n1 = e.attrs.fields["metadata.name"] ?? ""
    const n2 = e.prevAttrs?.fields["metadata.name"] ?? n1
    const seen = new Set<string>()
    for (const ns of [ns1, ns2, ""]) {
      for (const name of [n1, n2, ""]) {
        const k = scopeKey(ns, name)
        if (seen.has(k)) continue
        seen.add(k)
        const set = this.byScope.get(k)
        if (set !== undefined) for (const w of set) out.push(w)
      }
    }
    if (this.trigger === undefined) return
    const v1 = e.attrs.fields[this.trigger] ?? ""
    const v2 = e.prevAttrs?.fields[this.trigger] ?? v1
    for (const v of v1 === v2 ? [v1] : [v1, v2]) {
      const set = this.byTrigger.get(v)
      if (set !== undefined) for (const w of set) out.push(w)
    }
  }
}

export class IndexedWatchers extends Context.Tag("etcd-effect/kubernetes/cacher/IndexedWatchers")<
  IndexedWatchers,
  IndexedWatchersShape
>() {
  static readonly layer: Layer.Layer<IndexedWatchers, never, CacherConfig> = Layer.scoped(
    IndexedWatchers,
    Effect.gen(function* () {
      const config = yield* CacherConfig
      const set = new IndexedWatchersState(config.indexedTrigger?.field)
      yield* Effect.addFinalizer(() => Effect.sync(() => set.terminateAll()))
      return set
    })
  )
}
