/**
 * Events over HTTP in both groups, one storage: core/v1 `events` and events.k8s.io/v1 `events`
 * (discovery with shortName ev, the field mapping between them, each version's validation texts,
 * dryRun, watches that see the other group's writes, field selectors, the printer's columns) and
 * the event TTL: every write puts the etcd key on a lease of --event-ttl plus the reuse window.
 */
import { Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { newNamespace, onApiServer, request, startApiServer, watch } from "./support.js"

const server = onApiServer({ eventTTL: Duration.seconds(200) })
const url = () => server().url
const core = (ns: string) => `/api/v1/namespaces/${ns}/events`
const v1 = (ns: string) => `/apis/events.k8s.io/v1/namespaces/${ns}/events`
const merge = { "content-type": "application/merge-patch+json" }

const legacyEvent = (ns: string, name: string) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: ns },
  involvedObject: { kind: "ConfigMap", namespace: ns, name: "cm", apiVersion: "v1" },
  reason: "Created",
  message: "  made it  ",
  source: { component: "tester", host: "node-1" },
  firstTimestamp: "2026-01-02T03:04:05Z",
  lastTimestamp: "2026-01-02T03:04:06Z",
  count: 3,
  type: "Normal"
})

const newEvent = (ns: string, name: string) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2026-01-02T03:04:05.123456Z",
  reportingController: "example.com/tester",
  reportingInstance: "tester-1",
  action: "Reconcile",
  reason: "Synced",
  regarding: { kind: "ConfigMap", namespace: ns, name: "cm", apiVersion: "v1" },
  note: "all good",
  type: "Normal"
})

describe("Events", () => {
  it("are in discovery in both groups, shortName ev", async () => {
    const api = await request(url(), "GET", "/api/v1")
    expect(api.body.resources).toContainEqual(
      expect.objectContaining({ name: "events", kind: "Event", namespaced: true, shortNames: ["ev"] })
    )
    const group = await request(url(), "GET", "/apis/events.k8s.io")
    expect(group.body.preferredVersion).toEqual({ groupVersion: "events.k8s.io/v1", version: "v1" })
    const list = await request(url(), "GET", "/apis/events.k8s.io/v1")
    expect(list.body.resources).toEqual([
      expect.objectContaining({ name: "events", singularName: "event", kind: "Event", shortNames: ["ev"] })
    ])
  })

  it("a core/v1 Event reads through events.k8s.io/v1 with the fields renamed, and back", async () => {
    const ns = await newNamespace(url(), "ev")
    const c = await request(url(), "POST", core(ns), legacyEvent(ns, "a"))
    expect(c.status).toBe(201)
    const g = await request(url(), "GET", `${v1(ns)}/a`)
    expect(g.status).toBe(200)
    const { involvedObject, message, source, firstTimestamp, lastTimestamp, count, apiVersion: _a, ...same } = c.body
    expect(g.body).toEqual({
      ...same,
      apiVersion: "events.k8s.io/v1",
      regarding: involvedObject,
      note: message,
      deprecatedSource: source,
      deprecatedFirstTimestamp: firstTimestamp,
      deprecatedLastTimestamp: lastTimestamp,
      deprecatedCount: count
    })
    // the two groups' lists hold the same objects
    const l = await request(url(), "GET", v1(ns))
    expect(l.body).toMatchObject({ kind: "EventList", apiVersion: "events.k8s.io/v1" })
    expect(l.body.items).toEqual([g.body])
    // an events.k8s.io/v1 Event reads through core/v1
    const n = await request(url(), "POST", v1(ns), newEvent(ns, "b"))
    expect(n.status).toBe(201)
    const back = await request(url(), "GET", `${core(ns)}/b`)
    expect(back.body).toMatchObject({
      apiVersion: "v1",
      involvedObject: { kind: "ConfigMap", name: "cm" },
      message: "all good",
      reportingComponent: "example.com/tester",
      reportingInstance: "tester-1",
      eventTime: "2026-01-02T03:04:05.123456Z"
    })
    expect(back.body.note).toBeUndefined()
    // updates through either group; stored once, under /registry/events
    const p = await request(url(), "PATCH", `${v1(ns)}/a`, { metadata: { labels: { k: "v" } } }, merge)
    expect(p.status).toBe(200)
    expect((await request(url(), "GET", `${core(ns)}/a`)).body.metadata.labels).toEqual({ k: "v" })
    const kv = await Effect.runPromise(server().running.client.kv.get(`/registry/events/${ns}/a`))
    expect(JSON.parse(Buffer.from(kv.kvs[0]!.value).toString())).toMatchObject({
      apiVersion: "v1",
      message: "  made it  "
    })
    const d = await request(url(), "DELETE", `${v1(ns)}/a`)
    expect(d.body).toMatchObject({ status: "Success", details: { name: "a", group: "events.k8s.io", kind: "events" } })
    expect((await request(url(), "GET", `${core(ns)}/a`)).status).toBe(404)
  })

  it("core/v1 validation: the legacy rules only (namespace of the involved object, reportingComponent)", async () => {
    const ns = await newNamespace(url(), "ev")
    const bad = { ...legacyEvent(ns, "a"), involvedObject: { kind: "Pod", namespace: "other", name: "p" } }
    const r = await request(url(), "POST", core(ns), bad)
    expect(r.status).toBe(422)
    expect(r.body.message).toBe(
      'Event "a" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    )
    // with an eventTime, the reporting fields are required; core/v1 names the controller reportingComponent
    const timed = { ...legacyEvent(ns, "b"), eventTime: "2026-01-02T03:04:05.000000Z" }
    const t = await request(url(), "POST", core(ns), timed)
    expect(t.status).toBe(422)
    expect(t.body.details.causes.map((c: any) => `${c.field}: ${c.message}`)).toEqual([
      "reportingComponent: Required value",
      'reportingComponent: Invalid value: "": name part must be non-empty',
      "reportingComponent: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "reportingInstance: Required value",
      "action: Required value"
    ])
    // and a legacy Event is not held to events.k8s.io's rules (a name that is no DNS subdomain is fine)
    const odd = await request(url(), "POST", core(ns), legacyEvent(ns, "Upper.Case_name"))
    expect(odd.status).toBe(201)
    expect((await request(url(), "GET", core(ns))).body.items.map((i: any) => i.metadata.name)).toEqual([
      "Upper.Case_name"
    ])
  })

  it("events.k8s.io/v1 validation: eventTime, type, the deprecated fields unset, series, lengths; immutable fields on update", async () => {
    const ns = await newNamespace(url(), "ev")
    const e = newEvent(ns, "a")
    const r = await request(url(), "POST", v1(ns), {
      ...e,
      eventTime: undefined,
      type: "Odd",
      deprecatedCount: 2,
      deprecatedSource: { component: "x" },
      series: { count: 1 }
    })
    expect(r.status).toBe(422)
    // without an eventTime the legacy rules check only the namespaces
    expect(r.body.message).toBe(
      'Event.events.k8s.io "a" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: "": has invalid value: Odd, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]'
    )
    const long = await request(url(), "POST", v1(ns), {
      ...e,
      action: "a".repeat(129),
      reportingController: "Not Qualified",
      reportingInstance: "",
      note: "n".repeat(1025)
    })
    expect(long.body.details.causes.map((c: any) => `${c.field}: ${c.message}`)).toEqual([
      "reportingController: Invalid value: \"Not Qualified\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "reportingInstance: Required value",
      'action: Invalid value: "": can have at most 128 characters',
      'message: Invalid value: "": can have at most 1024 characters'
    ])
    const name = await request(url(), "POST", v1(ns), newEvent(ns, "Bad_Name"))
    expect(name.status).toBe(422)
    expect(name.body.message).toContain(
      'Event.events.k8s.io "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"'
    )
    expect((await request(url(), "GET", v1(ns))).body.items).toEqual([])
    const ok = await request(url(), "POST", v1(ns), e)
    expect(ok.status).toBe(201)
    const u = await request(url(), "PATCH", `${v1(ns)}/a`, { note: "changed", reason: "Other" }, merge)
    expect(u.status).toBe(422)
    expect(u.body.message).toBe(
      'Event.events.k8s.io "a" is invalid: [reason: Invalid value: "Other": field is immutable, message: Invalid value: "changed": field is immutable]'
    )
    // ValidateEventUpdate checks reason twice: the message drops the duplicate, the causes keep it
    expect(u.body.details.causes.map((c: any) => c.field)).toEqual(["reason", "message", "reason"])
    // a struct prints as json.Marshal of the internal type: Go's field names, in declaration order
    const r2 = await request(url(), "PATCH", `${v1(ns)}/a`, { regarding: { fieldPath: "spec" } }, merge)
    expect(r2.body.message).toBe(
      `Event.events.k8s.io "a" is invalid: involvedObject: Invalid value: {"Kind":"ConfigMap","Namespace":"${ns}","Name":"cm","UID":"","APIVersion":"v1","ResourceVersion":"","FieldPath":"spec"}: field is immutable`
    )
    // a series may be added
    const s = await request(
      url(),
      "PATCH",
      `${v1(ns)}/a`,
      { series: { count: 2, lastObservedTime: "2026-01-02T03:05:00.000000Z" } },
      merge
    )
    expect(s.status).toBe(200)
    // the same change through core/v1 is not held to the strict rules
    const legacy = await request(url(), "PATCH", `${core(ns)}/a`, { message: "changed" }, merge)
    expect(legacy.status).toBe(200)
    expect((await request(url(), "GET", `${v1(ns)}/a`)).body.note).toBe("changed")
  })

  it("dryRun=All in both groups stores nothing", async () => {
    const ns = await newNamespace(url(), "ev")
    expect((await request(url(), "POST", `${v1(ns)}?dryRun=All`, newEvent(ns, "a"))).status).toBe(201)
    expect((await request(url(), "POST", `${core(ns)}?dryRun=All`, legacyEvent(ns, "b"))).status).toBe(201)
    expect((await request(url(), "GET", core(ns))).body.items).toEqual([])
    await request(url(), "POST", v1(ns), newEvent(ns, "a"))
    const d = await request(url(), "DELETE", `${core(ns)}/a?dryRun=All`)
    expect(d.status).toBe(200)
    expect((await request(url(), "GET", `${v1(ns)}/a`)).status).toBe(200)
  })

  it("deletion adds no garbage-collection finalizer (the event strategy's policy is Unsupported)", async () => {
    const ns = await newNamespace(url(), "ev")
    await request(url(), "POST", core(ns), legacyEvent(ns, "a"))
    const d = await request(url(), "DELETE", `${core(ns)}/a`, { propagationPolicy: "Orphan" })
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({ kind: "Status", status: "Success" })
    expect((await request(url(), "GET", `${core(ns)}/a`)).status).toBe(404)
    // a ConfigMap deleted the same way keeps its orphan finalizer (the contrast)
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "cm" } })
    const cm = await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/cm`, { propagationPolicy: "Orphan" })
    expect(cm.body.metadata.finalizers).toEqual(["orphan"])
  })

  it("each group's watch sees the other group's writes in its own shape", async () => {
    const ns = await newNamespace(url(), "ev")
    const wc = watch(url(), `${core(ns)}?watch=1`)
    const wv = watch(url(), `${v1(ns)}?watch=1`)
    try {
      await Promise.all([wc.response, wv.response])
      await request(url(), "POST", v1(ns), newEvent(ns, "a"))
      await request(url(), "POST", core(ns), legacyEvent(ns, "b"))
      await request(url(), "DELETE", `${core(ns)}/a`)
      const [c, v] = await Promise.all([wc.waitFor(3), wv.waitFor(3)])
      expect(c.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.message])).toEqual([
        ["ADDED", "v1", "a", "all good"],
        ["ADDED", "v1", "b", "  made it  "],
        ["DELETED", "v1", "a", "all good"]
      ])
      expect(v.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.note])).toEqual([
        ["ADDED", "events.k8s.io/v1", "a", "all good"],
        ["ADDED", "events.k8s.io/v1", "b", "  made it  "],
        ["DELETED", "events.k8s.io/v1", "a", "all good"]
      ])
    } finally {
      wc.close()
      wv.close()
    }
  })

  it("field selectors: involvedObject.* on core/v1, regarding.* on events.k8s.io/v1, each group's unsupported label refused", async () => {
    const ns = await newNamespace(url(), "ev")
    await request(url(), "POST", core(ns), legacyEvent(ns, "a"))
    await request(url(), "POST", core(ns), {
      ...legacyEvent(ns, "b"),
      involvedObject: { kind: "Pod", namespace: ns, name: "p" }
    })
    const names = (r: { body: any }) => r.body.items.map((i: any) => i.metadata.name)
    expect(names(await request(url(), "GET", `${core(ns)}?fieldSelector=involvedObject.name%3Dp`))).toEqual(["b"])
    expect(names(await request(url(), "GET", `${v1(ns)}?fieldSelector=regarding.kind%3DConfigMap`))).toEqual(["a"])
    expect(names(await request(url(), "GET", `${core(ns)}?fieldSelector=source%3Dtester`))).toEqual(["a", "b"])
    const bad = await request(url(), "GET", `${v1(ns)}?fieldSelector=involvedObject.name%3Dp`)
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe("field label not supported: involvedObject.name")
  })

  it("the Table: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE and the wide columns, NAME last", async () => {
    const ns = await newNamespace(url(), "ev")
    await request(url(), "POST", core(ns), legacyEvent(ns, "a"))
    for (const path of [core(ns), v1(ns)]) {
      const t = await request(url(), "GET", path, undefined, { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" })
      expect(t.body.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([
        ["Last Seen", 0],
        ["Type", 0],
        ["Reason", 0],
        ["Object", 0],
        ["Subobject", 1],
        ["Source", 1],
        ["Message", 0],
        ["First Seen", 1],
        ["Count", 1],
        ["Name", 1]
      ])
      const cells = t.body.rows[0].cells
      expect(cells.slice(1)).toEqual([
        "Normal",
        "Created",
        "configmap/cm",
        "",
        "tester, node-1",
        "made it",
        cells[7],
        3,
        "a"
      ])
      expect(cells[0]).toMatch(/^\d+[dy]/)
    }
  })

  it("every write puts the key on an etcd lease of --event-ttl plus the reuse window (5%, at most 60 s)", async () => {
    // its own apiserver: the test revokes the lease the events share, which the shared server's
    // lease manager would go on reusing (as kube-apiserver's: its cache knows only its own grants)
    const own = await startApiServer({ eventTTL: Duration.seconds(200) })
    const url = () => own.url
    const leaseOfKey = async (key: string) => {
      const r = await Effect.runPromise(own.running.client.kv.get(key))
      return r.kvs[0]?.lease ?? 0n
    }
    try {
      const ns = await newNamespace(url(), "ev")
      await request(url(), "POST", core(ns), legacyEvent(ns, "a"))
      const id = await leaseOfKey(`/registry/events/${ns}/a`)
      expect(id).not.toBe(0n)
      const ttl = await Effect.runPromise(own.running.client.lease.timeToLive(id))
      // --event-ttl=200s: granted 200 + min(5% of 200, 60) = 210
      expect(ttl.grantedTtl).toBe(210n)
      // a second event within the window shares the lease (lease_manager.go)
      await request(url(), "POST", v1(ns), newEvent(ns, "b"))
      expect(await leaseOfKey(`/registry/events/${ns}/b`)).toBe(id)
      // an update writes the TTL again (the Store's TTLFunc runs on update too)
      await request(url(), "PATCH", `${core(ns)}/a`, { metadata: { labels: { x: "y" } } }, merge)
      expect(await leaseOfKey(`/registry/events/${ns}/a`)).not.toBe(0n)
      // revoking the lease (etcd's expiry) removes the events; watchers see DELETED
      const w = watch(url(), `${core(ns)}?watch=1&resourceVersion=0`)
      try {
        await w.waitFor(2)
        await Effect.runPromise(own.running.client.lease.revoke(await leaseOfKey(`/registry/events/${ns}/a`)))
        const events = await w.waitFor(3)
        expect(events.slice(2).map((e) => [e.type, e.object.metadata.name])).toEqual([["DELETED", "a"]])
      } finally {
        w.close()
      }
    } finally {
      await own.close()
    }
  })
})
