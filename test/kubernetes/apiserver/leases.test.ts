/**
 * coordination.k8s.io/v1 Leases over HTTP: discovery, create/get/list/update/patch/delete, the
 * MicroTime form (six fraction digits, UTC), ValidateLease's texts, dryRun, a watch through the
 * Cacher, the printer's HOLDER column, and no TTL on the etcd key.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { newNamespace, onApiServer, request, watch } from "./support.js"

const server = onApiServer()
const url = () => server().url
const leases = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`

const lease = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec
})

describe("Leases", () => {
  it("are in discovery: /apis, the group, the resource list", async () => {
    const groups = await request(url(), "GET", "/apis")
    expect(groups.body.groups).toContainEqual({
      name: "coordination.k8s.io",
      versions: [{ groupVersion: "coordination.k8s.io/v1", version: "v1" }],
      preferredVersion: { groupVersion: "coordination.k8s.io/v1", version: "v1" }
    })
    const group = await request(url(), "GET", "/apis/coordination.k8s.io")
    expect(group.body).toMatchObject({ kind: "APIGroup", name: "coordination.k8s.io" })
    const list = await request(url(), "GET", "/apis/coordination.k8s.io/v1")
    expect(list.body.resources).toEqual([
      expect.objectContaining({ name: "leases", singularName: "lease", namespaced: true, kind: "Lease" })
    ])
    expect(list.body.resources[0].shortNames).toBeUndefined()
  })

  it("create, get, list, update, merge patch, delete; MicroTime as six fraction digits in UTC", async () => {
    const ns = await newNamespace(url(), "lease")
    const c = await request(
      url(),
      "POST",
      leases(ns),
      lease("a", {
        holderIdentity: "one",
        leaseDurationSeconds: 15,
        acquireTime: "2026-01-02T03:04:05.123456Z",
        renewTime: "2026-01-02T05:04:05.000001+02:00",
        leaseTransitions: 0
      })
    )
    expect(c.status).toBe(201)
    expect(c.body.spec).toEqual({
      holderIdentity: "one",
      leaseDurationSeconds: 15,
      acquireTime: "2026-01-02T03:04:05.123456Z",
      renewTime: "2026-01-02T03:04:05.000001Z",
      leaseTransitions: 0
    })
    const g = await request(url(), "GET", `${leases(ns)}/a`)
    expect(g.body).toEqual(c.body)
    const u = await request(url(), "PUT", `${leases(ns)}/a`, {
      ...g.body,
      spec: { ...g.body.spec, holderIdentity: "two", leaseTransitions: 1 }
    })
    expect(u.status).toBe(200)
    expect(u.body.spec.holderIdentity).toBe("two")
    const p = await request(
      url(),
      "PATCH",
      `${leases(ns)}/a`,
      { spec: { renewTime: "2026-01-02T03:04:06.500000Z" } },
      { "content-type": "application/merge-patch+json" }
    )
    expect(p.status).toBe(200)
    expect(p.body.spec.renewTime).toBe("2026-01-02T03:04:06.500000Z")
    const l = await request(url(), "GET", leases(ns))
    expect(l.body.kind).toBe("LeaseList")
    expect(l.body.items.map((i: any) => i.spec.holderIdentity)).toEqual(["two"])
    const d = await request(url(), "DELETE", `${leases(ns)}/a`)
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "a", group: "coordination.k8s.io", kind: "leases" }
    })
    expect((await request(url(), "GET", `${leases(ns)}/a`)).status).toBe(404)
  })

  it("a MicroTime without six fraction digits is refused with time.Parse's text", async () => {
    const ns = await newNamespace(url(), "lease")
    const r = await request(url(), "POST", leases(ns), lease("a", { renewTime: "2026-01-02T03:04:05Z" }))
    expect(r.status).toBe(400)
    expect(r.body.message).toContain(
      'parsing time "2026-01-02T03:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
    )
    expect((await request(url(), "GET", `${leases(ns)}/a`)).status).toBe(404)
  })

  it("ValidateLeaseSpec's texts (422), nothing stored", async () => {
    const ns = await newNamespace(url(), "lease")
    const r = await request(
      url(),
      "POST",
      leases(ns),
      lease("a", { leaseDurationSeconds: 0, leaseTransitions: -1, preferredHolder: "x" })
    )
    expect(r.status).toBe(422)
    expect(r.body.message).toBe(
      'Lease.coordination.k8s.io "a" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0, spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined]'
    )
    expect(r.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: 0: must be greater than 0",
        field: "spec.leaseDurationSeconds"
      },
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: -1: must be greater than or equal to 0",
        field: "spec.leaseTransitions"
      },
      {
        reason: "FieldValueForbidden",
        message: "Forbidden: may only be specified if `strategy` is defined",
        field: "spec.preferredHolder"
      }
    ])
    const s = await request(url(), "POST", leases(ns), lease("b", { strategy: "Newest" }))
    expect(s.body.message).toBe(
      'Lease.coordination.k8s.io "b" is invalid: spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'
    )
    const n = await request(url(), "POST", leases(ns), lease("Bad_Name"))
    expect(n.status).toBe(422)
    expect(n.body.message).toContain(
      'Lease.coordination.k8s.io "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"'
    )
    expect((await request(url(), "GET", leases(ns))).body.items).toEqual([])
    // the same rules on update
    await request(url(), "POST", leases(ns), lease("c", { leaseDurationSeconds: 10 }))
    const u = await request(
      url(),
      "PATCH",
      `${leases(ns)}/c`,
      { spec: { leaseDurationSeconds: -5 } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(u.status).toBe(422)
    expect(u.body.message).toBe(
      'Lease.coordination.k8s.io "c" is invalid: spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0'
    )
    expect((await request(url(), "GET", `${leases(ns)}/c`)).body.spec.leaseDurationSeconds).toBe(10)
  })

  it("dryRun=All: create and update answer as the real ones and store nothing", async () => {
    const ns = await newNamespace(url(), "lease")
    const c = await request(url(), "POST", `${leases(ns)}?dryRun=All`, lease("a", { holderIdentity: "x" }))
    expect(c.status).toBe(201)
    expect(c.body.metadata.resourceVersion).toBeUndefined()
    expect((await request(url(), "GET", `${leases(ns)}/a`)).status).toBe(404)
    const real = await request(url(), "POST", leases(ns), lease("a", { holderIdentity: "x" }))
    const u = await request(url(), "PUT", `${leases(ns)}/a?dryRun=All`, { ...real.body, spec: { holderIdentity: "y" } })
    expect(u.status).toBe(200)
    expect(u.body.spec.holderIdentity).toBe("y")
    expect((await request(url(), "GET", `${leases(ns)}/a`)).body).toEqual(real.body)
  })

  it("a watch through the watch cache sees ADDED, MODIFIED, DELETED", async () => {
    const ns = await newNamespace(url(), "lease")
    const first = await request(url(), "POST", leases(ns), lease("a", { holderIdentity: "x" }))
    const w = watch(url(), `${leases(ns)}?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`)
    try {
      await w.response
      await request(url(), "PUT", `${leases(ns)}/a`, { ...first.body, spec: { holderIdentity: "y" } })
      await request(url(), "DELETE", `${leases(ns)}/a`)
      const events = await w.waitFor(2)
      expect(events.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.spec.holderIdentity])).toEqual([
        ["MODIFIED", "Lease", "coordination.k8s.io/v1", "y"],
        ["DELETED", "Lease", "coordination.k8s.io/v1", "y"]
      ])
    } finally {
      w.close()
    }
  })

  it("the Table has NAME, HOLDER, AGE; the etcd key has no lease", async () => {
    const ns = await newNamespace(url(), "lease")
    await request(url(), "POST", leases(ns), lease("a", { holderIdentity: "holder-1" }))
    const t = await request(url(), "GET", leases(ns), undefined, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io"
    })
    expect(t.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Holder", "Age"])
    expect(t.body.rows[0].cells.slice(0, 2)).toEqual(["a", "holder-1"])
    const kv = await Effect.runPromise(server().running.client.kv.get(`/registry/leases/${ns}/a`))
    expect(kv.kvs[0]!.lease).toBe(0n)
  })
})
