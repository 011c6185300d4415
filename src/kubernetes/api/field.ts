/**
 * apimachinery's util/validation/field: the constructors of field errors with their exact texts.
 * A value prints plainly for numbers and bools, Go-quoted for strings, and as JSON otherwise
 * (`Invalid value: ["a","b"]`); paths are `metadata.labels`, `data[key]`, `spec.finalizers[0]`.
 */
import { goMarshalSorted } from "./go-json.js"
import type { FieldError } from "./status.js"
import { goQuote } from "./validation.js"

/** How field.Error prints a BadValue. */
export const goValue = (v: unknown): string => {
  if (typeof v === "string") return goQuote(v)
  if (typeof v === "number" || typeof v === "boolean") return String(v)
  if (v === undefined) return "null"
  return goMarshalSorted(v)
}

const body = (head: string, detail: string | undefined) =>
  detail === undefined || detail === "" ? head : `${head}: ${detail}`

export const invalid = (field: string, value: unknown, detail?: string): FieldError => ({
  type: "FieldValueInvalid",
  field,
  message: body(`Invalid value: ${goValue(value)}`, detail)
})

export const required = (field: string, detail?: string): FieldError => ({
  type: "FieldValueRequired",
  field,
  message: body("Required value", detail)
})

export const forbidden = (field: string, detail: string): FieldError => ({
  type: "FieldValueForbidden",
  field,
  message: body("Forbidden", detail)
})

export const notSupported = (field: string, value: unknown, supported: ReadonlyArray<string>): FieldError => ({
  type: "FieldValueNotSupported",
  field,
  message: body(
    `Unsupported value: ${goValue(value)}`,
    supported.length === 0 ? undefined : `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`
  )
})

export const tooLong = (field: string, max: number): FieldError => ({
  type: "FieldValueTooLong",
  field,
  message: `Too long: may not be more than ${max} ${max === 1 ? "byte" : "bytes"}`
})

export const duplicate = (field: string, value: unknown): FieldError => ({
  type: "FieldValueDuplicate",
  field,
  message: `Duplicate value: ${goValue(value)}`
})

/** field.NewPath(...).Key(k): `data[k]` (the key unquoted). */
export const key = (path: string, k: string): string => `${path}[${k}]`
/** field.NewPath(...).Index(i) */
export const index = (path: string, i: number): string => `${path}[${i}]`
/** field.NewPath("") renders as "[]" */
export const ROOT = "[]"
