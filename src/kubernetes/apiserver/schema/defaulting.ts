/**
 * Structural defaulting (pkg/apiserver/schema/defaulting/algorithm.go Default): a property with a
 * `default` that is absent, or null and not nullable, gets a copy of the default; then the
 * recursion goes on into it. Items and additionalProperties values that are non-nullable nulls
 * get their default too. Run on a decoded request (after pruning) and on every object read from
 * storage, as the apiserver's codecs do.
 */
import type { JSONSchemaProps } from "./json-schema.js"

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const nonNullableNull = (x: unknown, s: JSONSchemaProps | undefined) =>
  x === null && s !== undefined && s.nullable !== true

const copy = (v: unknown): unknown => (v === undefined ? null : structuredClone(v))

export const applyDefaults = (x: unknown, s: JSONSchemaProps | undefined): void => {
  if (s === undefined) return
  if (isObject(x)) {
    for (const [k, prop] of Object.entries(s.properties ?? {})) {
      if (prop.default === undefined) continue
      if (!Object.hasOwn(x, k) || nonNullableNull(x[k], prop)) x[k] = copy(prop.default)
    }
    const add = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined
    for (const k of Object.keys(x)) {
      const prop = s.properties?.[k]
      if (prop !== undefined) applyDefaults(x[k], prop)
      else if (add !== undefined) {
        if (nonNullableNull(x[k], add)) x[k] = copy(add.default)
        applyDefaults(x[k], add)
      }
    }
  } else if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (nonNullableNull(x[i], s.items)) x[i] = copy(s.items!.default)
      applyDefaults(x[i], s.items)
    }
  }
}

/** Whether a schema has a default anywhere (reads then need defaulting). */
export const hasDefaults = (s: JSONSchemaProps | undefined): boolean => {
  if (s === undefined) return false
  if (s.default !== undefined) return true
  if (Object.values(s.properties ?? {}).some(hasDefaults)) return true
  if (typeof s.additionalProperties === "object" && hasDefaults(s.additionalProperties)) return true
  return hasDefaults(s.items)
}
