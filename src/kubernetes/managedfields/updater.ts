/**
 * merge/update.go's Updater: who owns which fields after an update or an apply.
 *
 * - update: the fields the write changed become the writer's and leave every other manager.
 * - apply: the configuration is merged into the live object; its fields become the applier's;
 *   fields another manager owns and the configuration changes are conflicts (an error unless
 *   forced: then they change hands); fields the applier applied before and omits now are removed
 *   from the object, unless another manager owns them (prune).
 *
 * Versions: an object is the same in every version we serve (built-in kinds have one; a CRD's
 * versions convert with None), so conversion is the identity and a manager of a version no longer
 * served is dropped (IsMissingVersionError). The schema-change reconciliation is the identity too:
 * a schema changes only with a CRD's, and then the Go code rewrites sets whose atomicity changed —
 * not done here (docs/decisions.md "Server-side apply").
 */
import { FieldSet } from "./field-set.js"
import { compare } from "./compare.js"
import { merge } from "./merge.js"
import * as PE from "./path-element.js"
import { removeItems } from "./remove.js"
import { toFieldSet } from "./to-field-set.js"
import type { TypeRef, TypeSchema } from "./type-schema.js"
import { equalValues, type Json } from "./value.js"

export interface VersionedSet {
  readonly set: FieldSet
  readonly apiVersion: string
  readonly applied: boolean
}

/** manager identifier → its fields */
export type ManagedFields = Map<string, VersionedSet>

export class Conflicts extends Error {
  constructor(readonly conflicts: ReadonlyArray<{ readonly manager: string; readonly path: PE.Path }>) {
    super("conflicts")
  }
}

export interface Typed {
  readonly schema: TypeSchema
  readonly type: TypeRef
  /** the API versions this object is served in */
  readonly versions: ReadonlySet<string>
  /** fields no manager owns in this request's version (reset fields: status on the main resource) */
  readonly ignored?: FieldSet | undefined
}

/** Set.EnsureNamedFieldsAreMembers: a struct field with fields owned below it is owned too. */
export const ensureNamedFieldsAreMembers = (t: Typed, s: FieldSet, tr: TypeRef | undefined = t.type): FieldSet => {
  const atom = t.schema.resolve(tr)
  const out = new FieldSet()
  for (const [k, pe] of s.members) out.members.set(k, pe)
  for (const [k, c] of s.children) {
    let ctr: TypeRef | undefined
    if (c.pe._tag === "Field" && atom.map !== undefined) {
      if (atom.map.fields.has(c.pe.name)) out.members.set(k, c.pe)
      ctr = atom.map.fields.get(c.pe.name)?.type ?? atom.map.elementType
    } else if (c.pe._tag === "Key" && atom.list !== undefined) ctr = atom.list.elementType
    out.children.set(k, { pe: c.pe, set: ensureNamedFieldsAreMembers(t, c.set, ctr) })
  }
  return out
}

const filtered = (t: Typed, s: FieldSet): FieldSet => (t.ignored === undefined ? s : s.recursiveDifference(t.ignored))

/** Updater.update: conflicts and removals against every manager but `workflow`. */
const updateManagers = (
  t: Typed,
  oldObject: Json,
  newObject: Json,
  managers: ManagedFields,
  workflow: string,
  force: boolean
) => {
  const c = compare(t.schema, t.type, oldObject, newObject)
  const cmp = { added: filtered(t, c.added), modified: filtered(t, c.modified), removed: filtered(t, c.removed) }
  const conflicts = new Map<string, FieldSet>()
  const removed = new Map<string, FieldSet>()
  const changed = cmp.modified.union(cmp.added)
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue
    if (!t.versions.has(vs.apiVersion)) {
      managers.delete(manager)
      continue
    }
    const conflict = vs.set.intersection(changed)
    if (!conflict.isEmpty()) conflicts.set(manager, conflict)
    if (!cmp.removed.isEmpty()) removed.set(manager, cmp.removed)
  }
  if (!force && conflicts.size > 0) {
    const list = [...conflicts.keys()].sort().flatMap((manager) =>
      conflicts
        .get(manager)!
        .paths()
        .map((path) => ({ manager, path }))
    )
    throw new Conflicts(list)
  }
  for (const [manager, s] of [...conflicts, ...removed]) {
    const vs = managers.get(manager)!
    managers.set(manager, { ...vs, set: vs.set.difference(s) })
  }
  for (const [manager, vs] of managers) if (vs.set.isEmpty()) managers.delete(manager)
  return cmp
}

const reconcile = (t: Typed, managers: ManagedFields): ManagedFields =>
  new Map([...managers].filter(([, vs]) => t.versions.has(vs.apiVersion)))

/** Updater.Update: the manager of a non-apply write gets the fields it changed. */
export const update = (
  t: Typed,
  live: Json,
  next: Json,
  version: string,
  managers: ManagedFields,
  manager: string
): ManagedFields => {
  const ms = reconcile(t, managers)
  const cmp = updateManagers(t, live, next, ms, manager, true)
  const prev = ms.get(manager)?.set ?? new FieldSet()
  const set = filtered(t, prev.difference(cmp.removed).union(cmp.modified).union(cmp.added))
  if (set.isEmpty()) ms.delete(manager)
  else ms.set(manager, { set, apiVersion: version, applied: false })
  return ms
}

/** Updater.prune: what the applier applied before and omits now goes, unless somebody else owns it. */
const prune = (t: Typed, merged: Json, managers: ManagedFields, last: VersionedSet | undefined): Json => {
  if (last === undefined || last.set.isEmpty() || !t.versions.has(last.apiVersion)) return merged
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(t, s)
  let pruned = removeItems(t.schema, t.type, merged, named(last.set))
  // addBackOwnedItems: every version is the same object, so one pass over all owned fields
  let owned = new FieldSet()
  for (const vs of managers.values()) owned = owned.union(vs.set)
  const mergedSet = named(toFieldSet(t.schema, t.type, merged))
  pruned = removeItems(
    t.schema,
    t.type,
    merged,
    mergedSet.difference(named(toFieldSet(t.schema, t.type, pruned)).union(named(owned)))
  )
  // addBackDanglingItems
  const prunedSet = named(toFieldSet(t.schema, t.type, pruned))
  return removeItems(t.schema, t.type, merged, mergedSet.difference(prunedSet).intersection(named(last.set)))
}

export interface Applied {
  /** undefined: the apply changes nothing in the object */
  readonly object: Json | undefined
  readonly managers: ManagedFields
}

/** Updater.Apply; throws Conflicts (without force) and ListItemError. */
export const apply = (
  t: Typed,
  live: Json,
  config: Json,
  version: string,
  managers: ManagedFields,
  manager: string,
  force: boolean
): Applied => {
  const ms = reconcile(t, managers)
  let next = merge(t.schema, t.type, live, config)
  const last = ms.get(manager)
  ms.set(manager, { set: filtered(t, toFieldSet(t.schema, t.type, config)), apiVersion: version, applied: true })
  next = prune(t, next, ms, last)
  updateManagers(t, live, next, ms, manager, force)
  return { object: equalValues(live, next) ? undefined : next, managers: ms }
}
