/**
 * /openapi/v3 and /openapi/v2: what kubectl needs to explain, validate and apply objects. Each
 * served group/version has a v3 document: the schemas of its kinds — a built-in kind's vendored
 * definition (definitions.ts) converted as Kubernetes converts it (v3-schema.ts), with every
 * schema it references; a CRD's version schema (custom-kind.ts) with ObjectMeta's — and the
 * PATCH operation of each resource (paths.ts). The v3 index lists one URL per group/version
 * carrying the uppercase hex SHA-512 of that document's JSON (kube-openapi's handler3), so clients
 * refetch when a CRD changes. /openapi/v2 is one Swagger 2.0 document with every definition, in
 * JSON or gnostic's protobuf (v2-protobuf.ts). Documents are built once per registry generation (a
 * CRD change) and served as bytes.
 */
import { createHash } from "node:crypto"
import type { ResourceRegistry } from "../registry.js"
import type { ResourceInfo } from "../resources.js"
import { builtinDefinitions, definitionOfKind, referencedFrom } from "./definitions.js"
import { customKindSchema, customSchemaName, OBJECT_META } from "./custom-kind.js"
import { objectPath, PATCH, PATCH_SCHEMA } from "./paths.js"
import { encodeOpenApiV2 } from "./v2-protobuf.js"
import { toV3Schema } from "./v3-schema.js"

/** A document as served: its JSON (or protobuf) and the hash that names it (its ETag). */
export interface ServedDocument {
  readonly body: string | Uint8Array
  readonly hash: string
}

interface GroupVersion {
  readonly group: string
  readonly version: string
  readonly resources: Array<ResourceInfo>
}

const INFO = { title: "Kubernetes", version: "unversioned" }

const gvPath = (group: string, version: string) => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

const groupVersions = (registry: ResourceRegistry): Map<string, GroupVersion> => {
  const out = new Map<string, GroupVersion>()
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

/**
 * The schemas of `resources` at `version` (for the v2 document or a v3 one): name → schema; the
 * vendored definitions they reference come from `definition`.
 */
const kindSchemas = (
  resources: ReadonlyArray<ResourceInfo>,
  version: string,
  v2: boolean,
  definition: (name: string) => unknown
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  const vendored: Array<string> = []
  for (const r of resources) {
    const builtin = r.custom ? undefined : definitionOfKind(r.group, version, r.kind)
    if (builtin !== undefined) vendored.push(builtin)
    else {
      out[customSchemaName(r, version)] = customKindSchema(r, version, v2)
      if (r.openAPISchemas?.[version] !== undefined) vendored.push(OBJECT_META)
    }
  }
  for (const name of referencedFrom(vendored)) out[name] = definition(name)
  return out
}

const sorted = (o: Record<string, unknown>) =>
  Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]])
  )

const v3Schema = (name: string) => {
  const { definitions, v3Defaults } = builtinDefinitions()
  return toV3Schema(definitions[name]!, v3Defaults[name])
}

const v3Document = (path: string, gv: GroupVersion) => ({
  openapi: "3.0.0",
  info: INFO,
  paths: Object.fromEntries(gv.resources.map((r) => objectPath(r, path, gv.version))),
  components: {
    schemas: sorted({
      ...kindSchemas(gv.resources, gv.version, false, v3Schema),
      [PATCH]: PATCH_SCHEMA
    })
  }
})

/** every vendored definition (as Kubernetes' swagger.json has them all), and the CRDs' kinds */
const v2Document = (registry: ResourceRegistry) => {
  const definitions: Record<string, unknown> = { ...builtinDefinitions().definitions }
  for (const gv of groupVersions(registry).values())
    Object.assign(
      definitions,
      kindSchemas(gv.resources, gv.version, true, (n) => builtinDefinitions().definitions[n])
    )
  return { swagger: "2.0", info: INFO, paths: {}, definitions: sorted(definitions) }
}

/** handler3's hash of a document: SHA-512 of its bytes, uppercase hex. */
const served = (body: string | Uint8Array): ServedDocument => ({
  body,
  hash: createHash("sha512").update(body).digest("hex").toUpperCase()
})

interface Cache {
  readonly generation: number
  readonly documents: Map<string, ServedDocument | undefined>
}

const caches = new WeakMap<ResourceRegistry, Cache>()

/** The document `key` of the registry as it is now, built on first use after each change. */
const cached = (
  registry: ResourceRegistry,
  key: string,
  build: () => ServedDocument | undefined
): ServedDocument | undefined => {
  let cache = caches.get(registry)
  if (cache === undefined || cache.generation !== registry.generation)
    caches.set(registry, (cache = { generation: registry.generation, documents: new Map() }))
  if (!cache.documents.has(key)) cache.documents.set(key, build())
  return cache.documents.get(key)
}

/** The document of one group/version ("api/v1", "apis/example.com/v1"), undefined if not served. */
export const openApiV3Document = (registry: ResourceRegistry, path: string): ServedDocument | undefined =>
  cached(registry, `v3:${path}`, () => {
    const gv = groupVersions(registry).get(path)
    return gv === undefined ? undefined : served(JSON.stringify(v3Document(path, gv)))
  })

/** /openapi/v3: each group/version's document URL, named by its hash. */
export const openApiV3Index = (registry: ResourceRegistry): ServedDocument =>
  cached(registry, "v3", () =>
    served(
      JSON.stringify({
        paths: Object.fromEntries(
          Array.from(groupVersions(registry).keys()).map((p) => [
            p,
            { serverRelativeURL: `/openapi/v3/${p}?hash=${openApiV3Document(registry, p)!.hash}` }
          ])
        )
      })
    )
  )!

/** Swagger 2.0 with every definition (kubectl before 1.27, `kubectl explain -o plaintext-openapiv2`). */
export const openApiV2 = (registry: ResourceRegistry): ServedDocument =>
  cached(registry, "v2", () => served(JSON.stringify(v2Document(registry))))!

/** The same, as gnostic's protobuf Document (what client-go asks for). */
export const openApiV2Protobuf = (registry: ResourceRegistry): ServedDocument =>
  cached(registry, "v2:protobuf", () => served(encodeOpenApiV2(v2Document(registry))))!
