/**
 * /openapi/v3 (and /openapi/v2): what kubectl needs to validate, apply and explain objects. A
 * CRD's kind is its version's structural schema with apiVersion, kind and metadata (a reference to
 * ObjectMeta) added, as apiextensions' OpenAPI builder publishes it, so `kubectl explain widget.spec`
 * prints its fields; a built-in kind is an object that keeps unknown fields. Each is tagged with
 * its group/version/kind (`x-kubernetes-group-version-kind`, how kubectl finds it). The v3 index
 * lists one document per served group/version, its URL carrying the uppercase hex SHA-512 of the
 * document (kube-openapi's handler3), so clients refetch when a CRD changes.
 */
import { createHash } from "node:crypto"
import type { ResourceRegistry } from "./registry.js"
import { apiVersionOf, type ResourceInfo } from "./resources.js"

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

const API_VERSION_DESCRIPTION =
  "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
const KIND_DESCRIPTION =
  "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

/** The part of ObjectMeta's schema a CRD's metadata refers to (kubectl explain <kind>.metadata). */
const OBJECT_META_SCHEMA = {
  description:
    "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
  type: "object",
  properties: {
    annotations: {
      description: "Annotations is an unstructured key value map stored with a resource.",
      type: "object",
      additionalProperties: { type: "string", default: "" }
    },
    creationTimestamp: {
      description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
      type: "string",
      format: "date-time"
    },
    deletionTimestamp: {
      description: "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.",
      type: "string",
      format: "date-time"
    },
    finalizers: {
      description: "Must be empty before the object is deleted from the registry.",
      type: "array",
      items: { type: "string", default: "" }
    },
    generateName: {
      description: "GenerateName is an optional prefix, used by the server, to generate a unique name.",
      type: "string"
    },
    generation: {
      description: "A sequence number representing a specific generation of the desired state.",
      type: "integer",
      format: "int64"
    },
    labels: {
      description: "Map of string keys and values that can be used to organize and categorize objects.",
      type: "object",
      additionalProperties: { type: "string", default: "" }
    },
    name: { description: "Name must be unique within a namespace.", type: "string" },
    namespace: { description: "Namespace defines the space within which each name must be unique.", type: "string" },
    resourceVersion: {
      description: "An opaque value that represents the internal version of this object.",
      type: "string"
    },
    uid: { description: "UID is the unique in time and space value for this object.", type: "string" }
  }
}

const gvPath = (group: string, version: string) => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

const schemaName = (r: ResourceInfo, version: string) => {
  const reversed = r.group === "" ? "io.k8s.api.core" : r.group.split(".").reverse().join(".")
  return `${reversed}.${version}.${r.kind}`
}

const gvk = (r: ResourceInfo, version: string) => [{ group: r.group, kind: r.kind, version }]

/** A kind's schema; `ref` makes a reference to another schema of the document. */
const kindSchema = (r: ResourceInfo, version: string, ref: (name: string) => string): Record<string, unknown> => {
  const crd = r.openAPISchemas?.[version]
  if (crd === undefined)
    return {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
      "x-kubernetes-group-version-kind": gvk(r, version)
    }
  const { properties, ...rest } = structuredClone(crd) as { properties?: Record<string, unknown> }
  return {
    ...rest,
    type: "object",
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: "string" },
      kind: { description: KIND_DESCRIPTION, type: "string" },
      metadata: { description: METADATA_DESCRIPTION, allOf: [{ $ref: ref(OBJECT_META) }] },
      ...Object.fromEntries(
        Object.entries(properties ?? {}).filter(([k]) => k !== "apiVersion" && k !== "kind" && k !== "metadata")
      )
    },
    "x-kubernetes-group-version-kind": gvk(r, version)
  }
}

const v3Ref = (name: string) => `#/components/schemas/${name}`
const v2Ref = (name: string) => `#/definitions/${name}`

const groupVersions = (
  registry: ResourceRegistry
): Map<string, { group: string; version: string; resources: Array<ResourceInfo> }> => {
  const out = new Map<string, { group: string; version: string; resources: Array<ResourceInfo> }>()
  for (const { info } of registry.all()) {
    for (const version of info.versions) {
      const p = gvPath(info.group, version)
      let e = out.get(p)
      if (e === undefined) out.set(p, (e = { group: info.group, version, resources: [] }))
      e.resources.push(info)
    }
  }
  return out
}

/** handler3's hash of a document: SHA-512 of its JSON, uppercase hex. */
const hashOf = (doc: unknown) => createHash("sha512").update(JSON.stringify(doc)).digest("hex").toUpperCase()

export const openApiV3Index = (registry: ResourceRegistry) => ({
  paths: Object.fromEntries(
    Array.from(groupVersions(registry).keys()).map((p) => [
      p,
      { serverRelativeURL: `/openapi/v3/${p}?hash=${hashOf(openApiV3Document(registry, p))}` }
    ])
  )
})

/** The document of one group/version ("api/v1", "apis/example.com/v1"), undefined if not served. */
export const openApiV3Document = (registry: ResourceRegistry, path: string) => {
  const gv = groupVersions(registry).get(path)
  if (gv === undefined) return undefined
  const schemas: Record<string, unknown> = {}
  const paths: Record<string, unknown> = {}
  for (const r of gv.resources) {
    schemas[schemaName(r, gv.version)] = kindSchema(r, gv.version, v3Ref)
    if (r.openAPISchemas?.[gv.version] !== undefined) schemas[OBJECT_META] = OBJECT_META_SCHEMA
    // kubectl looks up the PATCH operation of the GVK to learn that the server validates fields
    const ns = r.namespaced ? "namespaces/{namespace}/" : ""
    paths[`/${path}/${ns}${r.plural}/{name}`] = {
      patch: {
        "x-kubernetes-group-version-kind": { group: r.group, version: gv.version, kind: r.kind },
        "x-kubernetes-action": "patch",
        parameters: [
          { name: "dryRun", in: "query", schema: { type: "string" } },
          { name: "fieldManager", in: "query", schema: { type: "string" } },
          { name: "fieldValidation", in: "query", schema: { type: "string" } }
        ],
        responses: { "200": { description: "OK" } }
      }
    }
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: apiVersionOf(gv.group, gv.version) },
    paths,
    components: { schemas }
  }
}

/** Swagger 2.0 with the same definitions (older clients). */
export const openApiV2 = (registry: ResourceRegistry) => {
  const definitions: Record<string, unknown> = {}
  for (const gv of groupVersions(registry).values()) {
    for (const r of gv.resources) {
      definitions[schemaName(r, gv.version)] = kindSchema(r, gv.version, v2Ref)
      if (r.openAPISchemas?.[gv.version] !== undefined) definitions[OBJECT_META] = OBJECT_META_SCHEMA
    }
  }
  return { swagger: "2.0", info: { title: "Kubernetes", version: "v1.34.0" }, paths: {}, definitions }
}
