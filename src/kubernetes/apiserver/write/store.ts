/**
 * registry/generic/registry/store.go on the write pipeline: Create, Update (an update that
 * leaves a deleting object without finalizers removes it), Delete (finalizers — the garbage
 * collector's orphan/foregroundDeletion per propagationPolicy among them — keep an object,
 * marked with deletionTimestamp, until the last one goes) and DeleteCollection. Each runs the
 * stages of its resource's pipeline in order and ends in `persist`, so `dryRun=All` runs
 * everything and writes nothing.
 */
import { Effect } from "effect"
import type { KubeList, KubeObject } from "../../api/object-meta.js"
import { AlreadyExists, newConflict, type StatusError } from "../../api/status.js"
import type { Preconditions, ValidateDeletion } from "../../storage/interfaces.js"
import type { SelectionPredicate } from "../../storage/selection-predicate.js"
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from "../kinds/object-meta.js"
import type { Obj } from "../kinds/strategy.js"
import { apiVersionOf, groupResourceOf, keyOf } from "../resources.js"
import { prepareCreate, prepareUpdate, timestamp } from "./defaulting.js"
import { ignoreManagedFieldsTimestamps, unchanged } from "./managed-fields-equality.js"
import type { DeleteOptions } from "./options.js"
import { persist } from "./persist.js"
import { type Operation, type ObjectStage, pipelineFor, type WriteContext } from "./pipeline.js"

export const OPTIMISTIC_LOCK_ERROR =
  "the object has been modified; please apply your changes to the latest version and try again"

const run = (
  stages: ReadonlyArray<ObjectStage>,
  ctx: WriteContext,
  op: Operation,
  obj: Obj,
  old: KubeObject | undefined
): Effect.Effect<void, StatusError> => Effect.forEach(stages, (stage) => stage(ctx, op, obj, old), { discard: true })

/** Defaulting, the first stage after decoding (the patch handler runs it on the patched object). */
export const defaulted = (ctx: WriteContext, op: Operation, obj: Obj): Effect.Effect<Obj, StatusError> =>
  Effect.as(run(pipelineFor(ctx.info).defaulting, ctx, op, obj, undefined), obj)

const isDeleting = (o: KubeObject) => (o.metadata.deletionTimestamp ?? "") !== ""

/**
 * A CRD's None conversion: the stored object as the request's version sees it (apiVersion
 * rewritten; pruned and defaulted by that version's schema, as the storage codec reads it).
 */
const inRequestVersion = (ctx: WriteContext, obj: KubeObject): KubeObject => {
  if (!ctx.info.custom || ctx.apiVersion === undefined) return obj
  const version = ctx.apiVersion.slice(ctx.apiVersion.indexOf("/") + 1)
  const read = ctx.info.readAs?.(obj, version) ?? obj
  return read.apiVersion === ctx.apiVersion ? read : { ...read, apiVersion: ctx.apiVersion }
}

/** …and as it is stored: in the storage version. */
const inStorageVersion = (ctx: WriteContext, obj: Obj): Obj => {
  if (!ctx.info.custom) return obj
  const storage = apiVersionOf(ctx.info.group, ctx.info.storageVersion)
  if (obj["apiVersion"] !== storage) ctx.info.toStorage?.(obj)
  obj["apiVersion"] = storage
  return obj
}

/** Store.Create: admission, BeforeCreate, validation, then persist. */
export const create = (ctx: WriteContext, obj: Obj): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const p = pipelineFor(ctx.info)
    yield* run(p.admission, ctx, "CREATE", obj, undefined)
    const prepared = prepareCreate(ctx, obj)
    yield* run(p.validation, ctx, "CREATE", prepared, undefined)
    const key = keyOf(ctx.info, ctx.namespace, prepared.metadata.name!)
    return yield* persist(ctx)
      .create(key, inStorageVersion(ctx, prepared))
      .pipe(
        Effect.catchTag("AlreadyExists", (e) =>
          // an object still being deleted says so
          Effect.flatMap(Effect.either(ctx.storage.get(key)), (cur) =>
            Effect.fail(
              cur._tag === "Right" && cur.right !== undefined && isDeleting(cur.right)
                ? new AlreadyExists({ message: `object is being deleted: ${e.message}`, details: e.details })
                : e
            )
          )
        )
      )
  })

/** ShouldDeleteDuringUpdate: no finalizers left on an object whose deletion was requested without a grace period. */
const shouldDeleteDuringUpdate = (ctx: WriteContext, obj: Obj, old: KubeObject): boolean =>
  (obj.metadata.finalizers ?? []).length === 0 &&
  isDeleting(old) &&
  (old.metadata.deletionGracePeriodSeconds ?? 0) === 0 &&
  ctx.strategy.deleteDuringUpdate?.(obj) !== false

/**
 * Store.Update: the new object from the current one (a PUT body, a patched copy), the
 * optimistic lock (no resourceVersion: an unconditional update), admission, BeforeUpdate,
 * validation, persist. The update that removes the last finalizer of a deleting object removes
 * it, and answers with the request's object.
 */
export const update = (
  ctx: WriteContext,
  name: string,
  updated: (current: KubeObject) => Effect.Effect<Obj, StatusError>,
  preconditions?: Preconditions
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const p = pipelineFor(ctx.info)
    const key = keyOf(ctx.info, ctx.namespace, name)
    let toDelete: Obj | undefined
    const out = yield* persist(ctx).update(key, {
      preconditions,
      tryUpdate: (stored) =>
        Effect.gen(function* () {
          toDelete = undefined
          const current = inRequestVersion(ctx, stored)
          const obj = yield* updated(current)
          const rv = obj.metadata.resourceVersion ?? ""
          if (rv === "") obj.metadata.resourceVersion = current.metadata.resourceVersion
          else if (rv !== current.metadata.resourceVersion)
            return yield* Effect.fail(newConflict(groupResourceOf(ctx.info), name, OPTIMISTIC_LOCK_ERROR))
          yield* run(p.admission, ctx, "UPDATE", obj, current)
          // changes that only touch managedFields times are not changes (FieldManager cannot see defaulting)
          const prepared = ignoreManagedFieldsTimestamps(prepareUpdate(ctx, obj, current), current)
          yield* run(p.validation, ctx, "UPDATE", prepared, current)
          if (shouldDeleteDuringUpdate(ctx, prepared, current)) {
            toDelete = prepared
            return { object: stored }
          }
          const next = inStorageVersion(ctx, prepared)
          // no change: the stored bytes again, which the etcd3 store does not write
          if (unchanged(next, stored)) return { object: stored }
          // the Store's TTLFunc: a resource with a TTL (events) renews it on every update
          return { object: next, ttl: ctx.info.ttlSeconds }
        })
    })
    if (toDelete === undefined) return out
    // deleteWithoutFinalizers (another writer may have removed it first: that is fine)
    yield* persist(ctx)
      .delete(key, { preconditions })
      .pipe(Effect.catchTag("NotFound", () => Effect.void))
    return toDelete
  })

/** deletionFinalizersForGarbageCollection: orphan / foregroundDeletion as the options (or the object) say. */
export const gcFinalizers = (obj: KubeObject, o: DeleteOptions): { changed: boolean; finalizers: Array<string> } => {
  const existing = obj.metadata.finalizers ?? []
  // without options the object's own finalizers decide (the first of the two wins)
  const first = existing.find((f) => f === FINALIZER_ORPHAN || f === FINALIZER_FOREGROUND)
  const orphan =
    o.orphanDependents !== undefined
      ? o.orphanDependents
      : o.propagationPolicy !== undefined
        ? o.propagationPolicy === "Orphan"
        : first === FINALIZER_ORPHAN
  const foreground =
    o.orphanDependents !== undefined
      ? false
      : o.propagationPolicy !== undefined
        ? o.propagationPolicy === "Foreground"
        : first === FINALIZER_FOREGROUND
  const finalizers = existing.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND)
  if (orphan) finalizers.push(FINALIZER_ORPHAN)
  if (foreground) finalizers.push(FINALIZER_FOREGROUND)
  const a = new Set(existing)
  const b = new Set(finalizers)
  const changed = a.size !== b.size || [...a].some((f) => !b.has(f))
  return { changed, finalizers: changed ? finalizers : [...existing] }
}

/** markAsDeleting: deletionTimestamp now (unless earlier), no grace period, the generation bumped once. */
export const markAsDeleting = (obj: Obj): void => {
  const m = obj.metadata
  const now = timestamp()
  if (!isDeleting(obj) && (m.generation ?? 0) > 0) m.generation = m.generation! + 1
  if (!isDeleting(obj) || Date.parse(m.deletionTimestamp!) > Date.parse(now)) m.deletionTimestamp = now
  m.deletionGracePeriodSeconds = 0
}

export interface DeleteResult {
  /** the object: as removed, or as updated (deletion pending on finalizers) */
  readonly object: KubeObject
  /** removed (true), or only marked for deletion (false) */
  readonly deleted: boolean
}

/** The delete's admission: the pipeline's admission stages with the stored object. */
export const deletionValidator =
  (ctx: WriteContext): ValidateDeletion =>
  (existing) =>
    run(pipelineFor(ctx.info).admission, ctx, "DELETE", existing as Obj, existing)

/** rest.BeforeDelete's precondition check (the 409 names the Kind, before any write). */
const checkDeletePreconditions = (ctx: WriteContext, obj: KubeObject, o: DeleteOptions): StatusError | undefined => {
  const gr = { group: ctx.info.group, resource: ctx.info.kind }
  const name = obj.metadata.name ?? ""
  const p = o.preconditions
  if (p?.uid !== undefined && p.uid !== (obj.metadata.uid ?? "")) {
    return newConflict(
      gr,
      name,
      `the UID in the precondition (${p.uid}) does not match the UID in record (${obj.metadata.uid ?? ""}). The object might have been deleted and then recreated`
    )
  }
  if (p?.resourceVersion !== undefined && p.resourceVersion !== (obj.metadata.resourceVersion ?? "")) {
    return newConflict(
      gr,
      name,
      `the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion ?? ""}). The object might have been modified`
    )
  }
  return undefined
}

/** Store.Delete for kinds without graceful deletion (everything served here). */
export const deleteObject = (
  ctx: WriteContext,
  name: string,
  o: DeleteOptions,
  namespace: string | undefined = ctx.namespace
): Effect.Effect<DeleteResult, StatusError> =>
  Effect.gen(function* () {
    const key = keyOf(ctx.info, namespace, name)
    const obj = (yield* ctx.storage.get(key))!
    const pre = checkDeletePreconditions(ctx, obj, o)
    if (pre !== undefined) return yield* Effect.fail(pre)
    let preconditions: Preconditions | undefined = o.preconditions
    const validateDeletion = deletionValidator(ctx)
    const store = persist(ctx)
    const pendingFinalizers = (obj.metadata.finalizers ?? []).length > 0
    // a strategy without garbage collection (events) gets no orphan/foregroundDeletion finalizer
    const gc = (existing: KubeObject) =>
      ctx.strategy.garbageCollectionUnsupported === true
        ? { changed: false, finalizers: [...(existing.metadata.finalizers ?? [])] }
        : gcFinalizers(existing, o)
    if (pendingFinalizers || gc(obj).changed) {
      let pending = false
      const out = yield* store.update(key, {
        preconditions,
        tryUpdate: (existing) =>
          Effect.gen(function* () {
            yield* validateDeletion(existing)
            const next = structuredClone(existing) as Obj
            const fins = gc(next)
            if (fins.changed) next.metadata.finalizers = fins.finalizers
            pending = (next.metadata.finalizers ?? []).length > 0
            if (!pending) return { object: existing }
            markAsDeleting(next)
            return { object: next }
          })
      })
      if (pending) return { object: out, deleted: false }
      if (ctx.dryRun) return { object: out, deleted: true }
      if (preconditions?.resourceVersion !== undefined)
        preconditions = { ...preconditions, resourceVersion: out.metadata.resourceVersion }
    }
    const deleted = yield* store.delete(key, { preconditions, validateDeletion })
    return { object: deleted, deleted: true }
  })

/**
 * Store.DeleteCollection: the objects the predicate selects (pages of 10000), each deleted with
 * the options (one already gone is skipped); the answer is the list as it was read.
 */
export const deleteCollection = (
  ctx: WriteContext,
  listKey: string,
  predicate: SelectionPredicate,
  resourceVersion: string,
  deleteOne: (item: KubeObject) => Effect.Effect<unknown, StatusError>
): Effect.Effect<KubeList, StatusError> =>
  Effect.gen(function* () {
    const items: Array<KubeObject> = []
    let cont = predicate.continue
    let rv = resourceVersion
    let first: KubeList | undefined
    const paged = predicate.limit > 0
    for (;;) {
      const page = yield* ctx.storage.getList(listKey, {
        predicate: { ...predicate, limit: paged ? predicate.limit : 10000, continue: cont },
        resourceVersion: rv,
        recursive: true
      })
      first ??= page
      for (const item of page.items) {
        yield* deleteOne(item).pipe(Effect.catchTag("NotFound", () => Effect.void))
        items.push(item)
      }
      const next = page.metadata.continue ?? ""
      if (paged || next === "")
        return paged
          ? { ...page, items }
          : { metadata: { resourceVersion: first.metadata.resourceVersion ?? "" }, items }
      cont = next
      rv = ""
    }
  })
