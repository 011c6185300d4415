/**
 * /openapi/v3 and /openapi/v2 of a running apiserver: the index names one document per served
 * group/version by the SHA-512 of its JSON; each document holds its kinds' schemas in Kubernetes'
 * v3 form (references as `allOf`, the defaults v2 prunes) with every schema they reference, and
 * the PATCH operations kubectl reads; the handler's ETag and 304, the 301 of a stale hash, the
 * immutable caching of a hashed URL, the 406; v2 holds the vendored definitions unchanged, in JSON
 * and in gnostic's protobuf, and a CRD's kind as v2 can express it; and nothing reads the
 * definitions before an /openapi request.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { definitionsLoaded } from "../../../src/kubernetes/apiserver/openapi/definitions.js"
import { gnosticProtos, parseProtos } from "../../../src/proto/compile.js"
import { protoDir } from "../../../src/proto/load.js"
import { onApiServer, request, schemaCRD, until } from "./support.js"

/** what client-go's OpenAPISchema() sends */
const V2_PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

const META = "io.k8s.apimachinery.pkg.apis.meta.v1"
const vendored = JSON.parse(
  readFileSync(path.resolve(__dirname, "../../../proto/k8s.io/openapi/definitions.json"), "utf8")
).definitions as Record<string, unknown>

/** the names but the CRD's this file creates (its tests run in any order) */
const builtin = (names: ReadonlyArray<string>) =>
  names.filter((n) => !n.includes("openapi.example.com") && !n.includes("example.openapi"))

/** every value of `key` anywhere in `u`, with the object holding it */
const holders = (u: unknown, key: string, out: Array<Record<string, unknown>> = []) => {
  if (Array.isArray(u)) u.forEach((x) => holders(x, key, out))
  else if (typeof u === "object" && u !== null) {
    if (typeof (u as Record<string, unknown>)[key] === "string") out.push(u as Record<string, unknown>)
    Object.values(u).forEach((x) => holders(x, key, out))
  }
  return out
}

describe("apiserver: /openapi", () => {
  const server = onApiServer()
  const url = () => server().url
  let loadedBeforeOpenApi: boolean | undefined

  beforeAll(async () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "before-openapi" }, data: { a: "b" } }
    expect((await request(url(), "POST", "/api/v1/namespaces/default/configmaps", cm)).status).toBe(201)
    loadedBeforeOpenApi = definitionsLoaded()
  })

  const index = async () => (await request(url(), "GET", "/openapi/v3")).body.paths as Record<string, any>
  const document = async (gv: string) => {
    const r = await request(url(), "GET", (await index())[gv].serverRelativeURL)
    expect(r.status).toBe(200)
    return r.body
  }

  it("serving objects reads no definitions; the first /openapi request does", async () => {
    expect(loadedBeforeOpenApi).toBe(false)
    await index()
    expect(definitionsLoaded()).toBe(true)
  })

  it("the index names each group/version's document by the SHA-512 of its JSON", async () => {
    const paths = await index()
    expect(builtin(Object.keys(paths)).sort()).toEqual([
      "api/v1",
      "apis/apiextensions.k8s.io/v1",
      "apis/coordination.k8s.io/v1",
      "apis/events.k8s.io/v1"
    ])
    for (const [gv, { serverRelativeURL }] of Object.entries(paths)) {
      const [p, hash] = (serverRelativeURL as string).split("?hash=")
      expect(p).toBe(`/openapi/v3/${gv}`)
      const r = await request(url(), "GET", serverRelativeURL)
      expect(hash).toBe(createHash("sha512").update(r.text).digest("hex").toUpperCase())
    }
  })

  it("api/v1 has the core kinds as Kubernetes' v3 document has them, and what they reference", async () => {
    const { components, openapi } = await document("api/v1")
    expect(openapi).toBe("3.0.0")
    expect(Object.keys(components.schemas)).toEqual([
      "io.k8s.api.core.v1.ConfigMap",
      "io.k8s.api.core.v1.Event",
      "io.k8s.api.core.v1.EventSeries",
      "io.k8s.api.core.v1.EventSource",
      "io.k8s.api.core.v1.Namespace",
      "io.k8s.api.core.v1.NamespaceCondition",
      "io.k8s.api.core.v1.NamespaceSpec",
      "io.k8s.api.core.v1.NamespaceStatus",
      "io.k8s.api.core.v1.ObjectReference",
      "io.k8s.api.core.v1.Secret",
      `${META}.FieldsV1`,
      `${META}.ManagedFieldsEntry`,
      `${META}.MicroTime`,
      `${META}.ObjectMeta`,
      `${META}.OwnerReference`,
      `${META}.Patch`,
      `${META}.Time`
    ])
    const configMap = components.schemas["io.k8s.api.core.v1.ConfigMap"]
    expect(configMap["x-kubernetes-group-version-kind"]).toEqual([{ group: "", kind: "ConfigMap", version: "v1" }])
    expect(configMap.properties.metadata).toEqual({
      description: expect.stringMatching(/^Standard object's metadata\./),
      default: {},
      allOf: [{ $ref: `#/components/schemas/${META}.ObjectMeta` }]
    })
    expect(configMap.properties.data).toEqual({
      description: expect.stringMatching(/^Data contains the configuration data\./),
      type: "object",
      additionalProperties: { type: "string" }
    })
    const event = components.schemas["io.k8s.api.core.v1.Event"]
    expect(event.properties.involvedObject.default).toEqual({})
    expect(event.properties.reportingComponent.default).toBe("")
    expect(event.properties.related).toEqual({
      description: "Optional secondary object for more complex actions.",
      allOf: [{ $ref: "#/components/schemas/io.k8s.api.core.v1.ObjectReference" }]
    })
    expect(components.schemas["io.k8s.api.core.v1.NamespaceSpec"].properties.finalizers["x-kubernetes-list-type"]).toBe(
      "atomic"
    )
    expect(components.schemas[`${META}.ObjectMeta`].properties.finalizers["x-kubernetes-patch-strategy"]).toBe("merge")
  })

  it("every reference of every document is to a schema of that document, alone in its object", async () => {
    for (const gv of Object.keys(await index())) {
      const doc = await document(gv)
      const refs = holders(doc, "$ref")
      expect(refs.length).toBeGreaterThan(0)
      for (const holder of refs) {
        expect(Object.keys(holder)).toEqual(["$ref"])
        const ref = holder["$ref"] as string
        expect(ref).toMatch(/^#\/components\/schemas\//)
        expect(doc.components.schemas[ref.slice("#/components/schemas/".length)], `${gv}: ${ref}`).toBeDefined()
      }
    }
  })

  it("each kind is tagged with its group/version/kind; events.k8s.io's Event is its own", async () => {
    const lease = (await document("apis/coordination.k8s.io/v1")).components.schemas["io.k8s.api.coordination.v1.Lease"]
    expect(lease["x-kubernetes-group-version-kind"]).toEqual([
      { group: "coordination.k8s.io", kind: "Lease", version: "v1" }
    ])
    const events = (await document("apis/events.k8s.io/v1")).components.schemas
    expect(events["io.k8s.api.events.v1.Event"]["x-kubernetes-group-version-kind"]).toEqual([
      { group: "events.k8s.io", kind: "Event", version: "v1" }
    ])
    expect(events["io.k8s.api.events.v1.Event"].required).toEqual(["eventTime"])
    expect(events["io.k8s.api.core.v1.Event"]).toBeUndefined()
    const crd = (await document("apis/apiextensions.k8s.io/v1")).components.schemas
    expect(
      crd["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion"].properties.served
        .default
    ).toBe(false)
  })

  it("PATCH of one object: the group/version/kind, fieldValidation, and the patch types the resource accepts", async () => {
    const core = (await document("api/v1")).paths
    const cm = core["/api/v1/namespaces/{namespace}/configmaps/{name}"].patch
    expect(cm["x-kubernetes-group-version-kind"]).toEqual({ group: "", version: "v1", kind: "ConfigMap" })
    expect(cm.parameters.map((p: { name: string }) => p.name)).toContain("fieldValidation")
    expect(Object.keys(cm.requestBody.content)).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
      "application/strategic-merge-patch+json"
    ])
    expect(cm.requestBody.content["application/merge-patch+json"].schema).toEqual({
      $ref: `#/components/schemas/${META}.Patch`
    })
    expect(core["/api/v1/namespaces/{name}"].patch["x-kubernetes-group-version-kind"].kind).toBe("Namespace")
    const crds = (await document("apis/apiextensions.k8s.io/v1")).paths
    const crd = crds["/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"].patch
    // this server takes no strategic merge patch of a CRD: kubectl apply sends a merge patch
    expect(Object.keys(crd.requestBody.content)).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json"
    ])
  })

  it("ETag and If-None-Match; a stale hash is a 301 to the current one; a hashed URL is immutable; 406", async () => {
    const current = (await index())["api/v1"].serverRelativeURL as string
    const hash = current.split("?hash=")[1]!
    const plain = await request(url(), "GET", "/openapi/v3/api/v1")
    expect(plain.headers.get("etag")).toBe(`"${hash}"`)
    expect(plain.headers.get("cache-control")).toBeNull()
    expect(
      (await request(url(), "GET", "/openapi/v3/api/v1", undefined, { "if-none-match": `"${hash}"` })).status
    ).toBe(304)
    const hashed = await request(url(), "GET", current)
    expect(hashed.headers.get("cache-control")).toBe("public, immutable")
    expect(Date.parse(hashed.headers.get("expires")!)).toBeGreaterThan(Date.now() + 300 * 86_400_000)
    const stale = await fetch(`${url()}/openapi/v3/api/v1?hash=ABC`, { redirect: "manual" })
    expect(stale.status).toBe(301)
    expect(stale.headers.get("location")).toBe(current)
    const indexEtag = (await request(url(), "GET", "/openapi/v3")).headers.get("etag")!
    expect((await request(url(), "GET", "/openapi/v3", undefined, { "if-none-match": indexEtag })).status).toBe(304)
    const pb = { accept: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" }
    expect((await request(url(), "GET", "/openapi/v3/api/v1", undefined, pb)).status).toBe(406)
    expect((await request(url(), "GET", "/openapi/v3/apis/nothing.example.com/v1")).status).toBe(404)
  })

  it("/openapi/v2 has every vendored definition, unchanged", async () => {
    const v2 = await request(url(), "GET", "/openapi/v2", undefined, { accept: "application/json" })
    expect(v2.body.swagger).toBe("2.0")
    const definitions = v2.body.definitions as Record<string, unknown>
    expect(builtin(Object.keys(definitions))).toEqual(Object.keys(vendored))
    for (const [name, def] of Object.entries(vendored)) expect(definitions[name], name).toEqual(def)
  })

  it("/openapi/v2 in gnostic's protobuf (client-go's Accept): the same definitions; 406 for what it is not", async () => {
    const res = await fetch(`${url()}/openapi/v2`, { headers: { accept: V2_PROTOBUF_ACCEPT } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    const Document = parseProtos(protoDir, gnosticProtos).lookupType("openapi.v2.Document")
    const doc = Document.toObject(Document.decode(new Uint8Array(await res.arrayBuffer()))) as any
    expect(doc.swagger).toBe("2.0")
    const named = new Map(doc.definitions.additional_properties.map((d: any) => [d.name, d.value]))
    expect(builtin(Array.from(named.keys()) as Array<string>)).toEqual(Object.keys(vendored).sort())
    const configMap = named.get("io.k8s.api.core.v1.ConfigMap") as any
    expect(configMap.description).toBe("ConfigMap holds configuration data for pods to consume.")
    expect(configMap.type.value).toEqual(["object"])
    const gvk = configMap.vendor_extension.find((e: any) => e.name === "x-kubernetes-group-version-kind")
    expect(JSON.parse(gvk.value.yaml)).toEqual([{ group: "", kind: "ConfigMap", version: "v1" }])
    const props = new Map(configMap.properties.additional_properties.map((p: any) => [p.name, p.value]))
    expect((props.get("metadata") as any)._ref).toBe(`#/definitions/${META}.ObjectMeta`)
    expect((props.get("data") as any).additional_properties.schema.type.value).toEqual(["string"])
    expect((await request(url(), "GET", "/openapi/v2", undefined, { accept: "text/html" })).status).toBe(406)
    expect((await request(url(), "GET", "/openapi/v2", undefined, { accept: "*/*" })).body.swagger).toBe("2.0")
  })

  it("a CRD's kind in v2: what v2 can express of its schema, metadata a reference with its description", async () => {
    const crd = schemaCRD("openapi.example.com", "sprockets", "Sprocket", {
      type: "object",
      properties: {
        spec: {
          type: "object",
          required: ["teeth", "label"],
          properties: { teeth: { type: "integer" }, label: { type: "string", nullable: true } }
        }
      }
    })
    expect((await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(
      201
    )
    await until(async () => (await request(url(), "GET", "/openapi/v3")).body.paths["apis/openapi.example.com/v1"])
    const v2 = (await request(url(), "GET", "/openapi/v2")).body.definitions["com.example.openapi.v1.Sprocket"]
    expect(v2.properties.metadata).toEqual({
      description: expect.stringMatching(/^Standard object's metadata\./),
      $ref: `#/definitions/${META}.ObjectMeta`
    })
    expect(v2.properties.spec).toEqual({
      type: "object",
      required: ["teeth"],
      properties: { teeth: { type: "integer" }, label: {} }
    })
    const v3 = (await document("apis/openapi.example.com/v1")).components.schemas["com.example.openapi.v1.Sprocket"]
    expect(v3.properties.spec.properties.label).toEqual({ type: "string", nullable: true })
    expect(v3.properties.spec.required).toEqual(["teeth", "label"])
  })
})
