/**
 * The etcd2 store's own parts (etcd_helper.go's `etcdHelper` struct, twin of the etcd3 store's
 * store-deps.ts): the v2 keys client, the config and where the resource's keys live, set once per
 * store; and the small steps every operation shares (prepare a key, a v2 error as a Status).
 */
import { Effect } from "effect"
import { type GroupResource, newInternalError, type StatusError } from "../api/status.js"
import { normalizePathPrefix, prepareKey } from "../storage/etcd3/store.js"
import type { AttrFunc } from "../storage/selection-predicate.js"
import { errorText, type KeysError } from "./errors.js"
import type { WatcherMarks } from "./high-water-mark.js"
import type { KeysClientShape } from "./keys-client.js"

/** An etcd2 storage's configuration: its path and resource prefixes, group resource, attrs, bookmark type and marks. */
export interface Etcd2StoreConfig {
  /** key prefix of all objects, default "/registry" */
  readonly pathPrefix?: string | undefined
  /** every key must start with it, e.g. "/pods/" */
  readonly resourcePrefix: string
  readonly groupResource: GroupResource
  readonly getAttrs?: AttrFunc | undefined
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** high-water marks of every watch of this store (default: one per watch) */
  readonly watcherMarks?: (() => WatcherMarks) | undefined
}

export interface V2StoreDeps {
  readonly keys: KeysClientShape
  readonly config: Etcd2StoreConfig
  /** the v2 key prefix of every object, normalised ("/registry/") */
  readonly pathPrefix: string
  readonly gr: GroupResource
  /** the current index of the resource (X-Etcd-Index of a quorum get, or of its "not found") */
  readonly currentIndex: Effect.Effect<number, StatusError>
}

/** A v2 error the storage does not interpret: 500 with the v2 client's error text. */
export const fromKeys = (e: KeysError): StatusError => newInternalError(errorText(e))

export const makeV2StoreDeps = (keys: KeysClientShape, config: Etcd2StoreConfig): V2StoreDeps => {
  const pathPrefix = normalizePathPrefix(config.pathPrefix)
  const resourceKey =
    pathPrefix + (config.resourcePrefix.startsWith("/") ? config.resourcePrefix.slice(1) : config.resourcePrefix)
  return {
    keys,
    config,
    pathPrefix,
    gr: config.groupResource,
    currentIndex: keys.get(resourceKey, { quorum: true }).pipe(
      Effect.map((r) => r.etcdIndex),
      Effect.catchAll((e) => (e._tag === "KeyNotFound" ? Effect.succeed(e.index) : Effect.fail(fromKeys(e))))
    )
  }
}

/** The v2 key of a Storage key (prepareKey), failing as the apiserver does. */
export const prepare = (s: V2StoreDeps, key: string, recursive: boolean): Effect.Effect<string, StatusError> =>
  Effect.suspend(() => prepareKey(s.pathPrefix, s.config.resourcePrefix, key, recursive))
