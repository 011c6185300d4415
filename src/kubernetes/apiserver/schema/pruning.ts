/**
 * Pruning (pkg/apiserver/schema/pruning/algorithm.go): fields the structural schema does not
 * specify are deleted, except below `x-kubernetes-preserve-unknown-fields: true`; the resource
 * root (and every embedded resource) keeps apiVersion, kind and metadata. The deleted paths are
 * returned sorted (`spec.foo`, `spec.items[0].bar`): the strict decoder reports them as
 * `unknown field "…"` under fieldValidation=Strict/Warn. Then (defaulting/prunenulls.go) nulls of
 * non-nullable fields without a default go.
 */
import type { JSONSchemaProps } from "./json-schema.js"

const META_FIELDS = new Set(["apiVersion", "kind", "metadata"])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** the schema of a key that is not a property: additionalProperties' (undefined for `true`/`false`) */
const additional = (
  s: JSONSchemaProps
): { readonly present: boolean; readonly schema?: JSONSchemaProps | undefined } =>
  s.additionalProperties === undefined
    ? { present: false }
    : { present: true, schema: typeof s.additionalProperties === "object" ? s.additionalProperties : undefined }

const join = (parent: string, key: string) => (parent === "" ? key : `${parent}.${key}`)

const prune = (x: unknown, s: JSONSchemaProps | undefined, path: string, unknown: Array<string>): void => {
  if (s !== undefined && s["x-kubernetes-preserve-unknown-fields"] === true) {
    skipPrune(x, s, path, unknown)
    return
  }
  if (isObject(x)) {
    for (const k of Object.keys(x)) {
      if (s === undefined) {
        unknown.push(join(path, k))
        delete x[k]
        continue
      }
      if (s["x-kubernetes-embedded-resource"] === true && META_FIELDS.has(k)) continue
      const prop = s.properties?.[k]
      const add = additional(s)
      if (prop !== undefined) prune(x[k], prop, join(path, k), unknown)
      else if (add.present) prune(x[k], add.schema, join(path, k), unknown)
      else {
        if (!META_FIELDS.has(k) || path !== "") unknown.push(join(path, k))
        delete x[k]
      }
    }
  } else if (Array.isArray(x)) {
    x.forEach((v, i) => prune(v, s?.items, `${path}[${i}]`, unknown))
  }
}

const skipPrune = (x: unknown, s: JSONSchemaProps, path: string, unknown: Array<string>): void => {
  if (isObject(x)) {
    for (const k of Object.keys(x)) {
      if (s["x-kubernetes-embedded-resource"] === true && META_FIELDS.has(k)) continue
      const prop = s.properties?.[k]
      const add = additional(s)
      if (prop !== undefined) prune(x[k], prop, join(path, k), unknown)
      else if (add.present) prune(x[k], add.schema, join(path, k), unknown)
    }
  } else if (Array.isArray(x) && s.items !== undefined) {
    x.forEach((v, i) => skipPrune(v, s.items!, `${path}[${i}]`, unknown))
  }
}

/** Prunes a custom resource in place (its root an embedded resource); the pruned paths, sorted. */
export const pruneResource = (obj: Record<string, unknown>, s: JSONSchemaProps): Array<string> => {
  const unknown: Array<string> = []
  prune(obj, { ...s, "x-kubernetes-embedded-resource": true }, "", unknown)
  return unknown.sort()
}

const fieldSchema = (s: JSONSchemaProps | undefined, k: string): JSONSchemaProps | undefined =>
  s === undefined
    ? undefined
    : (s.properties?.[k] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined))

/** PruneNonNullableNullsWithoutDefaults */
export const pruneNonNullableNulls = (x: unknown, s: JSONSchemaProps | undefined): void => {
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      const f = fieldSchema(s, k)
      if (v === null && f !== undefined && f.nullable !== true && f.default === undefined) delete x[k]
      else pruneNonNullableNulls(v, f)
    }
  } else if (Array.isArray(x)) {
    for (const v of x) pruneNonNullableNulls(v, s?.items)
  }
}
