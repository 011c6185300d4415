/**
 * scalehandler.go: managedFields between a resource and its scale subresource. A write to /scale
 * runs the field manager on an autoscaling/v1 Scale whose managedFields are the resource's
 * entries that own the replicas path, as `spec.replicas` (`toSubresource`); its result is mapped
 * back (`toParent`): whoever the scale write made the owner of `spec.replicas` owns the
 * resource's replicas path, taken from the managers that lost it. So an applier conflicts with
 * the last scaler of its replicas, as in Kubernetes.
 *
 * The entries go through their encoded form each way, as upstream's do: an Update manager's
 * identifier includes its apiVersion, so it is another manager on the Scale than on the resource.
 */
import { FieldSet } from "./field-set.js"
import { decodeManagedFields, emptyManaged, encodeManagedFields, type ManagedFieldsEntry } from "./managed-fields.js"
import * as PE from "./path-element.js"
import type { Path } from "./path-element.js"
import type { VersionedSet } from "./updater.js"

const SCALE_API_VERSION = "autoscaling/v1"

/** `spec.replicas` of a Scale */
const REPLICAS_IN_SCALE: Path = [PE.field("spec"), PE.field("replicas")]

/**
 * ResourcePathMappings: each apiVersion of the resource to its replicas path, `null` for a
 * version without a scale subresource; an entry of an apiVersion not in it is dropped by `toParent`.
 */
export type ResourcePathMappings = ReadonlyMap<string, Path | null>

/** a replicas path of a CRD version (`.spec.replicas`) as field path elements */
export const replicasPathOf = (specReplicasPath: string): Path =>
  specReplicasPath.replace(/^\./, "").split(".").map(PE.field)

/** ToSubresource: the resource's entries that own its replicas path, as a Scale's entries. */
export const toSubresource = (
  parentEntries: ReadonlyArray<ManagedFieldsEntry>,
  mappings: ResourcePathMappings
): Array<ManagedFieldsEntry> | undefined => {
  const parent = decodeManagedFields(parentEntries)
  const out = emptyManaged()
  for (const [manager, vs] of parent.fields) {
    const path = mappings.get(vs.apiVersion)
    if (path === undefined || path === null || !vs.set.has(path)) continue
    out.fields.set(manager, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_API_VERSION, applied: vs.applied })
    out.times.set(manager, parent.times.get(manager))
  }
  return encodeManagedFields(out)
}

/**
 * ToParent: the resource's entries after a scale write left `scaleEntries` on the Scale. A
 * manager of the replicas path missing from them loses it; a Scale manager of `spec.replicas`
 * gets the replicas path of `groupVersion` (the resource's), with the resource's time for it
 * (none for a new one, as upstream).
 */
export const toParent = (
  parentEntries: ReadonlyArray<ManagedFieldsEntry>,
  scaleEntries: ReadonlyArray<ManagedFieldsEntry>,
  groupVersion: string,
  mappings: ResourcePathMappings
): Array<ManagedFieldsEntry> | undefined => {
  const parent = decodeManagedFields(parentEntries)
  const scale = decodeManagedFields(scaleEntries).fields
  const out = emptyManaged()
  const keep = (manager: string, vs: VersionedSet) => {
    out.fields.set(manager, vs)
    out.times.set(manager, parent.times.get(manager))
  }
  for (const [manager, vs] of parent.fields) {
    const path = mappings.get(vs.apiVersion)
    if (path === undefined) continue
    if (path === null || !vs.set.has(path)) keep(manager, vs)
    else if (scale.has(manager)) {
      keep(manager, vs)
      scale.delete(manager)
    } else {
      const rest = vs.set.difference(FieldSet.of(path))
      if (!rest.isEmpty()) keep(manager, { ...vs, set: rest })
    }
  }
  const path = mappings.get(groupVersion)
  for (const [manager, vs] of scale) {
    if (!vs.set.has(REPLICAS_IN_SCALE)) continue
    out.fields.set(manager, {
      set: FieldSet.of(...(path ? [path] : [])),
      apiVersion: groupVersion,
      applied: vs.applied
    })
    out.times.set(manager, parent.times.get(manager))
  }
  return encodeManagedFields(out)
}
