/**
 * apiextensions' structural-schema rules (pkg/apiserver/schema/validation.go ValidateStructural
 * and complete.go), which every v1 CRD's schema must meet: a type on every node (unless
 * int-or-string or preserve-unknown-fields), an object at the root, `items` for arrays, nothing
 * but value validations inside allOf/anyOf/oneOf/not, a root `metadata` that constrains only name
 * and generateName, and whatever a value validation names defined structurally. The errors are
 * sorted by their text, as ValidateStructural sorts them. A few of the OpenAPI checks of
 * ValidateCustomResourceDefinitionOpenAPISchema ride along (an unknown type, uniqueItems,
 * properties beside additionalProperties).
 */
import * as F from "../../api/field.js"
import { type FieldError, fieldErrorText } from "../../api/status.js"
import type { JSONSchemaProps } from "./json-schema.js"

type Level = "root" | "item" | "field"

const child = (path: string, name: string) => (path === "" ? name : `${path}.${name}`)
const prop = (path: string, k: string) => F.key(child(path, "properties"), k)

const isIntOrStringAnyOf = (anyOf: ReadonlyArray<JSONSchemaProps> | undefined): boolean =>
  anyOf !== undefined &&
  anyOf.length === 2 &&
  anyOf.every((a, i) => Object.keys(a).length === 1 && a.type === (i === 0 ? "integer" : "string"))

const additionalSchema = (s: JSONSchemaProps): JSONSchemaProps | undefined =>
  typeof s.additionalProperties === "object" ? s.additionalProperties : undefined

/** validateStructuralInvariants */
const invariants = (s: JSONSchemaProps, lvl: Level, path: string, out: Array<FieldError>): void => {
  if (s.type === "array" && s.items === undefined) out.push(F.required(child(path, "items"), "must be specified"))
  if (s.items !== undefined) invariants(s.items, "item", child(path, "items"), out)
  for (const [k, v] of Object.entries(s.properties ?? {})) invariants(v, "field", prop(path, k), out)
  if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
    if (lvl === "root") out.push(F.forbidden(child(path, "additionalProperties"), "must not be used at the root"))
    const a = additionalSchema(s)
    if (a !== undefined) invariants(a, "field", child(path, "additionalProperties"), out)
  }
  const intOrString = s["x-kubernetes-int-or-string"] === true
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true
  const embedded = s["x-kubernetes-embedded-resource"] === true
  if (intOrString && preserve)
    out.push(
      F.invalid(
        child(path, "x-kubernetes-preserve-unknown-fields"),
        true,
        "must be false if x-kubernetes-int-or-string is true"
      )
    )
  if (intOrString && embedded)
    out.push(
      F.invalid(
        child(path, "x-kubernetes-embedded-resource"),
        true,
        "must be false if x-kubernetes-int-or-string is true"
      )
    )
  valueValidation(s, isIntOrStringAnyOf(s.anyOf), isIntOrStringAnyOf(s.allOf?.[0]?.anyOf), lvl, path, out)
  const type = s.type ?? ""
  if (embedded && type !== "object") {
    const msg = "must be object if x-kubernetes-embedded-resource is true"
    out.push(type === "" ? F.required(child(path, "type"), msg) : F.invalid(child(path, "type"), type, msg))
  } else if (type === "" && !intOrString && !preserve) {
    const where = { root: "at the root", item: "for specified array items", field: "for specified object fields" }[lvl]
    out.push(F.required(child(path, "type"), `must not be empty ${where}`))
  }
  if (embedded && s.additionalProperties !== undefined)
    out.push(
      F.forbidden(child(path, "additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set")
    )
  if (lvl === "root" && type !== "" && type !== "object")
    out.push(F.invalid(child(path, "type"), type, "must be object at the root"))
  const checkMetadata = lvl === "root" || embedded
  for (const f of ["kind", "apiVersion"]) {
    const p = s.properties?.[f]
    if (p !== undefined && checkMetadata && p.type !== "string")
      out.push(F.invalid(child(prop(path, f), "type"), p.type ?? "", "must be string"))
  }
  const metadata = s.properties?.["metadata"]
  if (metadata !== undefined) metadataInvariants(metadata, checkMetadata, lvl, prop(path, "metadata"), out)
  if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0)
    out.push(
      F.required(
        child(path, "properties"),
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
      )
    )
}

const metadataInvariants = (
  s: JSONSchemaProps,
  checkMetadata: boolean,
  lvl: Level,
  path: string,
  out: Array<FieldError>
): void => {
  if (checkMetadata && s.type !== "object") out.push(F.invalid(child(path, "type"), s.type ?? "", "must be object"))
  if (lvl !== "root") return
  // only name and generateName may be constrained; type and default are checked elsewhere
  const props = Object.keys(s.properties ?? {})
  const onlyNames = props.every((p) => p === "name" || p === "generateName")
  const rest = (Object.keys(s) as Array<keyof JSONSchemaProps>).filter(
    (k) => k !== "type" && k !== "default" && !(k === "properties" && onlyNames) && isSet(s[k])
  )
  if (rest.length > 0)
    out.push(
      F.forbidden(
        path,
        "must not specify anything other than name and generateName, but metadata is implicitly specified"
      )
    )
}

const valueValidation = (
  v: JSONSchemaProps,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  lvl: Level,
  path: string,
  out: Array<FieldError>
): void => {
  if (!skipAnyOf) (v.anyOf ?? []).forEach((a, i) => nested(a, false, lvl, F.index(child(path, "anyOf"), i), out))
  ;(v.allOf ?? []).forEach((a, i) =>
    nested(a, skipFirstAllOfAnyOf && i === 0, lvl, F.index(child(path, "allOf"), i), out)
  )
  ;(v.oneOf ?? []).forEach((a, i) => nested(a, false, lvl, F.index(child(path, "oneOf"), i), out))
  if (v.not !== undefined) nested(v.not, false, lvl, child(path, "not"), out)
  if (v.pattern !== undefined && v.pattern !== "") {
    try {
      new RegExp(v.pattern, "u")
    } catch (e) {
      out.push(
        F.invalid(
          child(path, "pattern"),
          v.pattern,
          `must be a valid regular expression, but isn't: ${(e as Error).message}`
        )
      )
    }
  }
}

const FORBIDDEN_NESTED: ReadonlyArray<readonly [keyof JSONSchemaProps, string]> = [
  ["type", "must be empty to be structural"],
  ["additionalProperties", "must be undefined to be structural"],
  ["default", "must be undefined to be structural"],
  ["title", "must be empty to be structural"],
  ["description", "must be empty to be structural"],
  ["nullable", "must be false to be structural"],
  ["x-kubernetes-preserve-unknown-fields", "must be false to be structural"],
  ["x-kubernetes-embedded-resource", "must be false to be structural"],
  ["x-kubernetes-int-or-string", "must be false to be structural"],
  ["x-kubernetes-list-map-keys", "must be empty to be structural"],
  ["x-kubernetes-list-type", "must be undefined to be structural"],
  ["x-kubernetes-map-type", "must be undefined to be structural"],
  ["x-kubernetes-validations", "must be empty to be structural"]
]

const isSet = (v: unknown): boolean =>
  v !== undefined && v !== false && v !== "" && !(Array.isArray(v) && v.length === 0)

/** validateNestedValueValidation: inside allOf/anyOf/oneOf/not only value validations */
const nested = (v: JSONSchemaProps, skipAnyOf: boolean, lvl: Level, path: string, out: Array<FieldError>): void => {
  valueValidation(v, skipAnyOf, false, lvl, path, out)
  if (v.items !== undefined) nested(v.items, false, lvl, child(path, "items"), out)
  for (const [k, f] of Object.entries(v.properties ?? {})) nested(f, false, "field", prop(path, k), out)
  for (const [k, text] of FORBIDDEN_NESTED) {
    const value = v[k]
    if (
      k === "x-kubernetes-list-type" || k === "x-kubernetes-map-type" || k === "default"
        ? value !== undefined
        : isSet(value)
    )
      out.push(F.forbidden(child(path, k), text))
  }
  if (v.properties?.["metadata"] !== undefined)
    out.push(F.forbidden(prop(path, "metadata"), "must not be specified in a nested context"))
}

/** complete.go: what the root's value validations name must exist structurally. */
const completeness = (s: JSONSchemaProps, path: string, out: Array<FieldError>): void => {
  const walk = (v: JSONSchemaProps, st: JSONSchemaProps | undefined, sPath: string, vPath: string): void => {
    if (st === undefined) {
      out.push(F.required(sPath, `because it is defined in ${vPath}`))
      return
    }
    if (v.not !== undefined) walk(v.not, st, sPath, child(vPath, "not"))
    for (const k of ["allOf", "anyOf", "oneOf"] as const)
      (v[k] ?? []).forEach((a, i) => walk(a, st, sPath, F.index(child(vPath, k), i)))
    if (v.items !== undefined) walk(v.items, st.items, child(sPath, "items"), child(vPath, "items"))
    for (const [k, f] of Object.entries(v.properties ?? {})) {
      const sf = st.properties?.[k]
      if (sf === undefined) out.push(F.required(prop(sPath, k), `because it is defined in ${prop(vPath, k)}`))
      else walk(f, sf, prop(sPath, k), prop(vPath, k))
    }
  }
  if (s.not !== undefined) walk(s.not, s, path, child(path, "not"))
  for (const k of ["allOf", "anyOf", "oneOf"] as const)
    (s[k] ?? []).forEach((a, i) => walk(a, s, path, F.index(child(path, k), i)))
}

const OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]

/** The OpenAPI checks of ValidateCustomResourceDefinitionOpenAPISchema this server makes. */
const openAPIChecks = (s: JSONSchemaProps, path: string, out: Array<FieldError>): void => {
  if (s.uniqueItems === true)
    out.push(
      F.forbidden(
        child(path, "uniqueItems"),
        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
      )
    )
  if (
    s.additionalProperties !== undefined &&
    s.additionalProperties !== true &&
    Object.keys(s.properties ?? {}).length > 0
  )
    out.push(
      F.forbidden(child(path, "additionalProperties"), "additionalProperties and properties are mutual exclusive")
    )
  if (s.type !== undefined && s.type !== "" && !OPENAPI_TYPES.includes(s.type))
    out.push(F.notSupported(child(path, "type"), s.type, OPENAPI_TYPES))
  for (const [k, v] of Object.entries(s.properties ?? {})) openAPIChecks(v, prop(path, k), out)
  if (s.items !== undefined) openAPIChecks(s.items, child(path, "items"), out)
  const a = additionalSchema(s)
  if (a !== undefined) openAPIChecks(a, child(path, "additionalProperties"), out)
  for (const k of ["allOf", "anyOf", "oneOf"] as const)
    (s[k] ?? []).forEach((x, i) => openAPIChecks(x, F.index(child(path, k), i), out))
  if (s.not !== undefined) openAPIChecks(s.not, child(path, "not"), out)
}

/** ValidateStructural at `path` (`spec.versions[0].schema.openAPIV3Schema`): sorted by text. */
export const validateStructural = (path: string, s: JSONSchemaProps): Array<FieldError> => {
  const out: Array<FieldError> = []
  invariants(s, "root", path, out)
  completeness(s, path, out)
  return out.sort((a, b) =>
    fieldErrorText(a) < fieldErrorText(b) ? -1 : fieldErrorText(a) > fieldErrorText(b) ? 1 : 0
  )
}

/** The schema errors of one version's openAPIV3Schema as the CRD's validation reports them. */
export const validateVersionSchema = (path: string, s: JSONSchemaProps): Array<FieldError> => {
  const out: Array<FieldError> = []
  if (s.nullable === true) out.push(F.forbidden(child(path, "nullable"), "nullable cannot be true at the root"))
  out.push(...validateStructural(path, s))
  openAPIChecks(s, path, out)
  return out
}
