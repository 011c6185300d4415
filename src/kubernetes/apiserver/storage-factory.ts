/**
 * storagebackend/factory + the registry's StorageWithCacher: the Storage of one resource, an etcd3
 * store under `--etcd-prefix` (its values through the resource's encryption transformer), with a
 * Cacher in front unless `--watch-cache=false` (or `--default-watch-cache-size=0`). The storage
 * lives in the given scope: closing it stops the Cacher's reflector and ends its watches.
 */
import { Effect, type Scope } from "effect"
import type { EtcdClientShape } from "../../client/client.js"
import { Cacher } from "../cacher/cacher.js"
import type { StorageShape } from "../storage/interfaces.js"
import { Etcd3Store } from "../storage/etcd3/store.js"
import type { ValueTransformer } from "../storage/value/transformer.js"
import type { GroupResource } from "../api/status.js"
import { convertingStorage } from "./converting-storage.js"
import { apiVersionOf, groupResourceOf, type ResourceInfo, resourcePrefixOf } from "./resources.js"

export interface StorageFactoryConfig {
  readonly client: EtcdClientShape
  /** --etcd-prefix */
  readonly etcdPrefix: string
  /** --watch-cache */
  readonly watchCache: boolean
  /** --default-watch-cache-size: 0 turns the cache off; otherwise the ring sizes itself (as since 1.19) */
  readonly defaultWatchCacheSize: number
  /** --encryption-provider-config's transformer of each resource */
  readonly transformerFor: (gr: GroupResource) => ValueTransformer
  /**
   * the etcd3 stores made so far, by resource prefix: resources stored together (core/v1 and
   * events.k8s.io/v1 Events) share one, and so one lease manager (leases shared as the event REST's)
   */
  readonly etcdStores?: Map<string, StorageShape> | undefined
}

export const makeResourceStorage = (
  config: StorageFactoryConfig,
  info: ResourceInfo
): Effect.Effect<StorageShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const gr = groupResourceOf(info)
    const resourcePrefix = resourcePrefixOf(info)
    const typeMeta = { apiVersion: apiVersionOf(info.group, info.storageVersion), kind: info.kind }
    const make = () =>
      Etcd3Store.makeWith(config.client, {
        pathPrefix: config.etcdPrefix,
        resourcePrefix,
        groupResource: gr,
        transformer: config.transformerFor(gr),
        getAttrs: info.getAttrs,
        typeMeta
      })
    let etcd = config.etcdStores?.get(resourcePrefix)
    if (etcd === undefined) {
      etcd = make()
      config.etcdStores?.set(resourcePrefix, etcd)
    }
    // a resource stored as another version's objects (events.k8s.io/v1 Events) converts below the cache
    const store = info.storageCodec === undefined ? etcd : convertingStorage(etcd, info.storageCodec)
    if (!config.watchCache || config.defaultWatchCacheSize === 0) return store
    return yield* Cacher.make(store, {
      resourcePrefix: `${resourcePrefix}/`,
      groupResource: gr,
      typeMeta,
      getAttrs: info.getAttrs
    })
  })
