/**
 * Cacher.GetList (cacher.go, with ListFromCacheSnapshot on): a list served from the watch cache's
 * state at an RV — a single object's latest state, or a page of a snapshot — once the delegator
 * (delegator.ts) has decided the cache serves it; what the cache no longer holds goes to the storage
 * underneath. Each list served is counted (list-metrics.ts).
 */
import { Effect, Either } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import type { StatusError } from "../api/status.js"
import { encodeContinue } from "../storage/continue.js"
import type { ListOptions } from "../storage/interfaces.js"
import { Everything, type SelectionPredicate } from "../storage/selection-predicate.js"
import { type CacherDeps, filterFor } from "./cacher-deps.js"
import { recordListCacheMetrics } from "./list-metrics.js"
import type { StoreElement } from "./watch-cache.js"

/**
 * A page of a list served from a cache snapshot: items from `fromKey` on that pass the
 * predicate, at most `limit` (0: all), with a continue token (the next key after the last
 * item, at the snapshot's RV) when more would follow.
 */
const page = (
  d: CacherDeps,
  elements: ReadonlyArray<StoreElement>,
  rv: bigint,
  listKey: string,
  recursive: boolean,
  pred: SelectionPredicate,
  limit: number,
  fromKey: string
): Effect.Effect<KubeList> => {
  const filter = filterFor(listKey, recursive, pred)
  const items: Array<KubeObject> = []
  let i = 0
  while (i < elements.length && elements[i]!.key < fromKey) i++
  let lastKey = ""
  let more = 0
  for (; i < elements.length; i++) {
    const el = elements[i]!
    if (!filter(el.key, el.attrs)) continue
    if (limit > 0 && items.length >= limit) {
      more++
      continue
    }
    items.push(el.object)
    lastKey = el.key
  }
  const metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } = {
    resourceVersion: rv.toString()
  }
  if (more > 0) {
    const token = encodeContinue(lastKey + "\u0000", listKey, rv)
    if (Either.isRight(token)) metadata.continue = token.right
    if (pred.label.empty() && pred.field.empty()) metadata.remainingItemCount = more
  }
  return Effect.as(recordListCacheMetrics(d.listMetrics, elements.length, items.length), { metadata, items })
}

/** the cache's state at `rv` (0: its latest), after waiting for it; a state it no longer has goes to etcd */
export const snapshotList = (
  d: CacherDeps,
  key: string,
  options: ListOptions,
  k: string,
  recursive: boolean,
  rv: bigint,
  limit: number,
  fromKey: string
): Effect.Effect<KubeList, StatusError> =>
  Effect.gen(function* () {
    const { storage, watchCache } = d
    const pred = options.predicate ?? Everything
    // below a compaction the storage has seen, etcd answers (with its "too old" error)
    if (rv !== 0n && rv < (yield* storage.compactRevision)) return yield* storage.getList(key, options)
    if (!recursive) {
      // a single object: the latest state (Exact at an older RV goes to etcd)
      if (rv !== 0n && rv < watchCache.resourceVersion) return yield* storage.getList(key, options)
      const el = watchCache.store.get(k)
      const filter = filterFor(k, false, pred)
      return {
        metadata: { resourceVersion: watchCache.resourceVersion.toString() },
        items: el !== undefined && filter(el.key, el.attrs) ? [el.object] : []
      }
    }
    const snap = rv === 0n ? watchCache.snapshot(k) : watchCache.snapshotAt(rv, k)
    if (snap._tag !== "Snapshot") return yield* storage.getList(key, options)
    return yield* page(d, snap.elements, snap.resourceVersion, k, true, pred, limit, fromKey)
  })
