/**
 * Namespace lifecycle over HTTP: DELETE marks a namespace Terminating (deletionTimestamp, the
 * `kubernetes` finalizer still in spec.finalizers) and answers with it; creates into it are
 * refused with NamespaceLifecycle's 403; the namespace controller then removes its content (of
 * every namespaced resource, custom ones too) and the namespace; default, kube-system and
 * kube-public may not be deleted; /finalize and /status as the apiserver serves them.
 */
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { configMap, newNamespace, onApiServer, request, widgetCRD } from "./support.js"

const until = async (f: () => Promise<boolean>, ms = 20_000): Promise<void> => {
  const t = Date.now()
  while (!(await f())) {
    if (Date.now() - t > ms) throw new Error(`not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe("apiserver: namespace lifecycle (namespace controller after 0 s)", () => {
  const server = onApiServer({ namespaceDeletionDelay: Duration.zero })
  const url = () => server().url

  it("DELETE: Terminating at once, creates refused with the 403, then content and namespace removed in the background", async () => {
    const crd = await request(
      url(),
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      widgetCRD({ plural: "nswidgets" })
    )
    expect(crd.status).toBe(201)
    await until(async () => (await request(url(), "GET", "/apis/example.com/v1/nswidgets")).status === 200)
    const ns = await newNamespace(url())
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))
    // held until the 403s are checked (the controller works at once here)
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "hold", finalizers: ["example.com/hold"] }
    })
    await request(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: "s" },
      stringData: { a: "b" }
    })
    const w = await request(url(), "POST", `/apis/example.com/v1/namespaces/${ns}/nswidgets`, {
      apiVersion: "example.com/v1",
      kind: "Nswidget",
      metadata: { name: "w" }
    })
    expect(w.status).toBe(201)
    const d = await request(url(), "DELETE", `/api/v1/namespaces/${ns}`)
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({
      kind: "Namespace",
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Terminating" }
    })
    expect(d.body.metadata.deletionTimestamp).toMatch(/Z$/)
    const refused = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("late"))
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
      reason: "Forbidden",
      details: {
        name: "late",
        kind: "configmaps",
        causes: [
          {
            reason: "NamespaceTerminating",
            message: `namespace ${ns} is being terminated`,
            field: "metadata.namespace"
          }
        ]
      },
      code: 403
    })
    const gen = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { generateName: "g-" }
    })
    expect(gen.body.message).toBe(
      `configmaps "g-" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`
    )
    await until(async () =>
      (await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)).body.items.every(
        (i: any) => i.metadata.name === "hold"
      )
    )
    expect((await request(url(), "GET", `/api/v1/namespaces/${ns}`)).body.status.phase).toBe("Terminating")
    await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/hold`,
      { metadata: { finalizers: null } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    await until(async () => (await request(url(), "GET", `/api/v1/namespaces/${ns}`)).status === 404)
    for (const p of [
      `/api/v1/namespaces/${ns}/configmaps`,
      `/api/v1/namespaces/${ns}/secrets`,
      `/apis/example.com/v1/namespaces/${ns}/nswidgets`
    ]) {
      expect((await request(url(), "GET", p)).body.items).toEqual([])
    }
    // and a create into a namespace that does not exist is its 404
    const gone = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("x"))
    expect(gone.status).toBe(404)
    expect(gone.body.message).toBe(`namespaces "${ns}" not found`)
  })

  it("default, kube-system and kube-public may not be deleted (403, dry run too); kube-node-lease may", async () => {
    for (const name of ["default", "kube-system", "kube-public"]) {
      for (const q of ["", "?dryRun=All"]) {
        const r = await request(url(), "DELETE", `/api/v1/namespaces/${name}${q}`)
        expect(r.status).toBe(403)
        expect(r.body).toMatchObject({
          reason: "Forbidden",
          message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
          details: { name, kind: "namespaces" }
        })
      }
      expect((await request(url(), "GET", `/api/v1/namespaces/${name}`)).body.status.phase).toBe("Active")
    }
    const lease = await request(url(), "DELETE", "/api/v1/namespaces/kube-node-lease?dryRun=All")
    expect(lease.body.status.phase).toBe("Terminating")
  })
})

describe("apiserver: namespace lifecycle (no controller pass for an hour)", () => {
  const server = onApiServer({ namespaceDeletionDelay: Duration.hours(1) })
  const url = () => server().url

  it("the main resource keeps spec.finalizers and status; /status checks the phase; /finalize removes the namespace when it empties its finalizers", async () => {
    const ns = await newNamespace(url())
    const created = (await request(url(), "GET", `/api/v1/namespaces/${ns}`)).body
    expect(created.metadata.labels).toEqual({ "kubernetes.io/metadata.name": ns })
    const put = await request(url(), "PUT", `/api/v1/namespaces/${ns}`, {
      ...created,
      spec: { finalizers: [] },
      status: { phase: "Terminating" },
      metadata: { ...created.metadata, labels: { ...created.metadata.labels, x: "y" } }
    })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
      metadata: { labels: { x: "y" } }
    })
    const badStatus = await request(url(), "PUT", `/api/v1/namespaces/${ns}/status`, {
      ...put.body,
      status: { phase: "Terminating" }
    })
    expect(badStatus.status).toBe(422)
    expect(badStatus.body.message).toBe(
      `Namespace "${ns}" is invalid: status.Phase: Invalid value: "Terminating": may only be 'Active' if \`deletionTimestamp\` is empty`
    )
    expect((await request(url(), "GET", `/api/v1/namespaces/${ns}/status`)).body.metadata.name).toBe(ns)
    const d = (await request(url(), "DELETE", `/api/v1/namespaces/${ns}`)).body
    // a second DELETE while spec.finalizers is not empty: the namespace unchanged
    const again = await request(url(), "DELETE", `/api/v1/namespaces/${ns}`)
    expect(again.body).toEqual(d)
    const fin = await request(url(), "PUT", `/api/v1/namespaces/${ns}/finalize`, { ...d, spec: { finalizers: [] } })
    expect(fin.status).toBe(200)
    expect(fin.body.spec.finalizers).toEqual([])
    expect((await request(url(), "GET", `/api/v1/namespaces/${ns}`)).status).toBe(404)
  })
})
