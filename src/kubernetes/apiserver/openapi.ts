/**
 * /openapi/v3 (and /openapi/v2): what kubectl needs to validate and apply objects. Resources here
 * are schema-less (stored as given), so each kind's schema is an object that keeps unknown fields,
 * tagged with its group/version/kind (`x-kubernetes-group-version-kind`, how kubectl finds it).
 * The v3 index lists one document per served group/version, its URL carrying a hash of the
 * registry generation so clients refetch after a CRD comes or goes.
 */
import type { ResourceRegistry } from "./registry.js"
import { apiVersionOf, type ResourceInfo } from "./resources.js"

const gvPath = (group: string, version: string) => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

const schemaName = (r: ResourceInfo, version: string) => {
  const reversed = r.group === "" ? "io.k8s.api.core" : r.group.split(".").reverse().join(".")
  return `${reversed}.${version}.${r.kind}`
}

const kindSchema = (r: ResourceInfo, version: string) => ({
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
  "x-kubernetes-group-version-kind": [{ group: r.group, kind: r.kind, version }]
})

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

export const openApiV3Index = (registry: ResourceRegistry) => ({
  paths: Object.fromEntries(
    Array.from(groupVersions(registry).keys()).map((p) => [
      p,
      { serverRelativeURL: `/openapi/v3/${p}?hash=G${registry.generation}` }
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
    schemas[schemaName(r, gv.version)] = kindSchema(r, gv.version)
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
    for (const r of gv.resources) definitions[schemaName(r, gv.version)] = kindSchema(r, gv.version)
  }
  return { swagger: "2.0", info: { title: "Kubernetes", version: "v1.34.0" }, paths: {}, definitions }
}
