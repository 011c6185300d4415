/**
 * Our /openapi/v3 documents against Kubernetes' own: k8s.io/kubernetes v1.37.2's
 * api/openapi-spec/v3 (the release the definitions are vendored from; the Go module
 * test/go/kubernetes requires it, so `go mod download` brings it). Every schema we serve for a
 * built-in group/version is the one Kubernetes serves, key for key — the conversion from the
 * vendored v2 definitions (allOf references, the defaults) included — and each PATCH operation
 * carries Kubernetes' group/version/kind and a subset of its patch types. Skipped without Go
 * (a failure under REQUIRE_GO=1, as go-programs.ts has it).
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { hasGo } from "./go-programs.js"
import { onApiServer, request } from "./support.js"

/** api/openapi-spec/v3 of the k8s.io/kubernetes the Go test module requires (downloaded if missing). */
const upstreamDir = (): string => {
  const out = execFileSync("go", ["mod", "download", "-json", "k8s.io/kubernetes"], {
    cwd: path.resolve(__dirname, "../../go/kubernetes"),
    encoding: "utf8"
  })
  return path.join((JSON.parse(out) as { Dir: string }).Dir, "api", "openapi-spec", "v3")
}

/** the upstream file of a group/version: api/v1 → api__v1_openapi.json */
const upstream = (dir: string, gv: string) =>
  JSON.parse(readFileSync(path.join(dir, `${gv.replaceAll("/", "__")}_openapi.json`), "utf8"))

describe.skipIf(!hasGo)("apiserver: /openapi/v3 is Kubernetes v1.37.2's", () => {
  const server = onApiServer()

  it("every schema of every built-in group/version, and the PATCH operations", async () => {
    const dir = upstreamDir()
    expect(readdirSync(dir)).toContain("api__v1_openapi.json")
    const index = (await request(server().url, "GET", "/openapi/v3")).body.paths as Record<string, any>
    let schemas = 0
    for (const [gv, { serverRelativeURL }] of Object.entries(index)) {
      const ours = (await request(server().url, "GET", serverRelativeURL)).body
      const theirs = upstream(dir, gv)
      for (const [name, schema] of Object.entries(ours.components.schemas)) {
        expect(schema, `${gv} ${name}`).toEqual(theirs.components.schemas[name])
        schemas++
      }
      for (const [p, item] of Object.entries(ours.paths) as Array<[string, any]>) {
        const patch = theirs.paths[p].patch
        expect(item.patch["x-kubernetes-group-version-kind"], p).toEqual(patch["x-kubernetes-group-version-kind"])
        expect(Object.keys(patch.requestBody.content)).toEqual(
          expect.arrayContaining(Object.keys(item.patch.requestBody.content))
        )
        expect(patch.parameters.map((x: { name: string }) => x.name)).toEqual(
          expect.arrayContaining(item.patch.parameters.map((x: { name: string }) => x.name))
        )
      }
    }
    // ConfigMap, Secret, Namespace, core Event, Lease, events.k8s.io Event, CRD, and what they reference
    expect(schemas).toBeGreaterThanOrEqual(60)
  }, 300_000)
})
