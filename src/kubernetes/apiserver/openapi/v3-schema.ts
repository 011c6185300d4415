/**
 * A Swagger 2.0 definition as an OpenAPI 3.0 component schema, as Kubernetes' v3 documents have
 * it (kube-openapi builds both from the same Go types): references point at
 * `#/components/schemas/…`, a reference with siblings (a property's description, its default)
 * becomes `allOf: [{$ref}]` beside them — OpenAPI 3.0 ignores a `$ref`'s siblings — and the
 * property defaults the v2 document pruned are put back. test/…/openapi-upstream.test.ts checks
 * the result against Kubernetes' own v3 documents, schema for schema.
 */
import { type OpenApiSchema, V2_REF, V3_REF } from "./definitions.js"

/** keys whose value is a map of schemas, by name */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions"])
/** keys whose value is a schema (or, for additionalProperties, a boolean) */
const SCHEMAS = new Set(["additionalProperties", "not"])
/** keys whose value is a list of schemas */
const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf"])

const convert = (u: unknown): unknown => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return u
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(u)) {
    if (k === "$ref" && typeof v === "string") out[k] = v.startsWith(V2_REF) ? V3_REF + v.slice(V2_REF.length) : v
    else if (SCHEMA_MAPS.has(k) && typeof v === "object" && v !== null)
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, convert(s)]))
    else if (SCHEMAS.has(k)) out[k] = convert(v)
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map(convert)
    else if (k === "items") out[k] = Array.isArray(v) ? v.map(convert) : convert(v)
    else out[k] = v
  }
  const { $ref, ...siblings } = out
  return $ref === undefined || Object.keys(siblings).length === 0 ? out : { ...siblings, allOf: [{ $ref }] }
}

/** `def` as a v3 component schema, with `defaults` (property → default) on its properties. */
export const toV3Schema = (
  def: OpenApiSchema,
  defaults: Readonly<Record<string, unknown>> = {}
): Record<string, unknown> => {
  const withDefaults =
    Object.keys(defaults).length === 0
      ? def
      : {
          ...def,
          properties: Object.fromEntries(
            Object.entries((def["properties"] ?? {}) as Record<string, object>).map(([name, s]) => [
              name,
              name in defaults ? { ...s, default: defaults[name] } : s
            ])
          )
        }
  return convert(withDefaults) as Record<string, unknown>
}
