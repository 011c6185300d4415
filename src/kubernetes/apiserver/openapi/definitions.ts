/**
 * The OpenAPI v2 definitions of the built-in kinds (proto/k8s.io/openapi/definitions.json, vendored
 * unchanged from Kubernetes' swagger.json; every definition they reference included) and the
 * property defaults its v3 documents add (v3-defaults.json), read on first use: only /openapi
 * requests pay for them (docs/decisions.md, "Built-in kinds' OpenAPI"). A kind's definition is
 * found by its `x-kubernetes-group-version-kind`, as kubectl finds it.
 */
import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { protoDir } from "../../../proto/load.js"

/** One schema of a document: JSON, as vendored */
export type OpenApiSchema = Readonly<Record<string, unknown>>

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const DefinitionsFile = Schema.Struct({ definitions: Schema.Record({ key: Schema.String, value: JsonObject }) })
const DefaultsFile = Schema.Record({ key: Schema.String, value: JsonObject })
const GroupVersionKinds = Schema.Array(
  Schema.Struct({ group: Schema.String, version: Schema.String, kind: Schema.String })
)

export interface BuiltinDefinitions {
  /** definition name (io.k8s.api.core.v1.ConfigMap) → its v2 schema */
  readonly definitions: Readonly<Record<string, OpenApiSchema>>
  /** definition name → property → the default Kubernetes' v3 documents give it */
  readonly v3Defaults: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  /** "group/version/kind" → the kind's definition name */
  readonly byKind: ReadonlyMap<string, string>
}

const dir = () => join(protoDir, "k8s.io", "openapi")

const readJson = (file: string): unknown => JSON.parse(readFileSync(join(dir(), file), "utf8"))

const load = (): BuiltinDefinitions => {
  const { definitions } = Schema.decodeUnknownSync(DefinitionsFile)(readJson("definitions.json"))
  const v3Defaults = Schema.decodeUnknownSync(DefaultsFile)(readJson("v3-defaults.json"))
  const byKind = new Map<string, string>()
  for (const [name, def] of Object.entries(definitions))
    for (const gvk of Schema.decodeUnknownSync(GroupVersionKinds)(def["x-kubernetes-group-version-kind"] ?? []))
      byKind.set(kindKey(gvk.group, gvk.version, gvk.kind), name)
  return { definitions, v3Defaults, byKind }
}

const kindKey = (group: string, version: string, kind: string) => `${group}/${version}/${kind}`

let loaded: BuiltinDefinitions | undefined

/** The vendored definitions, read and decoded on the first call. */
export const builtinDefinitions = (): BuiltinDefinitions => (loaded ??= load())

/** Whether they have been read (only an /openapi request reads them). */
export const definitionsLoaded = (): boolean => loaded !== undefined

/** The definition name of a built-in kind, if one is vendored. */
export const definitionOfKind = (group: string, version: string, kind: string): string | undefined =>
  builtinDefinitions().byKind.get(kindKey(group, version, kind))

export const V2_REF = "#/definitions/"
export const V3_REF = "#/components/schemas/"

/** The names `roots` reference, directly or through others, with the roots themselves (sorted). */
export const referencedFrom = (roots: Iterable<string>): Array<string> => {
  const { definitions } = builtinDefinitions()
  const seen = new Set<string>()
  const visit = (name: string) => {
    if (seen.has(name) || definitions[name] === undefined) return
    seen.add(name)
    walk(definitions[name])
  }
  const walk = (u: unknown): void => {
    if (Array.isArray(u)) u.forEach(walk)
    else if (typeof u === "object" && u !== null)
      for (const [k, v] of Object.entries(u)) {
        if (k === "$ref" && typeof v === "string" && v.startsWith(V2_REF)) visit(v.slice(V2_REF.length))
        else walk(v)
      }
  }
  for (const r of roots) visit(r)
  return Array.from(seen).sort()
}
