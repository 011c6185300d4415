/**
 * The write pipeline over HTTP, with the apiserver's codes and texts: dryRun=All on every write
 * verb (everything runs, nothing persists), fieldValidation Strict/Warn/Ignore, Go's type errors,
 * Secrets (stringData, type, immutable), the 1 MiB limit, validation, finalizers and deletion, and
 * that a refused write leaves the object and its resourceVersion as they were.
 */
import { describe, expect, it } from "vitest"
import { configMap, newNamespace, onApiServer, request } from "./support.js"

const strict = "fieldValidation=Strict"

describe("apiserver: write path", () => {
  const server = onApiServer()
  const url = () => server().url
  const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
  const get = async (path: string) => (await request(url(), "GET", path)).body

  it("dryRun=All on create, update, patch, delete and deletecollection: the answers of the real thing, nothing persisted", async () => {
    const ns = await newNamespace(url())
    const c = await request(url(), "POST", `${cms(ns)}?dryRun=All`, configMap("a", { k: "v" }))
    expect(c.status).toBe(201)
    expect(c.body.metadata).toMatchObject({ name: "a", namespace: ns })
    expect(c.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(c.body.metadata.resourceVersion).toBeUndefined()
    expect((await request(url(), "GET", `${cms(ns)}/a`)).status).toBe(404)
    // a dry-run create of what exists is the real 409
    const real = (await request(url(), "POST", cms(ns), configMap("a", { k: "v" }))).body
    const dup = await request(url(), "POST", `${cms(ns)}?dryRun=All`, configMap("a"))
    expect(dup.status).toBe(409)
    expect(dup.body.message).toBe('configmaps "a" already exists')
    // update and patch: the result as it would be, the stored object untouched
    const u = await request(url(), "PUT", `${cms(ns)}/a?dryRun=All`, { ...real, data: { k: "changed" } })
    expect(u.status).toBe(200)
    expect(u.body.data).toEqual({ k: "changed" })
    expect(u.body.metadata.resourceVersion).toBe(real.metadata.resourceVersion)
    const p = await request(
      url(),
      "PATCH",
      `${cms(ns)}/a?dryRun=All`,
      { data: { x: "1" } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(p.body.data).toEqual({ k: "v", x: "1" })
    const stale = await request(url(), "PUT", `${cms(ns)}/a?dryRun=All`, {
      ...real,
      metadata: { ...real.metadata, resourceVersion: "1" }
    })
    expect(stale.status).toBe(409)
    // delete and deletecollection
    const d = await request(url(), "DELETE", `${cms(ns)}/a`, { dryRun: ["All"] })
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({ kind: "Status", status: "Success", details: { name: "a", kind: "configmaps" } })
    const dq = await request(url(), "DELETE", `${cms(ns)}/a?dryRun=All`)
    expect(dq.body).toMatchObject({ kind: "Status", status: "Success" })
    const dc = await request(url(), "DELETE", `${cms(ns)}?dryRun=All`)
    expect(dc.body.items.map((o: any) => o.metadata.name)).toEqual(["a"])
    const after = await get(`${cms(ns)}/a`)
    expect(after).toEqual(real)
    // a namespace's dry-run delete does not start its termination
    const dn = await request(url(), "DELETE", `/api/v1/namespaces/${ns}?dryRun=All`)
    expect(dn.body.status.phase).toBe("Terminating")
    expect((await get(`/api/v1/namespaces/${ns}`)).status.phase).toBe("Active")
  })

  it("dryRun values other than All: 422 with the apiserver's text, for each verb's options kind", async () => {
    const ns = await newNamespace(url())
    const c = await request(url(), "POST", `${cms(ns)}?dryRun=foo`, configMap("a"))
    expect(c.status).toBe(422)
    expect(c.body).toMatchObject({
      reason: "Invalid",
      message: 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["foo"]: supported values: "All"',
      details: {
        group: "meta.k8s.io",
        kind: "CreateOptions",
        causes: [{ reason: "FieldValueNotSupported", field: "dryRun" }]
      }
    })
    await request(url(), "POST", cms(ns), configMap("a"))
    expect((await request(url(), "PUT", `${cms(ns)}/a?dryRun=All&dryRun=x`, configMap("a"))).body.message).toBe(
      'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All","x"]: supported values: "All"'
    )
    const del = await request(url(), "DELETE", `${cms(ns)}/a`, { dryRun: ["Some"] })
    expect(del.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"'
    )
    const fv = await request(url(), "POST", `${cms(ns)}?fieldValidation=Loud`, configMap("b"))
    expect(fv.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"'
    )
    expect((await request(url(), "GET", `${cms(ns)}/b`)).status).toBe(404)
  })

  it("fieldValidation: Strict refuses unknown and duplicate fields (400), Warn (the default) answers with Warning headers, Ignore drops them", async () => {
    const ns = await newNamespace(url())
    const body =
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","bogus":1},"data":{"a":"1","a":"2"},"extra":true}'
    const s = await request(url(), "POST", `${cms(ns)}?${strict}`, body)
    expect(s.status).toBe(400)
    expect(s.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus", duplicate field "data.a", unknown field "extra"'
    )
    const w = await request(url(), "POST", cms(ns), body)
    expect(w.status).toBe(201)
    expect(w.headers.get("warning")).toBe(
      '299 - "unknown field \\"metadata.bogus\\"", 299 - "duplicate field \\"data.a\\"", 299 - "unknown field \\"extra\\""'
    )
    expect(w.body.data).toEqual({ a: "2" })
    expect(w.body.extra).toBeUndefined()
    const i = await request(url(), "POST", `${cms(ns)}?fieldValidation=Ignore`, body.replace('"s"', '"i"'))
    expect(i.status).toBe(201)
    expect(i.headers.get("warning")).toBeNull()
    // a patch under Strict: the apiserver's 422 on `patch` with the patched object
    const p = await request(
      url(),
      "PATCH",
      `${cms(ns)}/s?${strict}`,
      { nope: 1 },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(p.status).toBe(422)
    expect(p.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"v1\\",.*\\"nope\\":1\}": strict decoding error: unknown field "nope"$/
    )
  })

  it("types: every field of the kinds served is checked as Go decodes it (400 with encoding/json's text)", async () => {
    const ns = await newNamespace(url())
    const cases: Array<[unknown, string]> = [
      [
        { metadata: { name: "a" }, data: { a: 1 } },
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
      ],
      [
        { metadata: { name: "a" }, data: "x" },
        "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"
      ],
      [
        { metadata: { name: "a", labels: { x: true } } },
        "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
      ],
      [
        { metadata: { name: "a", generation: 1.5 } },
        "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64"
      ],
      [
        { metadata: { name: "a", finalizers: "x" } },
        "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string"
      ],
      [
        { metadata: { name: "a" }, immutable: "yes" },
        "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"
      ],
      [{ metadata: { name: "a" }, binaryData: { b: "!!" } }, "illegal base64 data at input byte 0"],
      [
        { metadata: { name: "a", creationTimestamp: "yesterday" } },
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
      ]
    ]
    for (const [body, err] of cases) {
      const r = await request(url(), "POST", cms(ns), body)
      expect(r.status).toBe(400)
      expect(r.body.message).toBe(`ConfigMap in version "v1" cannot be handled as a ConfigMap: ${err}`)
    }
    const sec = await request(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: "s" },
      data: { k: 5 }
    })
    expect(sec.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.data of type []uint8'
    )
    const nsr = await request(url(), "POST", "/api/v1/namespaces", {
      metadata: { name: "x" },
      spec: { finalizers: [1] }
    })
    expect(nsr.body.message).toBe(
      'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName'
    )
    expect((await get(cms(ns))).items).toEqual([])
  })

  it("Secrets: stringData folded into base64 data (its keys win) and never returned; type defaults to Opaque; type is immutable; required keys per type", async () => {
    const ns = await newNamespace(url())
    const secrets = `/api/v1/namespaces/${ns}/secrets`
    const c = await request(url(), "POST", secrets, {
      metadata: { name: "s" },
      data: { user: Buffer.from("old").toString("base64"), keep: "a2VlcA==" },
      stringData: { user: "admin", pass: "hunter2" }
    })
    expect(c.status).toBe(201)
    expect(c.body.type).toBe("Opaque")
    expect(c.body.stringData).toBeUndefined()
    expect(c.body.data).toEqual({ keep: "a2VlcA==", pass: "aHVudGVyMg==", user: "YWRtaW4=" })
    const list = await get(secrets)
    expect(list.items[0].stringData).toBeUndefined()
    const t = await request(url(), "PUT", `${secrets}/s`, { ...c.body, type: "kubernetes.io/tls" })
    expect(t.status).toBe(422)
    expect(t.body.message).toBe(
      'Secret "s" is invalid: [type: Invalid value: "kubernetes.io/tls": field is immutable, data[tls.crt]: Required value, data[tls.key]: Required value]'
    )
    const tls = await request(url(), "POST", secrets, { metadata: { name: "t" }, type: "kubernetes.io/tls", data: {} })
    expect(tls.body.message).toBe(
      'Secret "t" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]'
    )
  })

  it("immutable ConfigMaps and Secrets: data changes and turning it off are refused, metadata may change; the object and RV stay", async () => {
    const ns = await newNamespace(url())
    const c = (await request(url(), "POST", cms(ns), { ...configMap("im", { a: "1" }), immutable: true })).body
    const change = await request(url(), "PUT", `${cms(ns)}/im`, { ...c, data: { a: "2" }, immutable: false })
    expect(change.status).toBe(422)
    expect(change.body.message).toBe(
      'ConfigMap "im" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]'
    )
    expect(await get(`${cms(ns)}/im`)).toEqual(c)
    const label = await request(
      url(),
      "PATCH",
      `${cms(ns)}/im`,
      { metadata: { labels: { ok: "yes" } } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(label.status).toBe(200)
    const s = (
      await request(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, {
        metadata: { name: "im" },
        immutable: true,
        stringData: { a: "1" }
      })
    ).body
    const sp = await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/secrets/im`,
      { stringData: { a: "2" } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(sp.body.message).toBe('Secret "im" is invalid: data: Forbidden: field is immutable when `immutable` is set')
    expect(await get(`/api/v1/namespaces/${ns}/secrets/im`)).toEqual(s)
  })

  it("validation: 1 MiB of ConfigMap or Secret values is a 422 (not etcd's 500), keys and names by their rules", async () => {
    const ns = await newNamespace(url())
    const big = "x".repeat(1024 * 1024 + 1)
    const r = await request(url(), "POST", cms(ns), configMap("big", { a: big }))
    expect(r.status).toBe(422)
    expect(r.body.message).toBe('ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes')
    const s = await request(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: "big" },
      stringData: { a: big }
    })
    expect(s.body.message).toBe('Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes')
    const keys = await request(url(), "POST", cms(ns), configMap("k", { "bad key": "1", "..x": "2" }))
    expect(keys.body.message).toBe(
      `ConfigMap "k" is invalid: [data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+'), data[..x]: Invalid value: "..x": must not start with '..']`
    )
    const fin = await request(url(), "POST", cms(ns), { metadata: { name: "f", finalizers: ["nope"] } })
    expect(fin.body.message).toBe(
      'ConfigMap "f" is invalid: metadata.finalizers: Invalid value: "nope": name is neither a standard finalizer name nor is it fully qualified'
    )
    expect((await get(cms(ns))).items).toEqual([])
  })

  it("finalizers: DELETE marks (deletionTimestamp, deletionGracePeriodSeconds 0) and answers with the object; no new finalizers while deleting; the last one's removal deletes", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", cms(ns), { metadata: { name: "f", finalizers: ["example.com/a", "example.com/b"] } })
    const d = await request(url(), "DELETE", `${cms(ns)}/f`)
    expect(d.status).toBe(200)
    expect(d.body.kind).toBe("ConfigMap")
    expect(d.body.metadata.deletionTimestamp).toMatch(/Z$/)
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(0)
    // again: the same object, nothing written
    const again = await request(url(), "DELETE", `${cms(ns)}/f`)
    expect(again.body).toEqual(d.body)
    const add = await request(url(), "PUT", `${cms(ns)}/f`, {
      ...d.body,
      metadata: { ...d.body.metadata, finalizers: ["example.com/a", "example.com/b", "example.com/c"] }
    })
    expect(add.status).toBe(422)
    expect(add.body.message).toBe(
      'ConfigMap "f" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c"}'
    )
    expect(await get(`${cms(ns)}/f`)).toEqual(d.body)
    const one = await request(url(), "PUT", `${cms(ns)}/f`, {
      ...d.body,
      metadata: { ...d.body.metadata, finalizers: ["example.com/b"] }
    })
    expect(one.status).toBe(200)
    const last = await request(url(), "PUT", `${cms(ns)}/f`, {
      ...one.body,
      metadata: { ...one.body.metadata, finalizers: [] }
    })
    expect(last.status).toBe(200)
    expect((await request(url(), "GET", `${cms(ns)}/f`)).status).toBe(404)
    // propagation: orphan and foregroundDeletion are added as the options say (and swapped)
    await request(url(), "POST", cms(ns), configMap("o"))
    const orphan = await request(url(), "DELETE", `${cms(ns)}/o?propagationPolicy=Orphan`)
    expect(orphan.body.metadata.finalizers).toEqual(["orphan"])
    const fg = await request(url(), "DELETE", `${cms(ns)}/o`, { propagationPolicy: "Foreground" })
    expect(fg.body.metadata.finalizers).toEqual(["foregroundDeletion"])
    const both = await request(url(), "DELETE", `${cms(ns)}/o`, { propagationPolicy: "Orphan", orphanDependents: true })
    expect(both.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set'
    )
    const bg = await request(url(), "DELETE", `${cms(ns)}/o`, { propagationPolicy: "Background" })
    expect(bg.body).toMatchObject({ kind: "Status", status: "Success" })
    expect((await request(url(), "GET", `${cms(ns)}/o`)).status).toBe(404)
  })

  it("a refused update leaves the object and its resourceVersion unchanged; an object still being deleted says so on create", async () => {
    const ns = await newNamespace(url())
    const c = (await request(url(), "POST", cms(ns), configMap("a", { k: "v" }))).body
    for (const [body, code] of [
      [{ ...c, metadata: { ...c.metadata, name: "a", uid: "other" } }, 422],
      [{ ...c, data: { k: 1 } }, 400],
      [{ ...c, metadata: { ...c.metadata, labels: { "bad label!": "x" } } }, 422],
      [{ ...c, metadata: { ...c.metadata, resourceVersion: "1" } }, 409]
    ] as const) {
      const r = await request(url(), "PUT", `${cms(ns)}/a`, body)
      expect(r.status).toBe(code)
      expect(await get(`${cms(ns)}/a`)).toEqual(c)
    }
    await request(
      url(),
      "PATCH",
      `${cms(ns)}/a`,
      { metadata: { finalizers: ["example.com/x"] } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    await request(url(), "DELETE", `${cms(ns)}/a`)
    const again = await request(url(), "POST", cms(ns), configMap("a"))
    expect(again.status).toBe(409)
    expect(again.body.message).toBe('object is being deleted: configmaps "a" already exists')
  })

  it("PartialObjectMetadata and its List (get, list, watch); YAML bodies in and out; 405 for a verb a route does not take", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", cms(ns), configMap("a", { secret: "x" }, { app: "p" }))
    const meta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    const one = await request(url(), "GET", `${cms(ns)}/a`, undefined, { accept: meta })
    expect(one.body).toMatchObject({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "a", labels: { app: "p" } }
    })
    expect(one.body.data).toBeUndefined()
    const list = await request(url(), "GET", cms(ns), undefined, {
      accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    })
    expect(list.body.kind).toBe("PartialObjectMetadataList")
    expect(list.body.items.map((i: any) => [i.kind, i.metadata.name])).toEqual([["PartialObjectMetadata", "a"]])
    const wrong = await request(url(), "GET", cms(ns), undefined, { accept: meta })
    expect(wrong.status).toBe(406)
    expect(wrong.body.message).toBe(
      "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
    )
    const watched = await request(url(), "GET", `${cms(ns)}?watch=1&timeoutSeconds=1`, undefined, { accept: meta })
    expect(JSON.parse(watched.text.split("\n")[0]!).object).toMatchObject({
      kind: "PartialObjectMetadata",
      metadata: { name: "a" }
    })
    const yaml = await request(
      url(),
      "POST",
      cms(ns),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  on: yes\n  n: '1'\n",
      {
        "content-type": "application/yaml",
        accept: "application/yaml"
      }
    )
    // YAML 1.1 (go-yaml v2): `yes` is a bool; the Status comes back as YAML
    expect(yaml.status).toBe(400)
    expect(yaml.headers.get("content-type")).toBe("application/yaml")
    expect(yaml.text).toContain("cannot unmarshal bool into Go struct field ConfigMap.data of type string")
    expect(yaml.text).toMatch(/^apiVersion: v1\ncode: 400\n/)
    const ok = await request(
      url(),
      "POST",
      cms(ns),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  num: '1'\n",
      {
        "content-type": "application/yaml",
        accept: "application/yaml"
      }
    )
    expect(ok.status).toBe(201)
    expect(ok.headers.get("content-type")).toBe("application/yaml")
    expect(ok.text).toMatch(/^apiVersion: v1\ndata:\n {2}num: "1"\nkind: ConfigMap\nmetadata:\n/)
    for (const [method, path] of [
      ["PUT", cms(ns)],
      ["PATCH", cms(ns)],
      ["POST", `${cms(ns)}/a`],
      ["POST", `/api/v1/namespaces/${ns}/finalize`]
    ] as const) {
      const r = await request(url(), method, path, {}, { "content-type": "application/merge-patch+json" })
      expect(r.status).toBe(405)
      expect(r.body).toMatchObject({
        reason: "MethodNotAllowed",
        message: "the server does not allow this method on the requested resource",
        code: 405
      })
    }
  })

  it('apiserver_request_total: a watch counted with its real code, dry runs under dry_run="All"', async () => {
    const ns = await newNamespace(url())
    await request(url(), "GET", `${cms(ns)}?watch=1&timeoutSeconds=1`)
    await request(url(), "POST", `${cms(ns)}?dryRun=All`, configMap("m"))
    const text = (await request(url(), "GET", "/metrics")).text
    const line = (verb: string, code: number, dryRun: string) =>
      text
        .split("\n")
        .find(
          (l) =>
            l.startsWith("apiserver_request_total{") &&
            l.includes(`verb="${verb}"`) &&
            l.includes(`code="${code}"`) &&
            l.includes(`dry_run="${dryRun}"`) &&
            l.includes('resource="configmaps"')
        )
    expect(line("WATCH", 200, "")).toBeDefined()
    expect(line("WATCH", 204, "")).toBeUndefined()
    expect(line("POST", 201, "All")).toBeDefined()
  })
})
