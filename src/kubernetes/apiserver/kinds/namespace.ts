/**
 * core/v1 Namespace: its Go type, the defaulted label `kubernetes.io/metadata.name`, the
 * strategy (created Active with the `kubernetes` finalizer in spec.finalizers; the main resource
 * never changes spec.finalizers or status — /finalize and /status do), ValidateNamespace and its
 * update, finalize and status variants.
 */
import * as F from "../../api/field.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Label, isQualifiedName } from "../../api/validation.js"
import { goTime } from "./go-leaves.js"
import { goSlice, goString, goStruct, goStructOnly } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

export const FINALIZER_KUBERNETES = "kubernetes"
export const LABEL_METADATA_NAME = "kubernetes.io/metadata.name"

const NamespaceCondition = goStruct("NamespaceCondition", "v1.NamespaceCondition", {
  type: goString("v1.NamespaceConditionType"),
  status: goString("v1.ConditionStatus"),
  lastTransitionTime: goTime,
  reason: goString(),
  message: goString()
})

export const Namespace = goStructOnly("Namespace", "v1.Namespace", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  spec: goStruct("NamespaceSpec", "v1.NamespaceSpec", {
    finalizers: goSlice(goString("v1.FinalizerName"), "[]v1.FinalizerName")
  }),
  status: goStruct("NamespaceStatus", "v1.NamespaceStatus", {
    phase: goString("v1.NamespacePhase"),
    conditions: goSlice(NamespaceCondition, "[]v1.NamespaceCondition")
  })
})

const rules: MetaRules = { namespaced: false, validateName: isDNS1123Label, core: true }

export interface NamespaceStatus {
  phase?: string
  conditions?: Array<Record<string, unknown>>
}

export const specFinalizers = (o: KubeObject): ReadonlyArray<string> =>
  ((o["spec"] as { finalizers?: ReadonlyArray<string> } | undefined)?.finalizers ?? []) as ReadonlyArray<string>
export const statusOf = (o: KubeObject): NamespaceStatus => (o["status"] ?? {}) as NamespaceStatus
export const phaseOf = (o: KubeObject): string => statusOf(o).phase ?? ""

/** SetDefaults_Namespace: the name as a label. */
const defaults = (obj: Obj): void => {
  const name = obj.metadata.name
  if (name === undefined || name === "") return
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [LABEL_METADATA_NAME]: name }
}

/** validateFinalizerName for spec.finalizers (FinalizerName values). */
const validateSpecFinalizers = (obj: KubeObject): Array<FieldError> => {
  const errs: Array<FieldError> = []
  for (const f of specFinalizers(obj)) {
    const q = isQualifiedName(f)
    for (const m of q) errs.push(F.invalid("spec.finalizers", f, m))
    if (q.length === 0 && !f.includes("/") && !["kubernetes", "orphan", "foregroundDeletion"].includes(f)) {
      errs.push(F.invalid("spec.finalizers", f, "name is neither a standard finalizer name nor is it fully qualified"))
    }
  }
  return errs
}

const validateNamespace = (obj: Obj) => [...validateObjectMeta(obj.metadata, rules), ...validateSpecFinalizers(obj)]

const setSpec = (obj: Obj, spec: unknown) => {
  if (spec === undefined) delete obj["spec"]
  else obj["spec"] = structuredClone(spec)
}
const setStatus = (obj: Obj, status: unknown) => {
  if (status === undefined) delete obj["status"]
  else obj["status"] = structuredClone(status)
}

export const namespaceStrategy: KindStrategy = {
  schema: Namespace,
  core: true,
  returnDeletedObject: true,
  defaults,
  prepareForCreate: (obj) => {
    // Canonicalize: a generated name gets its label too
    defaults(obj)
    obj["status"] = { phase: "Active" }
    const fins = [...specFinalizers(obj)]
    if (!fins.includes(FINALIZER_KUBERNETES)) fins.push(FINALIZER_KUBERNETES)
    obj["spec"] = { ...((obj["spec"] as object | undefined) ?? {}), finalizers: fins }
  },
  prepareForUpdate: (obj, old) => {
    const spec = { ...((obj["spec"] as object | undefined) ?? {}) } as Record<string, unknown>
    const oldFins = (old["spec"] as { finalizers?: unknown } | undefined)?.finalizers
    if (oldFins === undefined) delete spec["finalizers"]
    else spec["finalizers"] = structuredClone(oldFins)
    setSpec(obj, Object.keys(spec).length === 0 && old["spec"] === undefined ? undefined : spec)
    setStatus(obj, old["status"])
  },
  validate: validateNamespace,
  validateUpdate: (obj, old) => [
    ...validateNamespace(obj),
    ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules)
  ],
  deleteDuringUpdate: (obj) => specFinalizers(obj).length === 0
}

/** The /finalize subresource: only spec.finalizers may change (status is kept). */
export const namespaceFinalizeStrategy: KindStrategy = {
  ...namespaceStrategy,
  prepareForUpdate: (obj, old) => setStatus(obj, old["status"]),
  validateUpdate: (obj, old) => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
    ...validateSpecFinalizers(obj)
  ]
}

/** The /status subresource: only status may change; its phase follows deletionTimestamp. */
export const namespaceStatusStrategy: KindStrategy = {
  ...namespaceStrategy,
  prepareForUpdate: (obj, old) => setSpec(obj, old["spec"]),
  validateUpdate: (obj, old) => {
    const errs = validateObjectMetaUpdate(obj.metadata, old.metadata, rules)
    const deleting = obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null
    const phase = phaseOf(obj)
    if (!deleting && phase !== "Active")
      errs.push(F.invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"))
    if (deleting && phase !== "Terminating")
      errs.push(F.invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
    return errs
  }
}
