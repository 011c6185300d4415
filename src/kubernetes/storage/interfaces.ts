/**
 * storage.Interface (k8s.io/apiserver/pkg/storage/interfaces.go) as an Effect service. Implemented
 * by the etcd3 store (`storage/etcd3/store.ts`), the etcd2 store (`etcd2/store.ts`) and the Cacher,
 * so a program switches backends or the watch cache on and off by choosing a Layer.
 *
 * Errors a Go caller gets as `error` from the call are failures of the returned Effect; errors
 * after a watch is established are ERROR events in its Stream, which then ends (it never fails).
 */
import { Context, type Effect, type Scope, type Stream } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import type { StatusError } from "../api/status.js"
import type { WatchEvent } from "../api/watch-event.js"
import type { SelectionPredicate } from "./selection-predicate.js"

/** metav1.ResourceVersionMatch: how a list's resourceVersion is read ("" as the legacy rules, NotOlderThan, Exact). */
export type ResourceVersionMatch = "" | "NotOlderThan" | "Exact"

/** storage.ListOptions (used by GetList and Watch). */
export interface ListOptions {
  /** "" unset, "0" any, "N" a revision */
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: ResourceVersionMatch | undefined
  /** defaults to Everything */
  readonly predicate?: SelectionPredicate | undefined
  /** a prefix list/watch (the key must end with "/") */
  readonly recursive?: boolean | undefined
  /** internal (cacher's reflector): etcd progress notifications become BOOKMARKs */
  readonly progressNotify?: boolean | undefined
  /** watch-list: initial ADDED events, then (with allowWatchBookmarks) the end bookmark */
  readonly sendInitialEvents?: boolean | undefined
  /**
   * when the watch will be ended (ms on the Effect Clock; the request context's deadline): the
   * Cacher sends a watcher with bookmarks its last one 2 s before it
   */
  readonly deadline?: number | undefined
}

/** storage.GetOptions. */
export interface GetOptions {
  readonly resourceVersion?: string | undefined
  /** a missing object is not an error: the result is undefined */
  readonly ignoreNotFound?: boolean | undefined
}

/** storage.Preconditions: what must hold of the stored object for an update or delete. */
export interface Preconditions {
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

/** storage.ResponseMeta: what the update function learns of the stored object besides itself. */
export interface ResponseMeta {
  /** seconds left of its TTL (0: none) */
  readonly ttl: number
  readonly resourceVersion: bigint
}

/** The update function's answer: the new object, and optionally a TTL in seconds for it. */
export interface UpdateResult {
  readonly object: KubeObject
  readonly ttl?: number | undefined
}

/** storage.UpdateFunc: called with the current object (retried on conflict with a fresh one). */
export type UpdateFunc = (input: KubeObject, meta: ResponseMeta) => Effect.Effect<UpdateResult, StatusError>

/** storage.ValidateObjectFunc for delete: may refuse a deletion given the current object. */
export type ValidateDeletion = (obj: KubeObject) => Effect.Effect<void, StatusError>

/** storage.Stats: how many objects a resource has, and their average size when known. */
export interface Stats {
  readonly objectCount: number
  /** average size of the stored values, when known */
  readonly estimatedAverageObjectSizeBytes?: number | undefined
}

/**
 * A consumer that takes a watch's events synchronously, with no fiber of its own (an HTTP watch
 * writing to its socket). `push` gets events in order and says whether it wants more now; after
 * a false it gets nothing until it calls its handle's `resume`. `end` comes once, last: after an
 * ERROR event if there is one, when the watch is stopped, or when the watcher was terminated
 * for not keeping up (then with no ERROR, as the apiserver's cacheWatcher).
 */
export interface WatchSink {
  /** takes the next events in order; false asks for none until `resume` */
  readonly push: (events: ReadonlyArray<WatchEvent>) => boolean
  /** the watch ended (called once, last) */
  readonly end: () => void
}

/** A sink watch while it runs; closing the scope it was started in stops it. */
export interface WatchHandle {
  /** the sink drained: deliver what waited */
  readonly resume: () => void
}

/** storage.Interface: create, delete, get, list, guaranteed update, watch and count of one resource's objects. */
export interface StorageShape {
  /** storage.Interface.Create: fails AlreadyExists; a set resourceVersion is refused */
  readonly create: (key: string, obj: KubeObject, ttlSeconds?: number) => Effect.Effect<KubeObject, StatusError>
  /** storage.Interface.Delete: the deleted object, with the deletion resourceVersion */
  readonly delete: (
    key: string,
    options?: {
      readonly preconditions?: Preconditions | undefined
      readonly validateDeletion?: ValidateDeletion | undefined
      readonly cachedExistingObject?: KubeObject | undefined
    }
  ) => Effect.Effect<KubeObject, StatusError>
  /**
   * storage.Interface.Watch: a Stream of events from after `resourceVersion` (with initial ADDED
   * events for RV "0"/"" or sendInitialEvents). The Effect fails only on what Go returns from the
   * call (bad key, bad resourceVersion); later errors are a last ERROR event. The stream's own
   * scope is the watch: interrupting its consumer stops it.
   */
  readonly watch: (key: string, options: ListOptions) => Effect.Effect<Stream.Stream<WatchEvent>, StatusError>
  /**
   * The same watch into a sink, for storages that can deliver without a fiber per watcher (the
   * Cacher). Use `watchInto` (storage/watch-sink.ts), which falls back to the Stream.
   */
  readonly watchSink?: (
    key: string,
    options: ListOptions,
    sink: WatchSink
  ) => Effect.Effect<WatchHandle, StatusError, Scope.Scope>
  /** storage.Interface.Get; undefined only with ignoreNotFound */
  readonly get: (key: string, options?: GetOptions) => Effect.Effect<KubeObject | undefined, StatusError>
  /** storage.Interface.GetList */
  readonly getList: (key: string, options: ListOptions) => Effect.Effect<KubeList, StatusError>
  /** storage.Interface.GuaranteedUpdate: read-modify-write with optimistic retry */
  readonly guaranteedUpdate: (
    key: string,
    options: {
      readonly ignoreNotFound?: boolean | undefined
      readonly preconditions?: Preconditions | undefined
      readonly tryUpdate: UpdateFunc
      readonly cachedExistingObject?: KubeObject | undefined
    }
  ) => Effect.Effect<KubeObject, StatusError>
  /** storage.Interface.Stats (Count): how many objects are stored under the prefix `key` */
  readonly stats: (key: string) => Effect.Effect<Stats, StatusError>
  /** storage.Interface.ReadinessCheck */
  readonly readinessCheck: Effect.Effect<void, StatusError>
  /** storage.Interface.RequestWatchProgress: ask etcd for a progress notification on watches */
  readonly requestWatchProgress: Effect.Effect<void, StatusError>
  /**
   * Whether the Cacher may rely on RequestWatchProgress (the feature support checker's
   * RequestWatchProgress; etcd3/feature-support.ts). Absent: it may.
   */
  readonly requestWatchProgressSupported?: Effect.Effect<boolean>
  /** storage.Interface.GetCurrentResourceVersion: a quorum read of the current revision */
  readonly getCurrentResourceVersion: Effect.Effect<bigint, StatusError>
  /** storage.Interface.CompactRevision: the last compaction revision this store has seen */
  readonly compactRevision: Effect.Effect<bigint>
}

/** The storage of one resource (its key prefix, e.g. "/registry/pods/"). */
export class Storage extends Context.Tag("etcd-effect/kubernetes/Storage")<Storage, StorageShape>() {}
