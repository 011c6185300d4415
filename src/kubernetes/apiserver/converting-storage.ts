/**
 * A resource served in a shape other than the stored one (events.k8s.io/v1 Events, stored as
 * core/v1 Events under /registry/events): the storage below converts every object on its way in
 * (`toStorage`) and out (`fromStorage`), as the apiserver's storage codec decodes to the internal
 * type and encodes to the storage version. It sits under the Cacher, so the watch cache holds the
 * served shape and each object is converted once, not once per watcher. Selection predicates
 * see the served shape too (their field labels are the served version's).
 */
import { Effect, Stream } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import type { WatchEvent } from "../api/watch-event.js"
import type { ListOptions, StorageShape } from "../storage/interfaces.js"

export interface StorageCodec {
  /** the served object as stored */
  readonly toStorage: (obj: KubeObject) => KubeObject
  /** the stored object as served */
  readonly fromStorage: (obj: KubeObject) => KubeObject
}

export const convertingStorage = (inner: StorageShape, codec: StorageCodec): StorageShape => {
  const out = codec.fromStorage
  const into = codec.toStorage
  const opt = (o: KubeObject | undefined) => (o === undefined ? undefined : into(o))
  const listOptions = (o: ListOptions): ListOptions =>
    o.predicate === undefined
      ? o
      : { ...o, predicate: { ...o.predicate, getAttrs: (stored) => o.predicate!.getAttrs(out(stored)) } }
  const event = (e: WatchEvent): WatchEvent => (e.type === "ERROR" ? e : { type: e.type, object: out(e.object) })
  const { watchSink: _sink, ...rest } = inner
  return {
    ...rest,
    create: (key, obj, ttl) => Effect.map(inner.create(key, into(obj), ttl), out),
    delete: (key, o) =>
      inner
        .delete(key, {
          preconditions: o?.preconditions,
          cachedExistingObject: opt(o?.cachedExistingObject),
          validateDeletion: o?.validateDeletion === undefined ? undefined : (stored) => o.validateDeletion!(out(stored))
        })
        .pipe(Effect.map(out)),
    watch: (key, o) => inner.watch(key, listOptions(o)).pipe(Effect.map((s) => Stream.map(s, event))),
    get: (key, o) => inner.get(key, o).pipe(Effect.map((obj) => (obj === undefined ? undefined : out(obj)))),
    getList: (key, o) =>
      inner.getList(key, listOptions(o)).pipe(Effect.map((list) => ({ ...list, items: list.items.map(out) }))),
    guaranteedUpdate: (key, o) =>
      inner
        .guaranteedUpdate(key, {
          ignoreNotFound: o.ignoreNotFound,
          preconditions: o.preconditions,
          cachedExistingObject: opt(o.cachedExistingObject),
          tryUpdate: (stored, meta) =>
            o.tryUpdate(out(stored), meta).pipe(Effect.map((r) => ({ ...r, object: into(r.object) })))
        })
        .pipe(Effect.map(out))
  }
}
