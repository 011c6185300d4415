/**
 * endpoints/handlers/fieldmanager/equality.go's IgnoreManagedFieldsTimestampsTransformer, which
 * the registry's Store.Update runs after BeforeUpdate: an update that changes nothing but the
 * times of managedFields entries keeps the old times, so it writes nothing (no new
 * resourceVersion, no MODIFIED event). A manifest server-side applied again unchanged, as GitOps
 * tools do on every sync, is the common case: the applier's entry gets a new time on every apply.
 *
 * `unchanged` is the etcd3 store's test for a write to skip: Go compares the encoded bytes, which
 * its codecs make canonical; ours are JSON in the order the write built them, so an update that
 * changes nothing is found by value instead.
 */
import type { KubeObject } from "../../api/object-meta.js"
import type { ManagedFieldsEntry } from "../../managedfields/managed-fields.js"
import type { Obj } from "../kinds/strategy.js"

/** equality of the JSON two values are stored as: a member whose value is undefined is absent */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => sameJson(x, b[i]))
  }
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const kx = Object.keys(x).filter((k) => x[k] !== undefined)
  if (kx.length !== Object.keys(y).filter((k) => y[k] !== undefined).length) return false
  return kx.every((k) => sameJson(x[k], y[k]))
}

const withoutTime = (entries: ReadonlyArray<ManagedFieldsEntry>) => entries.map(({ time: _, ...rest }) => rest)

const withoutManagedFields = (o: { readonly metadata: object }) => {
  const { managedFields: _, ...metadata } = o.metadata as Record<string, unknown>
  return { ...o, metadata }
}

/** `next` with `existing`'s managedFields times when they are all that differs between them */
export const ignoreManagedFieldsTimestamps = (next: Obj, existing: KubeObject): Obj => {
  const now = next.metadata.managedFields as ReadonlyArray<ManagedFieldsEntry> | undefined
  const old = existing.metadata.managedFields as ReadonlyArray<ManagedFieldsEntry> | undefined
  // the fast checks: entries added or removed, none at all, or no time changed
  if (!Array.isArray(now) || !Array.isArray(old) || now.length !== old.length || now.length === 0) return next
  if (now.every((e, i) => e.time === old[i]!.time)) return next
  if (!sameJson(withoutTime(now), withoutTime(old))) return next
  if (!sameJson(withoutManagedFields(next), withoutManagedFields(existing))) return next
  next.metadata.managedFields = now.map(({ time: _, ...rest }, i) => {
    const time = old[i]!.time
    return time === undefined ? rest : { ...rest, time }
  })
  return next
}

/** whether an update leaves the object as it is (then nothing is written) */
export const unchanged = (next: Obj, existing: KubeObject): boolean => sameJson(next, existing)
