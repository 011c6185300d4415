/**
 * A custom resource's strategies (apiextensions-apiserver pkg/registry/customresource: strategy.go,
 * status_strategy.go, validator.go), one set per served version of its CRD: the body is any JSON
 * object whose `metadata` is an ObjectMeta (typed, so its unknown or mistyped fields are refused
 * as for any kind); the version's structural schema prunes unknown fields while decoding, defaults,
 * and validates (schema/). With the status subresource, a create drops `status`, a main-resource
 * update keeps the stored status, and `/status` changes nothing but status.
 */
import { Schema } from "effect"
import * as F from "../../api/field.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Subdomain } from "../../api/validation.js"
import { applyDefaults } from "../schema/defaulting.js"
import type { CrdScale, JSONSchemaProps } from "../schema/json-schema.js"
import { pruneNonNullableNulls, pruneResource } from "../schema/pruning.js"
import { validateAgainstSchema } from "../schema/validation.js"
import { goString, GoStructId, GoTypeId } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

/** An unstructured object: apiVersion/kind strings, a typed metadata, anything else. */
export const Unstructured = Schema.Struct(
  { apiVersion: Schema.optional(goString()), kind: Schema.optional(goString()), metadata: Schema.optional(ObjectMeta) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ [GoTypeId]: "unstructured.Unstructured", [GoStructId]: "Unstructured" })

/** What a custom resource's strategies know of its CRD, for one version. */
export interface CustomVersion {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly namespaced: boolean
  /** the version's openAPIV3Schema (undefined: none, nothing is pruned, defaulted or checked) */
  readonly schema: JSONSchemaProps | undefined
  /** spec.preserveUnknownFields: nothing is pruned */
  readonly preserveUnknownFields: boolean
  readonly statusSubresource: boolean
  readonly scale: CrdScale | undefined
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** ValidateTypeMeta: the object names the request's kind and version. */
const validateTypeMeta = (v: CustomVersion, obj: Obj): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const gv = `${v.group}/${v.version}`
  if (obj["kind"] !== v.kind) errs.push(F.invalid("kind", obj["kind"] ?? "", `must be ${v.kind}`))
  if (obj["apiVersion"] !== gv) errs.push(F.invalid("apiVersion", obj["apiVersion"] ?? "", `must be ${gv}`))
  return errs
}

/** unstructured.NestedInt64 at a `.spec.replicas` path: the value, or the error's text. */
const nestedInt = (
  obj: Record<string, unknown>,
  path: string
): { value: number } | { error: string; value: number } => {
  const parts = path.replace(/^\./, "").split(".")
  let cur: unknown = obj
  for (let i = 0; i < parts.length; i++) {
    if (!isObject(cur)) {
      return {
        value: 0,
        error: `${parts.slice(0, i).join(".")} accessor error: ${JSON.stringify(cur)} is of the type ${goTypeName(cur)}, expected map[string]interface{}`
      }
    }
    cur = cur[parts[i]!]
    if (cur === undefined) return { value: 0 }
  }
  if (typeof cur === "number" && Number.isInteger(cur)) return { value: cur }
  return {
    value: 0,
    error: `${parts.join(".")} accessor error: ${goShow(cur)} is of the type ${goTypeName(cur)}, expected int64`
  }
}

const goTypeName = (v: unknown): string =>
  v === null
    ? "<nil>"
    : typeof v === "string"
      ? "string"
      : typeof v === "boolean"
        ? "bool"
        : typeof v === "number"
          ? Number.isInteger(v)
            ? "int64"
            : "float64"
          : Array.isArray(v)
            ? "[]interface {}"
            : "map[string]interface {}"
const goShow = (v: unknown): string => (typeof v === "string" ? v : v === null ? "<nil>" : JSON.stringify(v))

const MAX_INT32 = 2147483647

const validateReplicas = (obj: Obj, path: string): Array<FieldError> => {
  const r = nestedInt(obj, path)
  if ("error" in r) return [F.invalid(path, r.value, r.error)]
  if (r.value < 0) return [F.invalid(path, r.value, "should be a non-negative integer")]
  if (r.value > MAX_INT32) return [F.invalid(path, r.value, `should be less than or equal to ${MAX_INT32}`)]
  return []
}

const validateScaleStatus = (v: CustomVersion, obj: Obj): Array<FieldError> => {
  if (v.scale === undefined) return []
  const errs = validateReplicas(obj, v.scale.statusReplicasPath)
  const sel = v.scale.labelSelectorPath
  if (sel !== undefined && sel !== "") {
    let cur: unknown = obj
    for (const p of sel.replace(/^\./, "").split(".")) cur = isObject(cur) ? cur[p] : undefined
    if (cur !== undefined && typeof cur !== "string")
      errs.push(
        F.invalid(
          sel,
          "",
          `${sel.replace(/^\./, "")} accessor error: ${goShow(cur)} is of the type ${goTypeName(cur)}, expected string`
        )
      )
  }
  return errs
}

const schemaErrors = (v: CustomVersion, obj: Obj): Array<FieldError> =>
  v.schema === undefined ? [] : validateAgainstSchema(v.schema, obj)

const copyNonMetadata = (o: Record<string, unknown>) => {
  const { metadata: _m, ...rest } = o
  return rest
}

/** Decode-time coercion: pruning (the strict decoder's unknown fields), then the nulls that go. */
const coerce =
  (v: CustomVersion) =>
  (obj: Obj): ReadonlyArray<string> => {
    if (v.schema === undefined) return []
    const unknown = v.preserveUnknownFields ? [] : pruneResource(obj, v.schema)
    pruneNonNullableNulls(obj, v.schema)
    return unknown
  }

export const customResourceStrategy = (v: CustomVersion): KindStrategy => {
  const rules: MetaRules = { namespaced: v.namespaced, validateName: isDNS1123Subdomain, core: false }
  return {
    schema: Unstructured,
    core: false,
    returnDeletedObject: false,
    coerce: coerce(v),
    defaults: (obj) => applyDefaults(obj, v.schema),
    prepareForCreate: (obj) => {
      if (v.statusSubresource) delete obj["status"]
    },
    prepareForUpdate: (obj, old) => {
      if (!v.statusSubresource) return
      if (old["status"] !== undefined) obj["status"] = structuredClone(old["status"])
      else delete obj["status"]
    },
    validate: (obj) => {
      const tm = validateTypeMeta(v, obj)
      if (tm.length > 0) return tm
      return [
        ...validateObjectMeta(obj.metadata, rules),
        ...schemaErrors(v, obj),
        ...(v.scale === undefined ? [] : validateReplicas(obj, v.scale.specReplicasPath)),
        ...validateScaleStatus(v, obj)
      ]
    },
    validateUpdate: (obj, old) => {
      const tm = validateTypeMeta(v, obj)
      if (tm.length > 0) return tm
      return [
        ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
        ...schemaErrors(v, obj),
        ...(v.scale === undefined ? [] : validateReplicas(obj, v.scale.specReplicasPath)),
        ...validateScaleStatus(v, obj)
      ]
    },
    generationChanged: (obj, old) =>
      JSON.stringify(copyNonMetadata(obj)) !== JSON.stringify(copyNonMetadata(old as Record<string, unknown>))
  }
}

/** statusStrategy: the stored object with the request's status (and managedFields); status validated. */
export const customResourceStatusStrategy = (v: CustomVersion): KindStrategy => {
  const main = customResourceStrategy(v)
  const rules: MetaRules = { namespaced: v.namespaced, validateName: isDNS1123Subdomain, core: false }
  const statusSchema = v.schema?.properties?.["status"]
  return {
    ...main,
    prepareForCreate: undefined,
    prepareForUpdate: (obj: Obj, old: KubeObject) => {
      const status = obj["status"]
      const managedFields = obj.metadata.managedFields
      const copy = structuredClone(old) as Obj
      for (const k of Object.keys(obj)) if (k !== "metadata") delete obj[k]
      for (const k of Object.keys(obj.metadata)) delete (obj.metadata as Record<string, unknown>)[k]
      Object.assign(obj.metadata, copy.metadata)
      if (managedFields !== undefined) obj.metadata.managedFields = managedFields
      else delete obj.metadata.managedFields
      for (const [k, x] of Object.entries(copy)) if (k !== "metadata") obj[k] = x
      if (status !== undefined) obj["status"] = status
      else delete obj["status"]
    },
    validateUpdate: (obj, old) => {
      const tm = validateTypeMeta(v, obj)
      if (tm.length > 0) return tm
      return [
        ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
        ...(statusSchema !== undefined && obj["status"] !== undefined
          ? validateAgainstSchema(statusSchema, obj["status"], "status")
          : []),
        ...validateScaleStatus(v, obj)
      ]
    },
    generationChanged: () => false
  }
}
