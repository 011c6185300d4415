/**
 * CRDs with structural schemas against the running apiserver: a CRD whose schema is not structural
 * is refused with ValidateStructural's texts and nothing is stored; custom resources are validated
 * (422 with the apiserver's Status), pruned (fieldValidation Strict/Warn/Ignore report the pruned
 * fields as unknown), defaulted on write and on read; the status and scale subresources; the
 * generation; several versions with None conversion; the schema in /openapi/v3.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { newNamespace, onApiServer, request } from "./support.js"

/** Polls until `f` holds (a CRD is served once its controller saw it); the test's timeout ends a wait that never ends. */
const until = async (f: () => Promise<boolean>): Promise<void> => {
  while (!(await f())) await new Promise((r) => setTimeout(r, 10))
}

const gadgetSchema = {
  type: "object",
  description: "A Gadget has a size and a color.",
  properties: {
    spec: {
      type: "object",
      description: "What the gadget should be.",
      required: ["size"],
      properties: {
        size: { type: "integer", minimum: 1, maximum: 10, description: "How big." },
        color: { type: "string", enum: ["red", "green"], default: "red" },
        replicas: { type: "integer", default: 1 },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        port: { "x-kubernetes-int-or-string": true }
      }
    },
    status: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        selector: { type: "string" },
        conditions: {
          type: "array",
          items: { type: "object", properties: { type: { type: "string" }, status: { type: "string" } } }
        }
      }
    }
  }
}

const gadgetCRD = (plural: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.schema.example.com` },
  spec: {
    group: "schema.example.com",
    scope: "Namespaced",
    names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: gadgetSchema },
        subresources: {
          status: {},
          scale: {
            specReplicasPath: ".spec.replicas",
            statusReplicasPath: ".status.replicas",
            labelSelectorPath: ".status.selector"
          }
        }
      }
    ]
  }
})

describe("apiserver: CRD structural schemas", () => {
  const server = onApiServer()
  const url = () => server().url

  const served = async (plural: string) => {
    const crd = await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      gadgetCRD(plural)
    )
    expect(crd.status).toBe(201)
    await until(async () => (await request(url(), "GET", `/apis/schema.example.com/v1/${plural}`)).status === 200)
    const ns = await newNamespace(url())
    return { ns, base: `/apis/schema.example.com/v1/namespaces/${ns}/${plural}` }
  }
  const gadget = (kind: string, name: string, spec: unknown, extra: Record<string, unknown> = {}) => ({
    apiVersion: "schema.example.com/v1",
    kind,
    metadata: { name },
    spec,
    ...extra
  })

  it("a CRD whose schema is not structural is refused with ValidateStructural's texts, sorted; nothing stored", async () => {
    const crd = gadgetCRD("badgadgets")
    crd.spec.versions[0]!.schema.openAPIV3Schema = {
      properties: { spec: { properties: { list: { type: "array" } } } }
    } as never
    ;(crd.spec.versions as Array<unknown>).push({ name: "v2", served: true, storage: false })
    const r = await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    expect(r.status).toBe(422)
    const p = "spec.versions[0].schema.openAPIV3Schema"
    expect(r.body.message).toBe(
      `CustomResourceDefinition.apiextensions.k8s.io "badgadgets.schema.example.com" is invalid: [` +
        `spec.versions[1].schema.openAPIV3Schema: Required value, ` +
        `${p}.properties[spec].properties[list].items: Required value: must be specified, ` +
        `${p}.properties[spec].type: Required value: must not be empty for specified object fields, ` +
        `${p}.type: Required value: must not be empty at the root]`
    )
    expect(r.body.details.causes[3]).toEqual({
      reason: "FieldValueRequired",
      message: "Required value: must not be empty at the root",
      field: `${p}.type`
    })
    const get = await request(
      url(),
      "GET",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/badgadgets.schema.example.com"
    )
    expect(get.status).toBe(404)
    // nested value validations may not carry types; metadata only name/generateName
    const nested = gadgetCRD("nestedgadgets")
    nested.spec.versions[0]!.schema.openAPIV3Schema = {
      type: "object",
      properties: {
        metadata: { type: "object", properties: { labels: { type: "object" } } },
        spec: { type: "object", anyOf: [{ type: "object" }] }
      }
    } as never
    const n = await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nested)
    expect(n.status).toBe(422)
    expect(n.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)).toEqual([
      `${p}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      `${p}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`
    ])
  })

  it("custom resources are validated: the 422 Status with one cause per error; nothing stored", async () => {
    const { base } = await served("gadgets")
    const bad = await request(url(), "POST", base, gadget("Gadget", "bad", { size: 99, color: "purple", port: true }))
    expect(bad.status).toBe(422)
    expect(bad.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Invalid",
      code: 422,
      message:
        'Gadget.schema.example.com "bad" is invalid: [spec.size: Invalid value: 99: spec.size in body should be less than or equal to 10, ' +
        'spec.color: Unsupported value: "purple": supported values: "red", "green", ' +
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"]',
      details: { name: "bad", group: "schema.example.com", kind: "Gadget" }
    })
    expect(bad.body.details.causes[0]).toEqual({
      reason: "FieldValueInvalid",
      message: "Invalid value: 99: spec.size in body should be less than or equal to 10",
      field: "spec.size"
    })
    expect(bad.body.details.causes[2].reason).toBe("FieldValueTypeInvalid")
    const missing = await request(url(), "POST", base, gadget("Gadget", "m", {}))
    expect(missing.body.message).toBe('Gadget.schema.example.com "m" is invalid: spec.size: Required value')
    expect((await request(url(), "GET", `${base}/bad`)).status).toBe(404)
    // dry run validates too
    expect((await request(url(), "POST", `${base}?dryRun=All`, gadget("Gadget", "d", { size: 0 }))).status).toBe(422)
  })

  it("pruning: unknown fields dropped (preserve-unknown-fields kept); Strict refuses them, Warn warns, Ignore is silent", async () => {
    const { base } = await served("prunedgadgets")
    const body = gadget("Prunedgadget", "p", { size: 2, extra: 1, free: { anything: [1] } }, { top: true })
    const strict = await request(url(), "POST", `${base}?fieldValidation=Strict`, body)
    expect(strict.status).toBe(400)
    expect(strict.body.message).toBe(
      'Prunedgadget in version "v1" cannot be handled as a Prunedgadget: strict decoding error: unknown field "spec.extra", unknown field "top"'
    )
    const warn = await request(url(), "POST", base, body)
    expect(warn.status).toBe(201)
    expect(warn.headers.get("warning")).toBe('299 - "unknown field \\"spec.extra\\"", 299 - "unknown field \\"top\\""')
    expect(warn.body.spec).toEqual({ size: 2, free: { anything: [1] }, color: "red", replicas: 1 })
    expect(warn.body.top).toBeUndefined()
    const ignore = await request(url(), "PUT", `${base}/p?fieldValidation=Ignore`, { ...warn.body, more: 1 })
    expect(ignore.status).toBe(200)
    expect(ignore.headers.get("warning")).toBeNull()
    expect(ignore.body.more).toBeUndefined()
    // a merge patch of an unknown field under Strict: the patch's 422
    const patched = await request(
      url(),
      "PATCH",
      `${base}/p?fieldValidation=Strict`,
      { spec: { nope: 1 } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(patched.status).toBe(422)
    expect(patched.body.message).toContain('strict decoding error: unknown field "spec.nope"')
  })

  it("status subresource: create drops status, main writes keep it, /status changes only status; the generation follows the spec", async () => {
    const { base } = await served("statusgadgets")
    const kind = "Statusgadget"
    const created = await request(url(), "POST", base, gadget(kind, "s", { size: 3 }, { status: { replicas: 5 } }))
    expect(created.status).toBe(201)
    expect(created.body.status).toBeUndefined()
    expect(created.body.metadata.generation).toBe(1)
    const merge = { "content-type": "application/merge-patch+json" }
    const st = await request(
      url(),
      "PATCH",
      `${base}/s/status`,
      {
        status: { replicas: 2, conditions: [{ type: "Ready", status: "True" }] },
        spec: { size: 9 },
        metadata: { labels: { a: "b" } }
      },
      merge
    )
    expect(st.status).toBe(200)
    expect(st.body.status).toEqual({ replicas: 2, conditions: [{ type: "Ready", status: "True" }] })
    expect(st.body.spec.size).toBe(3)
    expect(st.body.metadata.labels).toBeUndefined()
    expect(st.body.metadata.generation).toBe(1)
    const main = await request(url(), "PATCH", `${base}/s`, { spec: { size: 4 }, status: { replicas: 7 } }, merge)
    expect(main.body.spec.size).toBe(4)
    expect(main.body.status.replicas).toBe(2)
    expect(main.body.metadata.generation).toBe(2)
    const labels = await request(url(), "PATCH", `${base}/s`, { metadata: { labels: { x: "y" } } }, merge)
    expect(labels.body.metadata.generation).toBe(2)
    const getStatus = await request(url(), "GET", `${base}/s/status`)
    expect(getStatus.body.status.replicas).toBe(2)
    const badStatus = await request(url(), "PUT", `${base}/s/status`, { ...getStatus.body, status: { replicas: "x" } })
    expect(badStatus.status).toBe(422)
    expect(badStatus.body.details.causes[0]).toEqual({
      reason: "FieldValueTypeInvalid",
      message: 'Invalid value: "string": replicas in body must be of type integer: "string"',
      field: "status.replicas"
    })
  })

  it("scale subresource: autoscaling/v1 Scale from the paths; PUT and PATCH set spec replicas; the RV is the lock", async () => {
    const { ns, base } = await served("scalegadgets")
    const kind = "Scalegadget"
    await request(url(), "POST", base, gadget(kind, "s", { size: 3, replicas: 2 }))
    await request(
      url(),
      "PATCH",
      `${base}/s/status`,
      { status: { replicas: 1, selector: "app=x" } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    const scale = await request(url(), "GET", `${base}/s/scale`)
    expect(scale.status).toBe(200)
    expect(scale.body).toMatchObject({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "s", namespace: ns },
      spec: { replicas: 2 },
      status: { replicas: 1, selector: "app=x" }
    })
    const put = await request(url(), "PUT", `${base}/s/scale`, { ...scale.body, spec: { replicas: 5 } })
    expect(put.status).toBe(200)
    expect(put.body.spec.replicas).toBe(5)
    const obj = await request(url(), "GET", `${base}/s`)
    expect(obj.body.spec.replicas).toBe(5)
    expect(obj.body.metadata.generation).toBe(2)
    const stale = await request(url(), "PUT", `${base}/s/scale`, { ...scale.body, spec: { replicas: 6 } })
    expect(stale.status).toBe(409)
    const patch = await request(
      url(),
      "PATCH",
      `${base}/s/scale`,
      { spec: { replicas: 0 } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(patch.body.spec).toEqual({})
    const negative = await request(
      url(),
      "PATCH",
      `${base}/s/scale`,
      { spec: { replicas: -1 } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(negative.status).toBe(422)
    expect(negative.body.message).toBe(
      'Scalegadget.schema.example.com "s" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer'
    )
  })

  it("scale subresource and managedFields: the scaler owns the replicas, an applier conflicts with it; a no-op writes nothing", async () => {
    const { base } = await served("ownedgadgets")
    const kind = "Ownedgadget"
    const APPLY = { "content-type": "application/apply-patch+yaml" }
    const MERGE = { "content-type": "application/merge-patch+json" }
    const manifest = JSON.stringify(gadget(kind, "o", { size: 3, replicas: 1, color: "green" }))
    const entries = async () => {
      const o = (await request(url(), "GET", `${base}/o`)).body
      const mf = (o.metadata.managedFields ?? []).map((e: any) => {
        const { time, ...rest } = e
        return { ...rest, timed: time !== undefined }
      })
      return { rv: o.metadata.resourceVersion as string, replicas: o.spec.replicas as number, mf }
    }
    const applier = (fields: object) => ({
      manager: "deployer",
      operation: "Apply",
      apiVersion: "schema.example.com/v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": fields },
      timed: true
    })
    const scaler = (manager: string) => ({
      manager,
      operation: "Update",
      apiVersion: "schema.example.com/v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
      subresource: "scale",
      timed: false // ScaleHandler.ToParent gives a new scale manager the object's time for it: none
    })
    expect((await request(url(), "PATCH", `${base}/o?fieldManager=deployer`, manifest, APPLY)).status).toBe(201)
    // the scaler takes spec.replicas from the applier (the entry of a scale write has no time, as upstream)
    const scaled = await request(url(), "PATCH", `${base}/o/scale?fieldManager=hpa`, { spec: { replicas: 3 } }, MERGE)
    expect(scaled.status).toBe(200)
    const afterScale = await entries()
    expect(afterScale.replicas).toBe(3)
    expect(afterScale.mf).toEqual([applier({ "f:color": {}, "f:size": {} }), scaler("hpa")])
    // applying the manifest again conflicts with the scaler, with kube-apiserver's text; nothing changes
    const conflict = await request(url(), "PATCH", `${base}/o?fieldManager=deployer`, manifest, APPLY)
    expect(conflict.status).toBe(409)
    expect(conflict.body.message).toBe(
      'Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using schema.example.com/v1: .spec.replicas'
    )
    expect(await entries()).toEqual(afterScale)
    // a scale write that changes nothing takes nothing and writes nothing
    const same = await request(url(), "PATCH", `${base}/o/scale?fieldManager=other`, { spec: { replicas: 3 } }, MERGE)
    expect(same.status).toBe(200)
    expect(await entries()).toEqual(afterScale)
    // nor does the manifest without replicas applied again unchanged (managed-fields-equality.test.ts
    // has an apply in another second, whose new time alone is not a change)
    const without = JSON.stringify(gadget(kind, "o", { size: 3, color: "green" }))
    expect((await request(url(), "PATCH", `${base}/o?fieldManager=deployer`, without, APPLY)).status).toBe(200)
    const reapplied = await entries()
    expect((await request(url(), "PATCH", `${base}/o?fieldManager=deployer`, without, APPLY)).status).toBe(200)
    expect(await entries()).toEqual(reapplied)
    // force takes the replicas back
    const forced = await request(url(), "PATCH", `${base}/o?fieldManager=deployer&force=true`, manifest, APPLY)
    expect(forced.status).toBe(200)
    const afterForce = await entries()
    expect(afterForce.replicas).toBe(1)
    expect(afterForce.mf).toEqual([applier({ "f:color": {}, "f:replicas": {}, "f:size": {} })])
  })

  it("several versions, None conversion: stored in the storage version, served in each with its own defaults and pruning", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "things.schema.example.com" },
      spec: {
        group: "schema.example.com",
        scope: "Cluster",
        names: { plural: "things", kind: "Thing" },
        versions: [
          {
            name: "v1beta1",
            served: true,
            storage: false,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { old: { type: "string", default: "b1" } } } }
              }
            }
          },
          {
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { new: { type: "integer", default: 7 } } } }
              }
            }
          }
        ]
      }
    }
    expect((await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(
      201
    )
    await until(async () => (await request(url(), "GET", "/apis/schema.example.com/v1beta1/things")).status === 200)
    const created = await request(url(), "POST", "/apis/schema.example.com/v1beta1/things", {
      apiVersion: "schema.example.com/v1beta1",
      kind: "Thing",
      metadata: { name: "t" },
      spec: { old: "x", new: "not in v1beta1" }
    })
    expect(created.status).toBe(201)
    // stored as v1: what v1's schema does not know is pruned on the way (None conversion keeps the rest),
    // and read back as v1beta1 its default fills the gap
    expect(created.body.apiVersion).toBe("schema.example.com/v1beta1")
    expect(created.body.spec).toEqual({ old: "b1" })
    const asV1 = await request(url(), "GET", "/apis/schema.example.com/v1/things/t")
    expect(asV1.body.apiVersion).toBe("schema.example.com/v1")
    expect(asV1.body.spec).toEqual({ new: 7 })
    const written = await request(url(), "PUT", "/apis/schema.example.com/v1/things/t", {
      ...asV1.body,
      spec: { new: 3 }
    })
    expect(written.body.spec).toEqual({ new: 3 })
    const list = await request(url(), "GET", "/apis/schema.example.com/v1beta1/things")
    expect(list.body.items[0]).toMatchObject({ apiVersion: "schema.example.com/v1beta1", spec: { old: "b1" } })
    // the body's apiVersion must be the URL's
    const wrong = await request(url(), "POST", "/apis/schema.example.com/v1/things", {
      apiVersion: "schema.example.com/v1beta1",
      kind: "Thing",
      metadata: { name: "u" }
    })
    expect(wrong.status).toBe(400)
  })

  it("a CRD stored without a schema (before schemas were checked here) is still served, its objects kept as sent", async () => {
    const crd = gadgetCRD("oldgadgets")
    delete (crd.spec.versions[0] as { schema?: unknown }).schema
    delete (crd.spec.versions[0] as { subresources?: unknown }).subresources
    // written as an older etcd-effect would have: the API refuses it now
    expect((await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(
      422
    )
    await Effect.runPromise(
      server().running.client.kv.put(
        "/registry/apiextensions.k8s.io/customresourcedefinitions/oldgadgets.schema.example.com",
        JSON.stringify({ ...crd, metadata: { ...crd.metadata, uid: "u", creationTimestamp: "2026-01-01T00:00:00Z" } })
      )
    )
    await until(async () => (await request(url(), "GET", "/apis/schema.example.com/v1/oldgadgets")).status === 200)
    const ns = await newNamespace(url())
    const r = await request(url(), "POST", `/apis/schema.example.com/v1/namespaces/${ns}/oldgadgets`, {
      ...gadget("Oldgadget", "o", { size: "any", extra: 1 })
    })
    expect(r.status).toBe(201)
    expect(r.body.spec).toEqual({ size: "any", extra: 1 })
  })

  it("/openapi/v3 publishes the schema with apiVersion, kind and metadata; the index's hash changes with it", async () => {
    await served("docgadgets")
    const index = await request(url(), "GET", "/openapi/v3")
    const entry = index.body.paths["apis/schema.example.com/v1"]
    expect(entry.serverRelativeURL).toMatch(/^\/openapi\/v3\/apis\/schema\.example\.com\/v1\?hash=[0-9A-F]{128}$/)
    const doc = await request(url(), "GET", entry.serverRelativeURL)
    const schema = doc.body.components.schemas["com.example.schema.v1.Docgadget"]
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([
      { group: "schema.example.com", kind: "Docgadget", version: "v1" }
    ])
    expect(Object.keys(schema.properties)).toEqual(["apiVersion", "kind", "metadata", "spec", "status"])
    expect(schema.properties.spec.properties.size).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 10,
      description: "How big."
    })
    expect(schema.properties.metadata.allOf[0].$ref).toBe(
      "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    expect(doc.body.components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].type).toBe("object")
  })
})
