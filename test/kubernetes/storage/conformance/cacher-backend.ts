/**
 * A Backend whose stores are Cachers over the etcd3 store: the same suite then runs through the
 * watch cache. Each store's cacher lives until the backend closes; every call first waits for the
 * cache to be ready (a real client would get 429 and retry).
 */
import { Effect, Exit, Scope } from "effect"
import { Cacher } from "../../../../src/kubernetes/cacher/cacher.js"
import type { StorageShape } from "../../../../src/kubernetes/storage/interfaces.js"
import type { WatchCacheShape } from "../../../../src/kubernetes/cacher/watch-cache.js"
import { compactWith } from "../../../../src/kubernetes/storage/etcd3/compact.js"
import { makeBackend } from "./backend.js"
import { type Backend, podAttrs, run } from "./support.js"

export const makeCacherBackend = async (
  name: string,
  endpoints: ReadonlyArray<string>
): Promise<Backend & { readonly close: () => Promise<void> }> => {
  const etcd3 = await makeBackend(name, endpoints)
  const scope = Effect.runSync(Scope.make())
  const caches: Array<WatchCacheShape> = []
  return {
    ...etcd3,
    cacher: true,
    newStore: (o = {}) => {
      const underlying = etcd3.newStore(o)
      const cacher = Effect.runSync(
        Scope.extend(
          Cacher.make(underlying.store, {
            resourcePrefix: "/pods/",
            groupResource: { group: "", resource: "pods" },
            getAttrs: podAttrs,
            typeMeta: { apiVersion: "v1", kind: "Pod" }
          }),
          scope
        )
      )
      caches.push(cacher.internals.watchCache)
      const ready = Effect.zipRight(
        Effect.sleep("5 millis"),
        Effect.suspend(() => (cacher.internals.ready.isReady ? Effect.void : Effect.fail("not ready")))
      ).pipe(Effect.retry({ times: 2000 }), Effect.orDie)
      const gate = <A, E>(e: Effect.Effect<A, E>) =>
        Effect.zipRight(cacher.internals.ready.isReady ? Effect.void : ready, e)
      const store: StorageShape = {
        create: (...a) => gate(cacher.create(...a)),
        delete: (...a) => gate(cacher.delete(...a)),
        watch: (...a) => gate(cacher.watch(...a)),
        get: (...a) => gate(cacher.get(...a)),
        getList: (...a) => gate(cacher.getList(...a)),
        guaranteedUpdate: (...a) => gate(cacher.guaranteedUpdate(...a)),
        stats: (...a) => gate(cacher.stats(...a)),
        readinessCheck: gate(cacher.readinessCheck),
        requestWatchProgress: cacher.requestWatchProgress,
        getCurrentResourceVersion: cacher.getCurrentResourceVersion,
        compactRevision: cacher.compactRevision
      }
      return { pathPrefix: underlying.pathPrefix, store }
    },
    // compacting etcd compacts the watch caches too (the apiserver's test does the same)
    compact: async (rev) => {
      const compacted = await run(compactWith(etcd3.client, rev))
      for (const c of caches) c.compact(compacted)
      return compacted
    },
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await etcd3.close()
    }
  }
}
