/**
 * The apiserver's FieldManager for a request (endpoints/handlers' scope.FieldManager): the
 * resource's type for server-side apply — a built-in kind's from Kubernetes' OpenAPI definitions
 * (proto/k8s.io/openapi/definitions.json, loaded on the first write that needs it), a custom
 * resource's from its version's structural schema — with the reset fields of the subresource, and
 * the manager of a write (its fieldManager, else the User-Agent's product, `prefixFromUserAgent`).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { protoDir } from "../../../proto/load.js"
import { type FieldManagerConfig, resetFields } from "../../managedfields/field-manager.js"
import { FieldSet } from "../../managedfields/field-set.js"
import { fromOpenApi, type OpenApiSchema } from "../../managedfields/openapi-schema.js"
import type { TypeSchema } from "../../managedfields/type-schema.js"
import { apiVersionOf, type ResourceInfo } from "../resources.js"
import { timestamp } from "./defaulting.js"
import { isPrint } from "./options.js"

interface Definitions {
  readonly definitions: Readonly<Record<string, OpenApiSchema>>
  readonly schema: TypeSchema
  /** "group/version/Kind" → definition name */
  readonly byKind: ReadonlyMap<string, string>
}

let builtin: Definitions | undefined

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

/** the vendored definitions, parsed once */
export const builtinDefinitions = (): Definitions => {
  if (builtin !== undefined) return builtin
  const file = JSON.parse(readFileSync(join(protoDir, "k8s.io/openapi/definitions.json"), "utf8")) as {
    definitions: Record<string, OpenApiSchema>
  }
  const byKind = new Map<string, string>()
  for (const [name, def] of Object.entries(file.definitions)) {
    const gvks = def["x-kubernetes-group-version-kind"]
    if (Array.isArray(gvks))
      for (const g of gvks as Array<{ group: string; version: string; kind: string }>)
        byKind.set(`${g.group}/${g.version}/${g.kind}`, name)
  }
  builtin = { definitions: file.definitions, schema: fromOpenApi(file.definitions), byKind }
  return builtin
}

const customSchemas = new WeakMap<object, TypeSchema>()

/** A custom resource's version as an OpenAPI definition: its schema with metadata as ObjectMeta. */
const customSchema = (schema: OpenApiSchema): TypeSchema => {
  let s = customSchemas.get(schema)
  if (s === undefined) {
    const props = { ...(schema.properties ?? {}) }
    props["apiVersion"] = { type: "string" }
    props["kind"] = { type: "string" }
    props["metadata"] = { $ref: `#/definitions/${OBJECT_META}` }
    const defs = {
      ...builtinDefinitions().definitions,
      "custom.resource": { ...schema, type: "object", properties: props }
    }
    s = fromOpenApi(defs)
    customSchemas.set(schema, s)
  }
  return s
}

/** GetResetFields of the resource's strategies: what a main-resource or subresource write may not own */
const resets = (info: ResourceInfo, subresource: string): FieldSet | undefined => {
  if (info.custom) {
    const hasStatus = Object.values(info.versionStrategies ?? {}).some((v) => "status" in v.subresources)
    return resetFields(subresource, hasStatus)
  }
  if (info.kind === "Namespace") return FieldSet.fields([subresource === "status" ? "spec" : "status"])
  if (info.kind === "CustomResourceDefinition")
    return subresource === "status" ? FieldSet.fields(["metadata"], ["spec"]) : FieldSet.fields(["status"])
  return undefined
}

const SCALE = "io.k8s.api.autoscaling.v1.Scale"

/**
 * autoscaling/v1 Scale's type (Kubernetes' definitions of Scale, ScaleSpec and ScaleStatus, types
 * only: the vendored file holds the kinds we serve, and Scale is served only as a subresource).
 */
const scaleDefinitions: Readonly<Record<string, OpenApiSchema>> = {
  [SCALE]: {
    type: "object",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { $ref: `#/definitions/${OBJECT_META}` },
      spec: { $ref: `#/definitions/${SCALE}Spec` },
      status: { $ref: `#/definitions/${SCALE}Status` }
    }
  },
  [`${SCALE}Spec`]: { type: "object", properties: { replicas: { type: "integer", format: "int32" } } },
  [`${SCALE}Status`]: {
    type: "object",
    properties: { replicas: { type: "integer", format: "int32" }, selector: { type: "string" } }
  }
}

let scaleSchema: TypeSchema | undefined

/** the field manager of a scale subresource write: on the Scale (handlers/scale.ts maps its managedFields) */
const scaleFieldManager = (): FieldManagerConfig => {
  scaleSchema ??= fromOpenApi({ ...builtinDefinitions().definitions, ...scaleDefinitions })
  return {
    typed: { schema: scaleSchema, type: { named: SCALE }, versions: new Set(["autoscaling/v1"]) },
    gvk: { group: "autoscaling", version: "v1", kind: "Scale" },
    subresource: "scale",
    now: () => timestamp()
  }
}

/**
 * The field manager of a write to `info` in `version` (a subresource's: "status", "finalize", or
 * "scale", whose manager works on the Scale); undefined where none tracks managedFields (a kind
 * without a schema).
 */
export const fieldManagerFor = (
  info: ResourceInfo,
  version: string,
  subresource: string | undefined
): FieldManagerConfig | undefined => {
  if (subresource === "scale") return scaleFieldManager()
  const sub = subresource ?? ""
  const gvk = { group: info.group, version, kind: info.kind }
  let schema: TypeSchema
  let type
  if (info.custom) {
    const s = info.openAPISchemas?.[version] as OpenApiSchema | undefined
    if (s === undefined) return undefined
    schema = customSchema(s)
    type = { named: "custom.resource" }
  } else {
    const d = builtinDefinitions()
    const name = d.byKind.get(`${info.group}/${version}/${info.kind}`)
    if (name === undefined) return undefined
    schema = d.schema
    type = { named: name }
  }
  return {
    typed: {
      schema,
      type,
      versions: new Set(info.versions.map((v) => apiVersionOf(info.group, v))),
      ignored: resets(info, sub)
    },
    gvk,
    subresource: sub,
    now: () => timestamp()
  }
}

/**
 * What Go's zero value of a built-in kind marshals to besides metadata (its non-pointer structs):
 * the live object a create is compared with (Creater.New), so a created Namespace's empty
 * `spec` is nobody's field, as in Kubernetes.
 */
export const zeroValue = (info: ResourceInfo): Record<string, unknown> => {
  if (info.custom) return {}
  switch (`${info.group}/${info.kind}`) {
    case "/Namespace":
      return { spec: {}, status: {} }
    case "coordination.k8s.io/Lease":
      return { spec: {} }
    case "/Event":
      return { involvedObject: {}, source: {} }
    case "events.k8s.io/Event":
      return { regarding: {} }
    case "apiextensions.k8s.io/CustomResourceDefinition":
      return { spec: { names: {} }, status: { acceptedNames: {} } }
    default:
      return {}
  }
}

/** prefixFromUserAgent: the User-Agent up to its first "/", printable, at most 128 bytes; "unknown" when empty */
export const managerFromUserAgent = (ua: string | undefined): string => {
  const prefix = [...(ua ?? "").split("/")[0]!].filter(isPrint).join("")
  let out = ""
  for (const ch of prefix) {
    if (Buffer.byteLength(out + ch) > 128) break
    out += ch
  }
  return out === "" ? "unknown" : out
}
