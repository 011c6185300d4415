/**
 * /openapi/v2 in protobuf: the Swagger 2.0 document as gnostic's `openapi.v2.Document` (vendored
 * proto/github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto), what client-go's
 * `OpenAPISchema()` asks for and what kube-openapi's handler serves (`ToProtoBinary`: gnostic's
 * ParseDocument, then proto.Marshal). Maps become lists of named entries, a schema's `$ref` is
 * `_ref`, `type` and `items` are wrapped, and every free-form value — `default`, `enum`,
 * `example`, each `x-` extension — is an `Any` holding its YAML (JSON here: YAML's subset whose
 * strings cannot be misread). The proto is loaded on the first request for it.
 */
import type protobufjs from "protobufjs"
import { gnosticProtos, parseProtos, readCompiled } from "../../../proto/compile.js"
import { protoDir } from "../../../proto/load.js"

type Json = Record<string, unknown>

let documentType: protobufjs.Type | undefined

const documentMessage = (): protobufjs.Type =>
  (documentType ??= (readCompiled(protoDir, gnosticProtos) ?? parseProtos(protoDir, gnosticProtos)).lookupType(
    "openapi.v2.Document"
  ))

const any = (value: unknown) => ({ yaml: `${JSON.stringify(value)}\n` })

const extensions = (o: Json) =>
  Object.entries(o)
    .filter(([k]) => k.startsWith("x-"))
    .map(([name, value]) => ({ name, value: any(value) }))

const named = (o: unknown) =>
  Object.entries((o ?? {}) as Record<string, Json>).map(([name, value]) => ({ name, value: schema(value) }))

/** JSON Schema keys gnostic's Schema has under the same meaning: JSON name → proto field */
const SCALARS: Readonly<Record<string, string>> = {
  format: "format",
  title: "title",
  description: "description",
  multipleOf: "multiple_of",
  maximum: "maximum",
  exclusiveMaximum: "exclusive_maximum",
  minimum: "minimum",
  exclusiveMinimum: "exclusive_minimum",
  maxLength: "max_length",
  minLength: "min_length",
  pattern: "pattern",
  maxItems: "max_items",
  minItems: "min_items",
  uniqueItems: "unique_items",
  maxProperties: "max_properties",
  minProperties: "min_properties",
  required: "required",
  discriminator: "discriminator",
  readOnly: "read_only"
}

/** A schema as gnostic's Schema message (keys it has no field for are left out). */
const schema = (s: Json): Json => {
  const out: Json = {}
  for (const [k, v] of Object.entries(s)) {
    const field = SCALARS[k]
    if (field !== undefined) out[field] = v
    else if (k === "$ref") out["_ref"] = v
    else if (k === "default" || k === "example") out[k] = any(v)
    else if (k === "enum") out["enum"] = (v as Array<unknown>).map(any)
    else if (k === "type") out["type"] = { value: Array.isArray(v) ? v : [v] }
    else if (k === "items") out["items"] = { schema: (Array.isArray(v) ? v : [v]).map(schema) }
    else if (k === "allOf") out["all_of"] = (v as Array<Json>).map(schema)
    else if (k === "properties") out["properties"] = { additional_properties: named(v) }
    else if (k === "additionalProperties")
      out["additional_properties"] = typeof v === "boolean" ? { boolean: v } : { schema: schema(v as Json) }
    else if (k === "externalDocs") out["external_docs"] = v
  }
  const vendor = extensions(s)
  if (vendor.length > 0) out["vendor_extension"] = vendor
  return out
}

/** The protobuf bytes of a Swagger 2.0 document with `info`, `definitions` and no operations. */
export const encodeOpenApiV2 = (doc: { swagger: string; info: Json; definitions: Json }): Uint8Array => {
  const Document = documentMessage()
  const message = Document.fromObject({
    swagger: doc.swagger,
    info: { title: doc.info["title"], version: doc.info["version"] },
    paths: {},
    definitions: { additional_properties: named(doc.definitions) }
  })
  return Document.encode(message).finish()
}
