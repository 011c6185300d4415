/**
 * Server-side apply over HTTP (handlers/apply.ts) and managedFields on every write: apply creates
 * (201) and updates (200), the conflict Status (409, FieldManagerConflict causes) and force,
 * the options and bodies the apiserver refuses (fieldManager required, force on a merge patch,
 * bad YAML, managedFields in the configuration, another kind) with nothing stored, dryRun
 * persisting nothing, and the manager of a POST/PUT/PATCH taken from fieldManager or the
 * User-Agent.
 */
import { describe, expect, it } from "vitest"
import { newNamespace, onApiServer, request } from "./support.js"

const APPLY = { "content-type": "application/apply-patch+yaml" }
const yaml = (data: Record<string, string>, name = "c") =>
  [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    `  name: ${name}`,
    ...(Object.keys(data).length === 0 ? [] : ["data:"]),
    ...Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`)
  ].join("\n")
/** the entries by manager (their order is by time first: writes may fall in different seconds) */
const managers = (o: any) =>
  (o.metadata.managedFields ?? [])
    .map((e: any) => ({ manager: e.manager, operation: e.operation, fieldsV1: e.fieldsV1 }))
    .sort((a: any, b: any) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0))

describe("apiserver: server-side apply", () => {
  const server = onApiServer()
  const url = () => server().url

  it("apply creates (201), re-applies (200), conflicts (409) and forces", async () => {
    const ns = await newNamespace(url())
    const path = `/api/v1/namespaces/${ns}/configmaps/c`
    const created = await request(url(), "PATCH", `${path}?fieldManager=a`, yaml({ x: "1", y: "2" }), APPLY)
    expect(created.status).toBe(201)
    expect(created.body.data).toEqual({ x: "1", y: "2" })
    expect(managers(created.body)).toEqual([
      { manager: "a", operation: "Apply", fieldsV1: { "f:data": { "f:x": {}, "f:y": {} } } }
    ])
    const conflict = await request(url(), "PATCH", `${path}?fieldManager=b`, yaml({ x: "9" }), APPLY)
    expect(conflict.status).toBe(409)
    expect(conflict.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Conflict",
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "a": .data.x',
      details: { causes: [{ reason: "FieldManagerConflict", message: 'conflict with "a"', field: ".data.x" }] }
    })
    expect((await request(url(), "GET", path)).body.data).toEqual({ x: "1", y: "2" })
    const forced = await request(url(), "PATCH", `${path}?fieldManager=b&force=true`, yaml({ x: "9" }), APPLY)
    expect(forced.status).toBe(200)
    expect(forced.body.data).toEqual({ x: "9", y: "2" })
    // a stops applying y: it goes
    const pruned = await request(url(), "PATCH", `${path}?fieldManager=a`, yaml({}), APPLY)
    expect(pruned.body.data).toEqual({ x: "9" })
    expect(managers(pruned.body).map((m: any) => m.manager)).toEqual(["b"])
  })

  it("an unchanged manifest applied again, or a label set to its value, writes nothing: same resourceVersion", async () => {
    const ns = await newNamespace(url())
    const path = `/api/v1/namespaces/${ns}/configmaps/c`
    const created = await request(url(), "PATCH", `${path}?fieldManager=a`, yaml({ x: "1" }), APPLY)
    expect(created.status).toBe(201)
    const again = await request(url(), "PATCH", `${path}?fieldManager=a`, yaml({ x: "1" }), APPLY)
    expect(again.status).toBe(200)
    expect(again.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion)
    const merge = { "content-type": "application/merge-patch+json" }
    const labelled = await request(
      url(),
      "PATCH",
      `${path}?fieldManager=b`,
      { metadata: { labels: { l: "v" } } },
      merge
    )
    const same = await request(url(), "PATCH", `${path}?fieldManager=b`, { metadata: { labels: { l: "v" } } }, merge)
    expect(labelled.body.metadata.resourceVersion).not.toBe(created.body.metadata.resourceVersion)
    expect(same.body.metadata.resourceVersion).toBe(labelled.body.metadata.resourceVersion)
  })

  it("refuses what the apiserver refuses, and stores nothing", async () => {
    const ns = await newNamespace(url())
    const path = `/api/v1/namespaces/${ns}/configmaps/c`
    const noManager = await request(url(), "PATCH", path, yaml({ x: "1" }), APPLY)
    expect(noManager.status).toBe(422)
    expect(noManager.body.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    const force = await request(
      url(),
      "PATCH",
      `${path}?force=true`,
      { data: {} },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(force.status).toBe(422)
    expect(force.body.message).toContain("force: Forbidden: may not be specified for non-apply patch")
    const badYaml = await request(url(), "PATCH", `${path}?fieldManager=a`, "a: [1\n", APPLY)
    expect(badYaml.status).toBe(400)
    expect(badYaml.body.message).toMatch(/^error decoding YAML: /)
    const withManaged = await request(
      url(),
      "PATCH",
      `${path}?fieldManager=a`,
      `${yaml({ x: "1" })}\n`.replace("  name: c\n", "  name: c\n  managedFields: []\n"),
      APPLY
    )
    expect(withManaged.status).toBe(400)
    expect(withManaged.body.message).toBe("metadata.managedFields must be nil")
    const otherKind = await request(
      url(),
      "PATCH",
      `${path}?fieldManager=a`,
      yaml({ x: "1" }).replace("ConfigMap", "Secret"),
      APPLY
    )
    expect(otherKind.status).toBe(400)
    expect(otherKind.body.message).toBe("invalid object type: /v1, Kind=Secret")
    const dry = await request(url(), "PATCH", `${path}?fieldManager=a&dryRun=All`, yaml({ x: "1" }), APPLY)
    expect(dry.status).toBe(201)
    expect(dry.body.data).toEqual({ x: "1" })
    expect((await request(url(), "GET", path)).status).toBe(404)
  })

  it("POST, PUT and PATCH record their manager: fieldManager, else the User-Agent's product", async () => {
    const ns = await newNamespace(url())
    const base = `/api/v1/namespaces/${ns}/configmaps`
    const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "u" }, data: { a: "1" } }
    const created = await request(url(), "POST", base, body, { "user-agent": "my-controller/v1.2 (linux)" })
    expect(managers(created.body)).toEqual([
      { manager: "my-controller", operation: "Update", fieldsV1: { "f:data": { ".": {}, "f:a": {} } } }
    ])
    const put = await request(url(), "PUT", `${base}/u?fieldManager=editor`, {
      ...created.body,
      data: { a: "1", b: "2" }
    })
    expect(managers(put.body)).toEqual([
      { manager: "editor", operation: "Update", fieldsV1: { "f:data": { "f:b": {} } } },
      { manager: "my-controller", operation: "Update", fieldsV1: { "f:data": { ".": {}, "f:a": {} } } }
    ])
    const patched = await request(
      url(),
      "PATCH",
      `${base}/u?fieldManager=editor`,
      { data: { a: "3" } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(managers(patched.body)).toEqual([
      { manager: "editor", operation: "Update", fieldsV1: { "f:data": { "f:a": {}, "f:b": {} } } },
      // the map itself stays my-controller's (it created it): a member without children is {}
      { manager: "my-controller", operation: "Update", fieldsV1: { "f:data": {} } }
    ])
  })
})
