/**
 * A CRD version's structural schema as /openapi/v2 publishes it (apiextensions'
 * ToStructuralOpenAPIV2): what Swagger 2.0 or kubectl's v2 validation cannot take is dropped —
 * allOf/anyOf/oneOf/not; a nullable field loses its type, items and properties (and is no longer
 * required), as does a field keeping unknown fields (x-kubernetes-preserve-unknown-fields: its
 * items and properties, and its type when it is an object); an array without items loses its type.
 */
type Schema = Record<string, unknown>

const isSchema = (u: unknown): u is Schema => typeof u === "object" && u !== null && !Array.isArray(u)

const JUNCTORS = ["allOf", "anyOf", "oneOf", "not"]

/** `s` for v2; a copy, `s` is unchanged. */
export const toOpenAPIV2Schema = (s: Schema): Schema => {
  const out: Schema = { ...s }
  for (const k of JUNCTORS) delete out[k]
  if (out["nullable"] === true) {
    delete out["type"]
    delete out["items"]
    delete out["properties"]
  }
  delete out["nullable"]
  const preserve = out["x-kubernetes-preserve-unknown-fields"] === true
  if (preserve) {
    delete out["items"]
    delete out["properties"]
  }
  if (out["items"] === undefined && out["type"] === "array") delete out["type"]
  if (preserve && out["type"] === "object") delete out["type"]
  const properties = isSchema(out["properties"]) ? out["properties"] : undefined
  if (Array.isArray(out["required"])) {
    const nullable = (f: string) => isSchema(properties?.[f]) && properties[f]["nullable"] === true
    const apNullable = isSchema(out["additionalProperties"]) && out["additionalProperties"]["nullable"] === true
    const required = apNullable ? [] : (out["required"] as Array<string>).filter((f) => !nullable(f))
    if (required.length === 0) delete out["required"]
    else out["required"] = required
  }
  if (properties !== undefined)
    out["properties"] = Object.fromEntries(
      Object.entries(properties).map(([k, v]) => [k, isSchema(v) ? toOpenAPIV2Schema(v) : v])
    )
  if (isSchema(out["items"])) out["items"] = toOpenAPIV2Schema(out["items"])
  if (isSchema(out["additionalProperties"]))
    out["additionalProperties"] = toOpenAPIV2Schema(out["additionalProperties"])
  return out
}
