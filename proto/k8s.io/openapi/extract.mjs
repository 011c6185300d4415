#!/usr/bin/env node
/**
 * Vendors the OpenAPI v2 definitions of the built-in kinds `etcd-effect apiserver` serves (and
 * every definition they reference) from Kubernetes' own api/openapi-spec/swagger.json, unchanged:
 *
 *   node proto/k8s.io/openapi/extract.mjs ~/go/pkg/mod/k8s.io/kubernetes@v1.37.2/api/openapi-spec/swagger.json
 *
 * writes proto/k8s.io/openapi/definitions.json (keys sorted). Their x-kubernetes-list-type,
 * -list-map-keys, -map-type and patch-strategy extensions are the merge rules server-side apply
 * uses for these kinds (docs/decisions.md "Server-side apply"); kubectl explain reads them too.
 *
 * Given the same release's api/openapi-spec/v3 directory as a second argument, it also writes
 * v3-defaults.json: the `default` of each property that Kubernetes' OpenAPI v3 documents carry
 * and its v2 document prunes (kube-openapi's v2 handler drops defaults), by definition and
 * property — the one thing /openapi/v3 cannot derive from the v2 definitions.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const roots = [
  "io.k8s.api.core.v1.ConfigMap",
  "io.k8s.api.core.v1.Secret",
  "io.k8s.api.core.v1.Namespace",
  "io.k8s.api.core.v1.Event",
  "io.k8s.api.coordination.v1.Lease",
  "io.k8s.api.events.v1.Event",
  "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
  "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
]
const spec = JSON.parse(readFileSync(process.argv[2], "utf8"))
const out = {}
const visit = (name) => {
  if (out[name] !== undefined) return
  const def = spec.definitions[name]
  if (def === undefined) throw new Error(`no definition ${name}`)
  out[name] = def
  const walk = (u) => {
    if (Array.isArray(u)) u.forEach(walk)
    else if (u !== null && typeof u === "object")
      for (const [k, v] of Object.entries(u)) {
        if (k === "$ref" && typeof v === "string") visit(v.replace("#/definitions/", ""))
        else walk(v)
      }
  }
  walk(def)
}
roots.forEach(visit)
const sorted = Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]))
const target = join(dirname(fileURLToPath(import.meta.url)), "definitions.json")
writeFileSync(target, JSON.stringify({ swagger: spec.info, definitions: sorted }, null, 1) + "\n")
console.log(`${Object.keys(sorted).length} definitions → ${target}`)

if (process.argv[3] !== undefined) {
  const v3 = {}
  for (const f of readdirSync(process.argv[3]).filter((n) => n.endsWith("_openapi.json")))
    Object.assign(v3, JSON.parse(readFileSync(join(process.argv[3], f), "utf8")).components?.schemas)
  const defaults = {}
  for (const [name, def] of Object.entries(sorted)) {
    const props = v3[name]?.properties ?? {}
    for (const [prop, schema] of Object.entries(props).sort(([a], [b]) => (a < b ? -1 : 1)))
      if ("default" in schema && !("default" in (def.properties?.[prop] ?? {})))
        (defaults[name] ??= {})[prop] = schema.default
  }
  const file = join(dirname(target), "v3-defaults.json")
  writeFileSync(file, JSON.stringify(defaults, null, 1) + "\n")
  console.log(`${Object.values(defaults).flatMap(Object.keys).length} property defaults → ${file}`)
}
