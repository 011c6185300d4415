/**
 * A custom resource against its version's structural schema: kube-openapi's SchemaValidator as
 * the apiextensions-apiserver runs it (pkg/apiserver/validation: ValidateCustomResource and
 * kubeOpenAPIResultToFieldErrors), with its texts — `spec.level: Invalid value: 99: spec.level in
 * body should be less than or equal to 10`, `spec.name: Required value`, `spec.color: Unsupported
 * value: "purple": supported values: "red", "green"`. Per node, in the validator's order: type,
 * allOf/anyOf/oneOf/not, string (maxLength, minLength, pattern), format, number (multipleOf,
 * minimum, maximum), array (items, minItems, maxItems), enum, object (min/maxProperties,
 * additionalProperties, properties, required). Properties are visited in the schema's order (Go
 * visits its map in random order). `x-kubernetes-validations` (CEL) is not evaluated.
 */
import * as F from "../../api/field.js"
import type { FieldError } from "../../api/status.js"
import { formatCheck } from "./formats.js"
import type { JSONSchemaProps } from "./json-schema.js"

const IN = "in body"

/** the JSON type name of a value, as kube-openapi's type validator names it */
export const jsonTypeOf = (v: unknown): string => {
  if (v === null || v === undefined) return "null"
  if (typeof v === "string") return "string"
  if (typeof v === "boolean") return "boolean"
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number"
  if (Array.isArray(v)) return "array"
  return "object"
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const fieldOf = (path: string) => (path.startsWith(".") ? path.slice(1) : path)
const named = (path: string) => fieldOf(path)

const typeInvalid = (path: string, value: unknown, message: string): FieldError => ({
  ...F.invalid(fieldOf(path) === "" ? "<nil>" : fieldOf(path), value, message),
  type: "FieldValueTypeInvalid"
})
const invalidAt = (path: string, value: unknown, message: string): FieldError =>
  F.invalid(fieldOf(path) === "" ? "<nil>" : fieldOf(path), value, message)
/** errors.New(...) of the composite validators: reported at the nil path with an empty value */
const composite = (message: string): FieldError => F.invalid("<nil>", "", message)

const typeNames = (s: JSONSchemaProps): ReadonlyArray<string> =>
  s["x-kubernetes-int-or-string"] === true
    ? ["integer", "string"]
    : s.type === undefined || s.type === ""
      ? []
      : [s.type]

const checkType = (s: JSONSchemaProps, v: unknown, path: string, out: Array<FieldError>): void => {
  const types = typeNames(s)
  if (types.length === 0) return
  const name = named(path)
  if (v === null) {
    if (s.nullable !== true) typeErr(name, types.join(","), "null", path, out)
    return
  }
  const t = jsonTypeOf(v)
  const ok = types.includes(t) || (t === "integer" && types.includes("number"))
  if (!ok) typeErr(name, types.join(","), t, path, out)
}

const typeErr = (name: string, want: string, got: string, path: string, out: Array<FieldError>) =>
  out.push(typeInvalid(path, got, `${name} ${IN} must be of type ${want}: ${JSON.stringify(got)}`))

const checkString = (s: JSONSchemaProps, v: string, path: string, out: Array<FieldError>): void => {
  const name = named(path)
  const length = Array.from(v).length
  if (s.maxLength !== undefined && length > s.maxLength) {
    out.push(F.tooLong(fieldOf(path), s.maxLength))
    return
  }
  if (s.minLength !== undefined && length < s.minLength) {
    out.push(invalidAt(path, v, `${name} ${IN} should be at least ${s.minLength} chars long`))
    return
  }
  if (s.pattern !== undefined && s.pattern !== "" && !patternOf(s.pattern).test(v))
    out.push(invalidAt(path, v, `${name} ${IN} should match '${s.pattern}'`))
}

const patterns = new Map<string, RegExp>()
const patternOf = (p: string): RegExp => {
  let r = patterns.get(p)
  if (r === undefined) {
    r = new RegExp(p, "u")
    patterns.set(p, r)
  }
  return r
}

const checkNumber = (s: JSONSchemaProps, v: number, path: string, out: Array<FieldError>): void => {
  const name = named(path)
  if (s.multipleOf !== undefined && s.multipleOf !== 0) {
    const q = v / s.multipleOf
    if (Math.abs(q - Math.round(q)) > 1e-9)
      out.push(invalidAt(path, v, `${name} ${IN} should be a multiple of ${s.multipleOf}`))
  }
  if (s.minimum !== undefined) {
    const ex = s.exclusiveMinimum === true
    if (ex ? v <= s.minimum : v < s.minimum)
      out.push(invalidAt(path, v, `${name} ${IN} should be greater than ${ex ? "" : "or equal to "}${s.minimum}`))
  }
  if (s.maximum !== undefined) {
    const ex = s.exclusiveMaximum === true
    if (ex ? v >= s.maximum : v > s.maximum)
      out.push(invalidAt(path, v, `${name} ${IN} should be less than ${ex ? "" : "or equal to "}${s.maximum}`))
  }
}

const checkArray = (s: JSONSchemaProps, v: ReadonlyArray<unknown>, path: string, out: Array<FieldError>): void => {
  if (s.items !== undefined) v.forEach((item, i) => validateNode(s.items!, item, `${path}[${i}]`, out))
  if (s.minItems !== undefined && v.length < s.minItems)
    out.push(invalidAt(path, v.length, `${named(path)} ${IN} should have at least ${s.minItems} items`))
  if (s.maxItems !== undefined && v.length > s.maxItems) out.push(tooMany(path, v.length, s.maxItems))
}

const tooMany = (path: string, actual: number, max: number): FieldError => ({
  type: "FieldValueTooMany",
  field: fieldOf(path),
  message: `Too many: ${actual}: must have at most ${max} items`
})

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

const checkEnum = (s: JSONSchemaProps, v: unknown, path: string, out: Array<FieldError>): void => {
  if (s.enum === undefined || s.enum.length === 0) return
  if (s.enum.some((e) => deepEqual(e, v))) return
  out.push(
    F.notSupported(
      fieldOf(path),
      v,
      s.enum.map((e) => (typeof e === "string" ? e : JSON.stringify(e)))
    )
  )
}

const checkObject = (s: JSONSchemaProps, v: Record<string, unknown>, path: string, out: Array<FieldError>): void => {
  const n = Object.keys(v).length
  if (s.minProperties !== undefined && n < s.minProperties)
    out.push(invalidAt(path, n, `${named(path)} ${IN} should have at least ${s.minProperties} properties`))
  if (s.maxProperties !== undefined && n > s.maxProperties) out.push(tooMany(path, n, s.maxProperties))
  const props = s.properties ?? {}
  if (s.additionalProperties === false) {
    for (const k of Object.keys(v))
      if (!Object.hasOwn(props, k)) out.push(invalidAt(path, "", `${named(path)}.${k} ${IN} is a forbidden property`))
  } else if (typeof s.additionalProperties === "object") {
    for (const [k, x] of Object.entries(v))
      if (!Object.hasOwn(props, k)) validateNode(s.additionalProperties, x, `${path}.${k}`, out)
  }
  for (const [k, p] of Object.entries(props)) if (Object.hasOwn(v, k)) validateNode(p, v[k], `${path}.${k}`, out)
  for (const k of s.required ?? []) if (!Object.hasOwn(v, k)) out.push(F.required(fieldOf(`${path}.${k}`)))
}

/** allOf / anyOf / oneOf / not (schemaPropsValidator) */
const checkComposition = (s: JSONSchemaProps, v: unknown, path: string, out: Array<FieldError>): void => {
  const run = (x: JSONSchemaProps) => {
    const r: Array<FieldError> = []
    validateNode(x, v, path, r)
    return r
  }
  const name = JSON.stringify(named(path))
  if (s.anyOf !== undefined && s.anyOf.length > 0) {
    const results = s.anyOf.map(run)
    if (!results.some((r) => r.length === 0)) {
      out.push(composite(`${name} must validate at least one schema (anyOf)`))
      out.push(...results[0]!)
    }
  }
  if (s.oneOf !== undefined && s.oneOf.length > 0) {
    const results = s.oneOf.map(run)
    const valid = results.filter((r) => r.length === 0).length
    if (valid !== 1) {
      out.push(
        composite(
          `${name} must validate one and only one schema (oneOf). ${valid === 0 ? "Found none valid" : `Found ${valid} valid alternatives`}`
        )
      )
      if (valid === 0) out.push(...results[0]!)
    }
  }
  if (s.allOf !== undefined && s.allOf.length > 0) {
    const results = s.allOf.map(run)
    for (const r of results) out.push(...r)
    const valid = results.filter((r) => r.length === 0).length
    if (valid !== results.length)
      out.push(composite(`${name} must validate all the schemas (allOf)${valid === 0 ? ". None validated" : ""}`))
  }
  if (s.not !== undefined && run(s.not).length === 0) out.push(composite(`${name} must not validate the schema (not)`))
}

const validateNode = (s: JSONSchemaProps, v: unknown, path: string, out: Array<FieldError>): void => {
  checkType(s, v, path, out)
  if (v === null || v === undefined) {
    checkEnum(s, v, path, out)
    return
  }
  checkComposition(s, v, path, out)
  if (typeof v === "string") {
    checkString(s, v, path, out)
    const format = formatCheck(s.format)
    if (format !== undefined && !format(v))
      out.push(typeInvalid(path, v, `${named(path)} ${IN} must be of type ${s.format}: ${JSON.stringify(v)}`))
  } else if (typeof v === "number") checkNumber(s, v, path, out)
  else if (Array.isArray(v)) checkArray(s, v, path, out)
  checkEnum(s, v, path, out)
  if (isObject(v)) checkObject(s, v, path, out)
}

/** ValidateCustomResource: the object (or, at `prefix` "status", the status) against the schema. */
export const validateAgainstSchema = (s: JSONSchemaProps, value: unknown, prefix = ""): Array<FieldError> => {
  const out: Array<FieldError> = []
  validateNode(s, value, "", out)
  if (prefix === "") return out
  return out.map((e) => ({
    ...e,
    field: e.field === "<nil>" ? prefix : `${prefix}.${e.field}`
  }))
}
