/**
 * metav1.ObjectMeta: its Go type (every kind's `metadata`), and apimachinery's
 * api/validation/objectmeta.go: ValidateObjectMeta on create (name or generateName, namespace
 * present exactly when the resource is namespaced, labels, annotations, owner references,
 * finalizers) and ValidateObjectMetaUpdate (no new finalizers while deleting, a resourceVersion,
 * immutable identity fields, generation not decremented).
 */
import * as F from "../../api/field.js"
import type { ObjectMeta as ObjectMetaType } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from "../../api/validation.js"
import { goTime } from "./go-leaves.js"
import { goBool, goInt, goJson, goMap, goSlice, goString, goStruct } from "./go-types.js"

const stringMap = goMap(goString(), "map[string]string")

export const OwnerReference = goStruct("OwnerReference", "v1.OwnerReference", {
  apiVersion: goString(),
  kind: goString(),
  name: goString(),
  uid: goString("types.UID"),
  controller: goBool,
  blockOwnerDeletion: goBool
})

export const ManagedFieldsEntry = goStruct("ManagedFieldsEntry", "v1.ManagedFieldsEntry", {
  manager: goString(),
  operation: goString("v1.ManagedFieldsOperationType"),
  apiVersion: goString(),
  time: goTime,
  fieldsType: goString(),
  fieldsV1: goJson,
  subresource: goString()
})

export const ObjectMeta = goStruct("ObjectMeta", "v1.ObjectMeta", {
  name: goString(),
  generateName: goString(),
  namespace: goString(),
  selfLink: goString(),
  uid: goString("types.UID"),
  resourceVersion: goString(),
  generation: goInt("int64"),
  creationTimestamp: goTime,
  deletionTimestamp: goTime,
  deletionGracePeriodSeconds: goInt("int64"),
  labels: stringMap,
  annotations: stringMap,
  ownerReferences: goSlice(OwnerReference, "[]v1.OwnerReference"),
  finalizers: goSlice(goString(), "[]string"),
  managedFields: goSlice(ManagedFieldsEntry, "[]v1.ManagedFieldsEntry")
})

/** ObjectMeta as validation reads it */
export type Meta = ObjectMetaType
/** ObjectMeta as the pipeline's stages change it */
export type MutableMeta = { -readonly [K in keyof ObjectMetaType]: ObjectMetaType[K] }

/** TotalAnnotationSizeLimitB */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

/** The standard finalizer names a core object may carry without a domain. */
const STANDARD_FINALIZERS = ["kubernetes", "orphan", "foregroundDeletion"]
export const FINALIZER_ORPHAN = "orphan"
export const FINALIZER_FOREGROUND = "foregroundDeletion"

export const validateLabels = (labels: Readonly<Record<string, string>> | null | undefined, path: string) => {
  const errs: Array<FieldError> = []
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(F.invalid(path, k, m))
    for (const m of isValidLabelValue(v)) errs.push(F.invalid(path, v, m))
  }
  return errs
}

export const validateAnnotations = (annotations: Readonly<Record<string, string>> | null | undefined, path: string) => {
  const errs: Array<FieldError> = []
  let total = 0
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(F.invalid(path, k, m))
    total += Buffer.byteLength(k) + Buffer.byteLength(v)
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(F.tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT))
  return errs
}

const validateOwnerReferences = (refs: Meta["ownerReferences"], path: string) => {
  const errs: Array<FieldError> = []
  let controller = ""
  ;(refs ?? []).forEach((r, i) => {
    const p = F.index(path, i)
    const ref = r as Record<string, unknown>
    const apiVersion = typeof ref["apiVersion"] === "string" ? ref["apiVersion"] : ""
    const parts = apiVersion.split("/")
    if (apiVersion === "") errs.push(F.required(`${p}.apiVersion`, "must not be empty"))
    else if (parts.length > 2 || parts[parts.length - 1] === "")
      errs.push(F.invalid(`${p}.apiVersion`, apiVersion, "must be <group>/<version> or <version>"))
    for (const f of ["kind", "name", "uid"]) {
      if (typeof ref[f] !== "string" || ref[f] === "") errs.push(F.required(`${p}.${f}`, "must not be empty"))
    }
    if (ref["controller"] === true) {
      const cur = `${String(ref["kind"] ?? "")}/${String(ref["name"] ?? "")}`
      if (controller !== "")
        errs.push(
          F.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${cur}`
          )
        )
      else controller = cur
    }
  })
  return errs
}

/** ValidateFinalizers, with the core types' rule that a name without "/" must be a standard one. */
export const validateFinalizers = (finalizers: Meta["finalizers"], path: string, core: boolean, onCreate = true) => {
  const errs: Array<FieldError> = []
  const list = finalizers ?? []
  for (const f of list) {
    const qualified = isQualifiedName(f)
    for (const m of qualified) errs.push(F.invalid(path, f, m))
    if (core && qualified.length === 0 && !f.includes("/") && !STANDARD_FINALIZERS.includes(f)) {
      errs.push(F.invalid(path, f, "name is neither a standard finalizer name nor is it fully qualified"))
    }
  }
  if (onCreate && list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(F.invalid(path, list, "finalizer orphan and foregroundDeletion cannot be both set"))
  }
  return errs
}

export interface MetaRules {
  readonly namespaced: boolean
  /** the resource's name rule (DNS subdomain, DNS label, …) */
  readonly validateName: (name: string) => ReadonlyArray<string>
  /** core kinds check finalizer names against the standard ones */
  readonly core: boolean
}

const common = (m: Meta, rules: MetaRules): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if ((m.generation ?? 0) < 0)
    errs.push(F.invalid("metadata.generation", m.generation, "must be greater than or equal to 0"))
  errs.push(...validateLabels(m.labels, "metadata.labels"))
  errs.push(...validateAnnotations(m.annotations, "metadata.annotations"))
  errs.push(...validateOwnerReferences(m.ownerReferences, "metadata.ownerReferences"))
  errs.push(...validateFinalizers(m.finalizers, "metadata.finalizers", rules.core, false))
  return errs
}

/** ValidateObjectMeta (create; names already generated). */
export const validateObjectMeta = (m: Meta, rules: MetaRules): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const gen = m.generateName ?? ""
  // a generated name's rule applies to the prefix with a trailing "-" allowed
  if (gen !== "")
    for (const msg of rules.validateName(gen.replace(/-$/, "a")))
      errs.push(F.invalid("metadata.generateName", gen, msg))
  const name = m.name ?? ""
  if (name === "") errs.push(F.required("metadata.name", "name or generateName is required"))
  else for (const msg of rules.validateName(name)) errs.push(F.invalid("metadata.name", name, msg))
  const ns = m.namespace ?? ""
  if (rules.namespaced) {
    if (ns === "") errs.push(F.required("metadata.namespace"))
    else for (const msg of isDNS1123Label(ns)) errs.push(F.invalid("metadata.namespace", ns, msg))
  } else if (ns !== "") {
    errs.push(F.forbidden("metadata.namespace", "not allowed on this type"))
  }
  return [...errs, ...common(m, rules)]
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/** ValidateObjectMetaUpdate (after BeforeUpdate copied what clients may not change). */
export const validateObjectMetaUpdate = (m: Meta, old: Meta, rules: MetaRules): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if (old.deletionTimestamp !== undefined && old.deletionTimestamp !== null) {
    const before = new Set(old.finalizers ?? [])
    const extra = Array.from(new Set((m.finalizers ?? []).filter((f) => !before.has(f)))).sort()
    if (extra.length > 0) {
      errs.push(
        F.forbidden(
          "metadata.finalizers",
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra
            .map((f) => JSON.stringify(f))
            .join(", ")}}`
        )
      )
    }
  }
  if ((m.resourceVersion ?? "") === "")
    errs.push(F.invalid("metadata.resourceVersion", "", "must be specified for an update"))
  if ((m.generation ?? 0) < 0)
    errs.push(F.invalid("metadata.generation", m.generation, "must be greater than or equal to 0"))
  if ((m.generation ?? 0) < (old.generation ?? 0))
    errs.push(F.invalid("metadata.generation", m.generation, "must not be decremented"))
  for (const f of [
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds"
  ] as const) {
    if (!same(m[f], old[f])) errs.push(F.invalid(`metadata.${f}`, m[f] ?? null, "field is immutable"))
  }
  errs.push(...validateLabels(m.labels, "metadata.labels"))
  errs.push(...validateAnnotations(m.annotations, "metadata.annotations"))
  errs.push(...validateOwnerReferences(m.ownerReferences, "metadata.ownerReferences"))
  errs.push(...validateFinalizers(m.finalizers, "metadata.finalizers", rules.core, false))
  return errs
}
