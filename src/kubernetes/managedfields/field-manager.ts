/**
 * internal/fieldmanager.go and the managers it chains (NewDefaultFieldManager), outermost first:
 *
 *   versionCheck → lastAppliedUpdater → lastAppliedManager → skipNonApplied → capManagers
 *     → buildManagerInfo → managedFieldsUpdater → stripMeta → structuredMerge (updater.ts)
 *
 * Each is a decorator of the next with Go's name (manager-chain.ts); this file is the FieldManager
 * the write handlers call: `update` after every create, update and non-apply patch (it never
 * fails: on an error the live object's managedFields are kept, UpdateNoErrors) and `apply`.
 */
import { FieldSet } from "./field-set.js"
import {
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  type Managed,
  type ManagedFieldsEntry
} from "./managed-fields.js"
import type { FieldManagerConfig, Obj } from "./field-manager-config.js"
import { chain, type Manager } from "./manager-chain.js"

const managedFieldsOf = (o: Obj | undefined): ReadonlyArray<ManagedFieldsEntry> | null | undefined =>
  o?.metadata?.["managedFields"] as ReadonlyArray<ManagedFieldsEntry> | null | undefined

const decodeOrEmpty = (entries: ReadonlyArray<ManagedFieldsEntry> | null | undefined): Managed => {
  try {
    return decodeManagedFields(entries ?? [])
  } catch {
    return emptyManaged()
  }
}

/** isResetManagedFields: `[]` or `[{}]` asks for no managers at all */
const isReset = (e: ReadonlyArray<ManagedFieldsEntry> | null | undefined): boolean =>
  Array.isArray(e) && (e.length === 0 || (e.length === 1 && Object.keys(e[0]!).length === 0))

/** decodeLiveOrNew */
const decodeLiveOrNew = (cfg: FieldManagerConfig, live: Obj, next: Obj): Managed => {
  if (cfg.subresource !== "") return decodeOrEmpty(managedFieldsOf(live))
  const fromNew = managedFieldsOf(next)
  if (isReset(fromNew)) return emptyManaged()
  try {
    const m = decodeManagedFields(fromNew ?? [])
    if (m.fields.size > 0) return m
  } catch {
    // the live object's, as when the request's do not decode
  }
  return decodeOrEmpty(managedFieldsOf(live))
}

const setManagedFields = (o: Obj, entries: ReadonlyArray<ManagedFieldsEntry> | undefined): void => {
  o.metadata ??= {}
  if (entries === undefined) delete o.metadata["managedFields"]
  else o.metadata["managedFields"] = entries
}

const managerOf = (cfg: FieldManagerConfig): Manager => chain(cfg)

/**
 * FieldManager.UpdateNoErrors: `next` with the managedFields of a write by `manager` (`live` is
 * the stored object, or an empty object of the kind on create).
 */
export const update = (cfg: FieldManagerConfig, live: Obj, next: Obj, manager: string): Obj => {
  try {
    const managed = decodeLiveOrNew(cfg, live, next)
    setManagedFields(next, undefined)
    const r = managerOf(cfg).update(live, next, managed, manager)
    setManagedFields(r.object, encodeManagedFields(r.managed))
    return r.object
  } catch {
    const liveEntries = managedFieldsOf(live)
    setManagedFields(next, liveEntries === null ? undefined : (liveEntries as Array<ManagedFieldsEntry> | undefined))
    return next
  }
}

/**
 * FieldManager.Apply: the live object (an empty one of the kind when there is none) with the
 * configuration applied by `manager`; throws ApplyError (conflicts, a bad configuration).
 */
export const apply = (cfg: FieldManagerConfig, live: Obj, config: Obj, manager: string, force: boolean): Obj => {
  const managed = decodeManagedFields(managedFieldsOf(live) ?? [])
  const r = managerOf(cfg).apply(live, config, managed, manager, force)
  setManagedFields(r.object, encodeManagedFields(r.managed))
  return r.object
}

/** the reset fields of a resource with a status subresource (GetResetFields of its strategies) */
export const resetFields = (subresource: string, hasStatus: boolean): FieldSet | undefined =>
  subresource === "status"
    ? FieldSet.fields(["apiVersion"], ["kind"], ["metadata"], ["spec"])
    : subresource === "" && hasStatus
      ? FieldSet.fields(["status"])
      : undefined

export type { FieldManagerConfig, GroupVersionKind, Obj } from "./field-manager-config.js"
