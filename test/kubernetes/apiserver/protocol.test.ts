/**
 * The apiserver's HTTP list/watch protocol (k8s.io/apiserver's endpoints), over real HTTP: boolean parsing, the
 * 422 ListOptions validation, list/watch resourceVersion semantics, NDJSON framing and headers,
 * the ERROR event shape (410 after the cache's window), paging, selectors.
 */
import { describe, expect, it } from "vitest"
import { compactWith } from "../../../src/kubernetes/storage/etcd3/compact.js"
import { Effect } from "effect"
import { configMap, newNamespace, onApiServer, request, startApiServer, watch } from "./support.js"

describe("apiserver: HTTP list/watch protocol", () => {
  const server = onApiServer()
  const url = () => server().url

  it("watch: chunked NDJSON, JSON content type, headers before the first event, one {type,object} per line", async () => {
    const ns = await newNamespace(url())
    const list = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)
    const w = watch(
      url(),
      `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`
    )
    const res = await w.response
    // the headers arrive although no event has been sent yet
    expect(res.statusCode).toBe(200)
    expect(res.headers["content-type"]).toBe("application/json")
    expect(res.headers["transfer-encoding"]).toBe("chunked")
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a", { x: "1" }))
    await request(url(), "PUT", `/api/v1/namespaces/${ns}/configmaps/a`, configMap("a", { x: "2" }))
    await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/a`)
    const events = await w.waitFor(3)
    w.close()
    expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"])
    // no kind on the event line, the object carries its own TypeMeta
    for (const line of w.raw.trim().split("\n")) {
      const e = JSON.parse(line)
      expect(Object.keys(e)).toEqual(["type", "object"])
      expect(e.object.kind).toBe("ConfigMap")
      expect(e.object.apiVersion).toBe("v1")
    }
    expect(w.raw.endsWith("\n")).toBe(true)
    // DELETED carries the deletion's RV, newer than the MODIFIED one
    expect(BigInt(events[2].object.metadata.resourceVersion)).toBeGreaterThan(
      BigInt(events[1].object.metadata.resourceVersion)
    )
    expect(events[2].object.data).toEqual({ x: "2" })
  })

  it("booleans: 0/false (any case) are false, anything else — even empty — is true", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))
    for (const v of ["0", "false", "FALSE", "False"]) {
      const r = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?watch=${v}`)
      expect(r.status).toBe(200)
      expect(r.body.kind).toBe("ConfigMapList")
    }
    await Promise.all(
      ["", "1", "true", "yes", "anything"].map(async (v) => {
        const w = watch(url(), `/api/v1/namespaces/${ns}/configmaps?watch=${v}&timeoutSeconds=1`)
        await w.ended
        // a watch (RV unset: the initial ADDED events)
        expect(w.events[0].type).toBe("ADDED")
      })
    )
    // allowWatchBookmarks= (empty) is true: an RV "" watch-list ends its initial events with the annotated bookmark
    const w = watch(url(), `/api/v1/namespaces/${ns}/configmaps?watch=1&allowWatchBookmarks=&timeoutSeconds=1`)
    await w.ended
    expect(w.events.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK"])
    expect(w.events[1].object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" })
    expect(w.events[1].object.kind).toBe("ConfigMap")
    const w0 = watch(url(), `/api/v1/namespaces/${ns}/configmaps?watch=1&allowWatchBookmarks=false&timeoutSeconds=1`)
    await w0.ended
    expect(w0.events.map((e) => e.type)).toEqual(["ADDED"])
  })

  it("422 ListOptions validation, with the apiserver's messages", async () => {
    const base = "/api/v1/namespaces/default/configmaps"
    const cases: Array<[string, string]> = [
      [
        "?resourceVersionMatch=NotOlderThan",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'
      ],
      [
        "?resourceVersion=0&resourceVersionMatch=Exact",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
      ],
      [
        "?resourceVersion=1&resourceVersionMatch=Bogus",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""'
      ],
      [
        "?sendInitialEvents=true",
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'
      ],
      [
        "?watch=1&sendInitialEvents=true",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'
      ],
      [
        "?watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'
      ],
      [
        "?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact",
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]'
      ]
    ]
    for (const [q, message] of cases) {
      const r = await request(url(), "GET", base + q)
      expect(r.status, q).toBe(422)
      expect(r.body).toMatchObject({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        reason: "Invalid",
        code: 422,
        message
      })
      expect(r.body.details.kind).toBe("ListOptions")
      expect(r.body.details.group).toBe("meta.k8s.io")
    }
  })

  it("list RV semantics: unset is the latest, 0 any, N not older than N, Exact N at N, future N 504, paging keeps the list RV", async () => {
    const ns = await newNamespace(url())
    const created: Array<any> = []
    for (let i = 0; i < 5; i++)
      created.push((await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap(`c${i}`))).body)
    const rvAfter2 = created[2].metadata.resourceVersion
    const latest = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)
    expect(latest.body.items.map((o: any) => o.metadata.name)).toEqual(["c0", "c1", "c2", "c3", "c4"])
    expect(BigInt(latest.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(
      BigInt(created[4].metadata.resourceVersion)
    )
    const any = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?resourceVersion=0`)
    expect(any.status).toBe(200)
    const exact = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rvAfter2}&resourceVersionMatch=Exact`
    )
    expect(exact.status).toBe(200)
    expect(exact.body.metadata.resourceVersion).toBe(rvAfter2)
    expect(exact.body.items.map((o: any) => o.metadata.name)).toEqual(["c0", "c1", "c2"])
    const notOlder = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rvAfter2}&resourceVersionMatch=NotOlderThan`
    )
    expect(BigInt(notOlder.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(rvAfter2))
    expect(notOlder.body.items.length).toBe(5)
    // pages: limit 2, continue tokens, remainingItemCount, the same RV throughout
    const p1 = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?limit=2`)
    expect(p1.body.items.map((o: any) => o.metadata.name)).toEqual(["c0", "c1"])
    expect(p1.body.metadata.remainingItemCount).toBe(3)
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("c5"))
    const p2 = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`
    )
    expect(p2.body.items.map((o: any) => o.metadata.name)).toEqual(["c2", "c3"])
    expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion)
    const p3 = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?limit=2&continue=${encodeURIComponent(p2.body.metadata.continue)}`
    )
    expect(p3.body.items.map((o: any) => o.metadata.name)).toEqual(["c4"])
    expect(p3.body.metadata.continue).toBeUndefined()
    expect(p3.body.metadata.remainingItemCount).toBeUndefined()
    // continue with a specific RV: 400
    const bad = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?limit=2&resourceVersion=5&continue=${encodeURIComponent(p1.body.metadata.continue)}`
    )
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe("specifying resource version is not allowed when using continue")
    // a future RV: 504 Too large resource version, with Retry-After
    const future = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps?resourceVersion=99999999&resourceVersionMatch=NotOlderThan`
    )
    expect(future.status).toBe(504)
    expect(future.body.reason).toBe("Timeout")
    expect(future.body.message).toMatch(/^Timeout: Too large resource version: 99999999, current: \d+$/)
    expect(future.body.details.causes[0].reason).toBe("ResourceVersionTooLarge")
    expect(future.headers.get("retry-after")).toBe("1")
    // a bad RV: 400 from the list
    const badRv = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?resourceVersion=abc`)
    expect(badRv.status).toBe(400)
    expect(badRv.body.message).toBe(
      'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    )
  }, 30_000)

  it("watch RV semantics: N starts after N without initial events; 0 and unset (1.34 defaulting) give the state first", async () => {
    const ns = await newNamespace(url())
    const a = (await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))).body
    const b = (await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("b"))).body
    const fromA = watch(
      url(),
      `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${a.metadata.resourceVersion}&timeoutSeconds=1`
    )
    await fromA.ended
    expect(fromA.events.map((e) => [e.type, e.object.metadata.name])).toEqual([["ADDED", "b"]])
    expect(fromA.events[0].object.metadata.resourceVersion).toBe(b.metadata.resourceVersion)
    for (const rv of ["0", ""]) {
      const w = watch(
        url(),
        `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`
      )
      await w.ended
      expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ["ADDED", "a"],
        ["ADDED", "b"],
        ["BOOKMARK", undefined]
      ])
      expect(w.events[2].object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" })
    }
    // one object by name: the path's name is a field selector
    const one = watch(url(), `/api/v1/namespaces/${ns}/configmaps/a?watch=1&timeoutSeconds=1`)
    await one.ended
    expect(one.events.map((e) => e.object.metadata.name)).toEqual(["a"])
    const conflicting = await request(
      url(),
      "GET",
      `/api/v1/namespaces/${ns}/configmaps/a?watch=1&fieldSelector=metadata.name%3Db`
    )
    expect(conflicting.status).toBe(400)
    expect(conflicting.body.message).toBe("fieldSelector metadata.name doesn't match requested name")
    // a bad watch RV: 422 before the stream
    const badRv = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=x1`)
    expect(badRv.status).toBe(422)
    expect(badRv.body.message).toBe(
      'configmaps "" is invalid: resourceVersion: Invalid value: "x1": strconv.ParseUint: parsing "x1": invalid syntax'
    )
  })

  it("selectors: label and field selectors filter lists and watches; a bad selector is 400", async () => {
    const ns = await newNamespace(url())
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("x", {}, { tier: "web" }))
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("y", {}, { tier: "db" }))
    const web = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?labelSelector=tier%3Dweb`)
    expect(web.body.items.map((o: any) => o.metadata.name)).toEqual(["x"])
    const notWeb = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?labelSelector=tier!%3Dweb`)
    expect(notWeb.body.items.map((o: any) => o.metadata.name)).toEqual(["y"])
    const byName = await request(
      url(),
      "GET",
      `/api/v1/configmaps?fieldSelector=metadata.name%3Dy,metadata.namespace%3D${ns}`
    )
    expect(byName.body.items.map((o: any) => o.metadata.name)).toEqual(["y"])
    const badLabel = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?labelSelector=a%3D%3D%3Db`)
    expect(badLabel.status).toBe(400)
    expect(badLabel.body.reason).toBe("BadRequest")
    const badField = await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps?fieldSelector=spec.foo%3Dbar`)
    expect(badField.status).toBe(400)
    expect(badField.body.message).toBe(
      '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    const w = watch(
      url(),
      `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${web.body.metadata.resourceVersion}&labelSelector=tier%3Dweb`
    )
    await w.response
    await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/y`,
      { metadata: { labels: { tier: "web" } } },
      { "content-type": "application/merge-patch+json" }
    )
    await request(
      url(),
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/x`,
      { metadata: { labels: { tier: "db" } } },
      { "content-type": "application/merge-patch+json" }
    )
    const events = await w.waitFor(2)
    w.close()
    // y enters the selection (ADDED), x leaves it (DELETED)
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ["ADDED", "y"],
      ["DELETED", "x"]
    ])
  })

  it("ERROR event: a watch from before the cache's window gets one 410 Expired Status on HTTP 200, then the stream ends", async () => {
    const s = await startApiServer({ etcdServers: server().running.etcdEndpoints })
    try {
      const ns = await newNamespace(s.url)
      const first = (await request(s.url, "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))).body
      await request(s.url, "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("b"))
      await s.close()
      // a new apiserver: its cache starts at the current RV; the first object's RV is before it
      const s2 = await startApiServer({ etcdServers: server().running.etcdEndpoints })
      try {
        const old = BigInt(first.metadata.resourceVersion) - 1n
        const w = watch(s2.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${old}`)
        expect((await w.response).statusCode).toBe(200)
        await w.ended
        expect(w.events.length).toBe(1)
        const e = w.events[0]
        expect(e.type).toBe("ERROR")
        expect(e.object).toMatchObject({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          reason: "Expired",
          code: 410
        })
        expect(e.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/)
      } finally {
        await s2.close()
      }
    } finally {
      await s.close()
    }
  }, 30_000)

  it("--watch-cache=false: the etcd3 store's watch; after a compaction the ERROR is etcd's 410", async () => {
    const s = await startApiServer({ etcdServers: server().running.etcdEndpoints, watchCache: false })
    try {
      const ns = await newNamespace(s.url)
      const a = (await request(s.url, "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))).body
      const b = (await request(s.url, "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("b"))).body
      const w1 = watch(
        s.url,
        `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${a.metadata.resourceVersion}&timeoutSeconds=1`
      )
      await w1.ended
      expect(w1.events.map((e) => e.object.metadata.name)).toEqual(["b"])
      const c = (await request(s.url, "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("c"))).body
      expect(BigInt(c.metadata.resourceVersion)).toBeGreaterThan(BigInt(b.metadata.resourceVersion))
      await Effect.runPromise(compactWith(s.running.client, BigInt(c.metadata.resourceVersion)))
      const w2 = watch(
        s.url,
        `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${a.metadata.resourceVersion}&timeoutSeconds=10`
      )
      await w2.ended
      expect(w2.events).toEqual([
        {
          type: "ERROR",
          object: {
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message: "The resourceVersion for the provided watch is too old.",
            reason: "Expired",
            code: 410
          }
        }
      ])
    } finally {
      await s.close()
    }
  }, 30_000)

  it("timeoutSeconds ends the stream without a terminal event", async () => {
    const rv = (await request(url(), "GET", "/api/v1/namespaces/default/configmaps")).body.metadata.resourceVersion
    const started = Date.now()
    const w = watch(url(), `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)
    await w.ended
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(w.events.filter((e) => e.type === "ERROR")).toEqual([])
  })

  it("a watch with allowWatchBookmarks gets its last BOOKMARK 2 s before timeoutSeconds ends it (cacheWatcher's deadline)", async () => {
    const ns = await newNamespace(url())
    const rv = (await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)).body.metadata.resourceVersion
    const w = watch(
      url(),
      `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=4`
    )
    await w.response
    // progress elsewhere: the bookmark's RV is the cache's, past the watch's start
    await request(url(), "POST", "/api/v1/namespaces/default/configmaps", configMap(`bm-${Date.now()}`))
    await w.ended
    expect(w.events.map((e) => e.type)).toEqual(["BOOKMARK"])
    expect(BigInt(w.events[0].object.metadata.resourceVersion)).toBeGreaterThan(BigInt(rv))
  })
})
