/** What one Cacher is configured with (cacher.Config), as a service its parts read. */
import { Context } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import type { GroupResource } from "../api/status.js"
import type { AttrFunc } from "../storage/selection-predicate.js"

/**
 * What a Cacher is configured with: the resource's prefix and group, its attrs and key functions,
 * the cache's sizes.
 */
export interface CacherConfigShape {
  /** the resource's key prefix in the storage, e.g. "/pods/" */
  readonly resourcePrefix: string
  readonly groupResource: GroupResource
  /** apiVersion/kind of BOOKMARK objects */
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** labels and selectable fields of an object (default: metadata.name/namespace) */
  readonly getAttrs?: AttrFunc | undefined
  /** an object's storage key (default: prefix + namespace/name, or prefix + name) */
  readonly keyFunc?: ((obj: KubeObject) => string) | undefined
  /** an indexed trigger: watchers selecting `field=value` get only events whose object (or previous object) has that value */
  readonly indexedTrigger?: { readonly field: string } | undefined
  /** the ring's upper bound (default 100 × 1024) */
  readonly upperBoundCapacity?: number | undefined
  /** how often a watcher that allows bookmarks gets one (default 1 min, as the apiserver) */
  readonly bookmarkFrequencyMs?: number | undefined
}

export class CacherConfig extends Context.Tag("etcd-effect/kubernetes/cacher/CacherConfig")<
  CacherConfig,
  CacherConfigShape
>() {}

/** the prefix as a key prefix (ends with "/") */
export const resourcePrefixOf = (config: CacherConfigShape): string =>
  config.resourcePrefix.endsWith("/") ? config.resourcePrefix : config.resourcePrefix + "/"
