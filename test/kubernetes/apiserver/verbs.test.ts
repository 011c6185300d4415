/**
 * The verbs with the apiserver's codes and bodies (create/get/update/patch/delete/deletecollection),
 * CRDs served and unserved as they come and go (and back after a restart), discovery, Table
 * output, metrics, and Secrets through the encryption transformer.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { startInProcess } from "../../server/support/in-process.js"
import { configMap, newNamespace, onApiServer, request, startApiServer, until, widgetCRD } from "./support.js"

describe("apiserver: verbs", () => {
  const server = onApiServer()
  const url = () => server().url

  it("create: 201, uid, creationTimestamp, generateName; 409 AlreadyExists; Secrets default to Opaque", async () => {
    const ns = await newNamespace(url())
    const r = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a", { k: "v" }))
    expect(r.status).toBe(201)
    expect(r.body.metadata).toMatchObject({ name: "a", namespace: ns })
    expect(r.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(r.body.metadata.generation).toBeUndefined()
    const gen = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { generateName: "gen-" }
    })
    expect(gen.status).toBe(201)
    expect(gen.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
    const dup = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))
    expect(dup.status).toBe(409)
    expect(dup.body).toMatchObject({
      reason: "AlreadyExists",
      message: 'configmaps "a" already exists',
      details: { name: "a", kind: "configmaps" }
    })
    const secret = await request(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: "s" },
      data: { p: "cGFzcw==" }
    })
    expect(secret.body.type).toBe("Opaque")
  })

  it("update: PUT with the current RV works, a stale RV is 409 Conflict, none is unconditional; a missing object is 404", async () => {
    const ns = await newNamespace(url())
    const created = (await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a", { v: "1" })))
      .body
    const u1 = await request(url(), "PUT", `/api/v1/namespaces/${ns}/configmaps/a`, { ...created, data: { v: "2" } })
    expect(u1.status).toBe(200)
    expect(u1.body.data).toEqual({ v: "2" })
    expect(u1.body.metadata.uid).toBe(created.metadata.uid)
    expect(u1.body.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp)
    const stale = await request(url(), "PUT", `/api/v1/namespaces/${ns}/configmaps/a`, { ...created, data: { v: "3" } })
    expect(stale.status).toBe(409)
    expect(stale.body).toMatchObject({
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again'
    })
    const unconditional = await request(
      url(),
      "PUT",
      `/api/v1/namespaces/${ns}/configmaps/a`,
      configMap("a", { v: "4" })
    )
    expect(unconditional.status).toBe(200)
    expect((await request(url(), "PUT", `/api/v1/namespaces/${ns}/configmaps/zz`, configMap("zz"))).status).toBe(404)
  })

  it("patch: merge, JSON and strategic merge patches; generation bumps on spec changes of custom resources", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a", { x: "1", y: "2" }))
    const merge = await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/a`,
      { data: { x: null, z: "3" } },
      { "content-type": "application/merge-patch+json" }
    )
    expect(merge.body.data).toEqual({ y: "2", z: "3" })
    const jp = await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/a`,
      [
        { op: "replace", path: "/data/y", value: "9" },
        { op: "add", path: "/metadata/labels", value: { l: "1" } }
      ],
      {
        "content-type": "application/json-patch+json"
      }
    )
    expect(jp.status).toBe(200)
    expect(jp.body.data).toEqual({ y: "9", z: "3" })
    expect(jp.body.metadata.labels).toEqual({ l: "1" })
    const smp = await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/a`,
      { data: { w: "0" } },
      { "content-type": "application/strategic-merge-patch+json" }
    )
    expect(smp.body.data).toEqual({ y: "9", z: "3", w: "0" })
    // custom resources: merge patch bumps generation on a spec change, not on a label change
    const crd = await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      widgetCRD({ plural: "gadgets" })
    )
    expect(crd.status).toBe(201)
    await until(
      async () => (await request(url(), "GET", `/apis/example.com/v1/namespaces/${ns}/gadgets`)).status === 200
    )
    const g = await request(url(), "POST", `/apis/example.com/v1/namespaces/${ns}/gadgets`, {
      apiVersion: "example.com/v1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { size: 1 }
    })
    expect(g.body.metadata.generation).toBe(1)
    const g2 = await request(
      url(),
      "PATCH",
      `/apis/example.com/v1/namespaces/${ns}/gadgets/g`,
      { spec: { size: 2 } },
      { "content-type": "application/merge-patch+json" }
    )
    expect(g2.body.metadata.generation).toBe(2)
    const g3 = await request(
      url(),
      "PATCH",
      `/apis/example.com/v1/namespaces/${ns}/gadgets/g`,
      { metadata: { labels: { a: "b" } } },
      { "content-type": "application/merge-patch+json" }
    )
    expect(g3.body.metadata.generation).toBe(2)
    const smpCR = await request(
      url(),
      "PATCH",
      `/apis/example.com/v1/namespaces/${ns}/gadgets/g`,
      { spec: {} },
      { "content-type": "application/strategic-merge-patch+json" }
    )
    expect(smpCR.status).toBe(415)
  })

  it("delete: Status Success, preconditions (409), propagationPolicy accepted; deletecollection with a selector; deleting a namespace marks it Terminating", async () => {
    const ns = await newNamespace(url())
    const a = (await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))).body
    const wrongUid = await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/a`, {
      preconditions: { uid: "nope" }
    })
    expect(wrongUid.status).toBe(409)
    const d = await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/a`, {
      propagationPolicy: "Background",
      preconditions: { uid: a.metadata.uid }
    })
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "a", kind: "configmaps", uid: a.metadata.uid }
    })
    expect((await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/a`)).status).toBe(404)
    for (const [n, tier] of [
      ["b", "x"],
      ["c", "x"],
      ["d", "y"]
    ] as const) {
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap(n, {}, { tier }))
    }
    const dc = await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps?labelSelector=tier%3Dx`)
    expect(dc.status).toBe(200)
    expect(dc.body.items.map((o: any) => o.metadata.name)).toEqual(["b", "c"])
    const left = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)
    expect(left.body.items.map((o: any) => o.metadata.name)).toEqual(["d"])
    const dn = await request(url(), "DELETE", `/api/v1/namespaces/${ns}`)
    expect(dn.status).toBe(200)
    expect(dn.body).toMatchObject({ kind: "Namespace", status: { phase: "Terminating" } })
    expect(dn.body.metadata.deletionTimestamp).toMatch(/Z$/)
  })

  it("CRDs: served once created (namespaced and cluster-scoped, short names in discovery), unserved after deletion with their objects", async () => {
    const created = await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      widgetCRD({ plural: "flags", scope: "Cluster" })
    )
    expect(created.status).toBe(201)
    expect(created.body.status.conditions.map((c: any) => [c.type, c.status])).toEqual([
      ["NamesAccepted", "True"],
      ["Established", "True"]
    ])
    expect(created.body.status.acceptedNames).toMatchObject({
      plural: "flags",
      kind: "Flag",
      listKind: "FlagList",
      singular: "flag"
    })
    await until(async () => (await request(url(), "GET", "/apis/example.com/v1/flags")).status === 200)
    const disc = await request(url(), "GET", "/apis/example.com/v1")
    expect(disc.body.resources.find((r: any) => r.name === "flags")).toMatchObject({
      name: "flags",
      singularName: "flag",
      namespaced: false,
      kind: "Flag",
      shortNames: ["fl"]
    })
    expect((await request(url(), "GET", "/apis")).body.groups.map((g: any) => g.name)).toContain("example.com")
    const f = await request(url(), "POST", "/apis/example.com/v1/flags", {
      apiVersion: "example.com/v1",
      kind: "Flag",
      metadata: { name: "f1" },
      spec: {}
    })
    expect(f.status).toBe(201)
    expect(f.body.metadata.namespace).toBeUndefined()
    const list = await request(url(), "GET", "/apis/example.com/v1/flags")
    expect(list.body).toMatchObject({ kind: "FlagList", apiVersion: "example.com/v1" })
    expect(
      (await request(url(), "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/flags.example.com"))
        .status
    ).toBe(200)
    await until(async () => (await request(url(), "GET", "/apis/example.com/v1/flags")).status === 404)
    // recreated: empty
    await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      widgetCRD({ plural: "flags", scope: "Cluster" })
    )
    await until(async () => (await request(url(), "GET", "/apis/example.com/v1/flags")).status === 200)
    expect((await request(url(), "GET", "/apis/example.com/v1/flags")).body.items).toEqual([])
    // an invalid CRD: 422
    const bad = await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      ...widgetCRD({ plural: "things" }),
      metadata: { name: "wrong.example.com" }
    })
    expect(bad.status).toBe(422)
    expect(bad.body.message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'
    )
  })

  it("Table output: NAME, the printer's columns and AGE; a CRD's additionalPrinterColumns", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a", { x: "1", y: "2" }))
    const accept = {
      accept:
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
    }
    const t = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`, undefined, accept)
    expect(t.body.kind).toBe("Table")
    expect(t.body.apiVersion).toBe("meta.k8s.io/v1")
    expect(t.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Data", "Age"])
    expect(t.body.rows[0].cells.slice(0, 2)).toEqual(["a", 2])
    expect(t.body.rows[0].cells[2]).toMatch(/^\d+s$/)
    expect(t.body.rows[0].object).toMatchObject({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "a" }
    })
    await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      widgetCRD({ plural: "sprockets", columns: true })
    )
    await until(
      async () => (await request(url(), "GET", `/apis/example.com/v1/namespaces/${ns}/sprockets`)).status === 200
    )
    await request(url(), "POST", `/apis/example.com/v1/namespaces/${ns}/sprockets`, {
      apiVersion: "example.com/v1",
      kind: "Sprocket",
      metadata: { name: "s" },
      spec: { size: 7 }
    })
    const ct = await request(url(), "GET", `/apis/example.com/v1/namespaces/${ns}/sprockets/s`, undefined, accept)
    expect(ct.body.columnDefinitions.map((c: any) => [c.name, c.type])).toEqual([
      ["Name", "string"],
      ["Size", "integer"]
    ])
    expect(ct.body.rows[0].cells).toEqual(["s", 7])
  })

  it("keeps idle connections as kube-apiserver does (90 s), and says so to HTTP/1.1 clients", async () => {
    // Node's default (5 s) closed idle keep-alive connections under clients that had just picked
    // one for their next request: informers' writers failed with "other side closed" under load
    const { default: http } = await import("node:http")
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const get = () =>
      new Promise<string | undefined>((resolve, reject) =>
        http
          .get(`${url()}/version`, { agent }, (res) => {
            res.resume()
            res.on("end", () => resolve(String(res.headers["keep-alive"])))
          })
          .on("error", reject)
      )
    try {
      expect(await get()).toBe("timeout=90")
    } finally {
      agent.destroy()
    }
  })

  it("discovery, version, health and metrics", async () => {
    // the watch cache's capacity is reported from the moment the cache exists (newWatchCache): at
    // least the lower bound, 100 (the tests before this one may have grown it)
    const m0 = (await request(url(), "GET", "/metrics")).text
    expect(m0).toContain("# TYPE watch_cache_capacity gauge")
    expect(m0).toMatch(/^watch_cache_capacity\{group="",resource="configmaps"\} [1-9]\d{2,}$/m)
    expect((await request(url(), "GET", "/api")).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] })
    const core = await request(url(), "GET", "/api/v1")
    // the resources and their subresources, as kube-apiserver lists them
    expect(core.body.resources.map((r: any) => r.name)).toEqual([
      "configmaps",
      "events",
      "namespaces",
      "namespaces/finalize",
      "namespaces/status",
      "secrets"
    ])
    expect(core.body.resources[0].verbs).toEqual([
      "create",
      "delete",
      "deletecollection",
      "get",
      "list",
      "patch",
      "update",
      "watch"
    ])
    expect((await request(url(), "GET", "/apis/apiextensions.k8s.io")).body).toMatchObject({
      kind: "APIGroup",
      name: "apiextensions.k8s.io"
    })
    expect((await request(url(), "GET", "/version")).body).toMatchObject({ major: "1", minor: "34" })
    for (const p of ["/healthz", "/livez", "/readyz"]) expect((await request(url(), "GET", p)).text).toBe("ok")
    // this test's own create: the request counter has it when the response is sent
    const ns = await newNamespace(url())
    const created = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("m"))
    expect(created.status).toBe(201)
    const m = (await request(url(), "GET", "/metrics")).text
    expect(m).toMatch(
      /^apiserver_request_total\{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1"\} \d+$/m
    )
    expect(m).toContain("# TYPE apiserver_longrunning_requests gauge")
    expect(m).toContain("# TYPE apiserver_watch_events_total counter")
    // the watch cache's own: a list served from the cache counts, the cache's events are counted
    // (the reflector counts the create's event after the write answered: wait for it)
    await request(url(), "GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0")
    let m2 = ""
    await until(async () => {
      m2 = (await request(url(), "GET", "/metrics")).text
      return /^apiserver_watch_cache_events_received_total\{group="",resource="configmaps"\} [1-9]\d*$/m.test(m2)
    })
    expect(m2).toMatch(/^apiserver_cache_list_total\{resource_prefix="\/configmaps\/",index=""\} [1-9]\d*$/m)
  })
})

describe("apiserver: restart and encryption", () => {
  it("CRDs and objects live in etcd: after a restart the CRD's resource is served again with its objects", async () => {
    const etcd = await startInProcess()
    try {
      const s1 = await startApiServer({ etcdServers: [etcd.endpoint] })
      await request(s1.url, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD())
      await until(
        async () => (await request(s1.url, "GET", "/apis/example.com/v1/namespaces/default/widgets")).status === 200
      )
      await request(s1.url, "POST", "/apis/example.com/v1/namespaces/default/widgets", {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w" },
        spec: {}
      })
      await s1.close()
      const s2 = await startApiServer({ etcdServers: [etcd.endpoint] })
      try {
        const r = await request(s2.url, "GET", "/apis/example.com/v1/namespaces/default/widgets/w")
        expect(r.status).toBe(200)
        expect(r.body.metadata.name).toBe("w")
      } finally {
        await s2.close()
      }
    } finally {
      await etcd.close()
    }
  }, 30_000)

  it("--encryption-provider-config: Secrets are stored encrypted under /registry/secrets/<ns>/<name>, served in the clear", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "apiserver-enc-"))
    const file = path.join(dir, "enc.yaml")
    fs.writeFileSync(
      file,
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ${Buffer.alloc(32, 7).toString("base64")}
      - identity: {}
`
    )
    const s = await startApiServer({ encryptionProviderConfig: file })
    try {
      await request(s.url, "POST", "/api/v1/namespaces/default/secrets", {
        metadata: { name: "pw" },
        data: { p: "aHVudGVyMg==" }
      })
      await request(s.url, "POST", "/api/v1/namespaces/default/configmaps", configMap("plain", { p: "hunter2" }))
      const raw = await Effect.runPromise(s.running.client.kv.get("/registry/secrets/default/pw"))
      expect(Buffer.from(raw.kvs[0]!.value).toString("latin1").startsWith("k8s:enc:aesgcm:v1:key1:")).toBe(true)
      const cm = await Effect.runPromise(s.running.client.kv.get("/registry/configmaps/default/plain"))
      expect(JSON.parse(Buffer.from(cm.kvs[0]!.value).toString()).data).toEqual({ p: "hunter2" })
      expect((await request(s.url, "GET", "/api/v1/namespaces/default/secrets/pw")).body.data).toEqual({
        p: "aHVudGVyMg=="
      })
    } finally {
      await s.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
