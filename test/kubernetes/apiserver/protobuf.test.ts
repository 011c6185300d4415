/**
 * `application/vnd.kubernetes.protobuf` on the apiserver, as client-go's typed clients use it:
 * protobuf request bodies and responses (`k8s\0` + runtime.Unknown) for get, list (the List
 * message), create, update, patch and delete, Status errors in protobuf, watches as
 * length-prefixed WatchEvent frames; the Accept negotiation (protobuf first with a JSON fallback,
 * custom resources in JSON or the 406); broken protobuf bodies refused with the apiserver's texts
 * and nothing stored.
 */
import * as http from "node:http"
import { describe, expect, it } from "vitest"
import { decodeProtobuf, encodeProtobuf } from "../../../src/kubernetes/api/protobuf/envelope.js"
import { lookupMessage, UNKNOWN, WATCH_EVENT } from "../../../src/kubernetes/api/protobuf/messages.js"
import { configMap, newNamespace, onApiServer, request, until, widgetCRD } from "./support.js"

const PB = "application/vnd.kubernetes.protobuf"
/** what client-go's typed clients send */
const CLIENT_GO_ACCEPT = `${PB}, application/json`

interface PbReply {
  readonly status: number
  readonly contentType: string
  readonly bytes: Uint8Array
  /** the decoded object (protobuf) or the parsed JSON */
  readonly body: any
}

const decode = (bytes: Uint8Array): any => {
  const r = decodeProtobuf(bytes, { apiVersion: "", kind: "", custom: false })
  if (r._tag === "Left") throw new Error(r.left.message)
  return r.right
}

const pb = async (
  base: string,
  method: string,
  path: string,
  body?: Uint8Array | object,
  headers: Record<string, string> = {}
): Promise<PbReply> => {
  const init: RequestInit = { method, headers: { accept: PB, ...headers } }
  if (body instanceof Uint8Array) {
    init.body = body
    ;(init.headers as Record<string, string>)["content-type"] ??= PB
  } else if (body !== undefined) {
    init.body = JSON.stringify(body)
    ;(init.headers as Record<string, string>)["content-type"] ??= "application/json"
  }
  const res = await fetch(base + path, init)
  const bytes = new Uint8Array(await res.arrayBuffer())
  const contentType = res.headers.get("content-type") ?? ""
  const parsed = contentType === PB ? decode(bytes) : JSON.parse(new TextDecoder().decode(bytes))
  return { status: res.status, contentType, bytes, body: parsed }
}

/** A protobuf watch: its frames decoded (WatchEvent, then the object's envelope). */
const watchFrames = (base: string, path: string, accept = PB) => {
  const events: Array<{ type: string; object: any }> = []
  let contentType = ""
  let buf = Buffer.alloc(0)
  let wake: (() => void) | undefined
  const req = http.get(base + path, { headers: { accept } }, (res) => {
    contentType = res.headers["content-type"] ?? ""
    res.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const n = buf.readUInt32BE(0)
        const e = lookupMessage(WATCH_EVENT).decode(buf.subarray(4, 4 + n)) as unknown as {
          type: string
          object: { raw: Uint8Array }
        }
        events.push({ type: e.type, object: decode(e.object.raw) })
        buf = buf.subarray(4 + n)
      }
      wake?.()
    })
  })
  req.on("error", () => {})
  return {
    events,
    contentType: () => contentType,
    waitFor: async (n: number) => {
      while (events.length < n) await new Promise<void>((r) => (wake = r))
      return events
    },
    close: () => req.destroy()
  }
}

describe("apiserver: protobuf", () => {
  const server = onApiServer()
  const url = () => server().url

  it("create, get, list, update, patch and delete a ConfigMap in protobuf", async () => {
    const ns = await newNamespace(url())
    const base = `/api/v1/namespaces/${ns}/configmaps`
    const created = await pb(url(), "POST", base, encodeProtobuf(configMap("a", { k: "v" }, { app: "x" })))
    expect(created.status).toBe(201)
    expect(created.contentType).toBe(PB)
    expect(Array.from(created.bytes.subarray(0, 4))).toEqual([0x6b, 0x38, 0x73, 0x00])
    expect(created.body).toMatchObject({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: ns, labels: { app: "x" } },
      data: { k: "v" }
    })
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    // the same object in JSON
    const json = await request(url(), "GET", `${base}/a`)
    expect(created.body).toEqual(json.body)

    const got = await pb(url(), "GET", `${base}/a`, undefined, { accept: CLIENT_GO_ACCEPT })
    expect(got.contentType).toBe(PB)
    expect(got.body).toEqual(json.body)

    await pb(url(), "POST", base, encodeProtobuf(configMap("b")))
    const list = await pb(url(), "GET", base)
    expect(list.body).toMatchObject({ apiVersion: "v1", kind: "ConfigMapList" })
    expect(list.body.metadata.resourceVersion).toMatch(/^\d+$/)
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(["a", "b"])
    expect(list.body.items[0].data).toEqual({ k: "v" })

    const updated = await pb(url(), "PUT", `${base}/a`, encodeProtobuf({ ...got.body, data: { k: "w" } }))
    expect(updated.status).toBe(200)
    expect(updated.body.data).toEqual({ k: "w" })
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(got.body.metadata.resourceVersion))

    const patched = await pb(
      url(),
      "PATCH",
      `${base}/a`,
      { data: { z: "1" } },
      {
        "content-type": "application/merge-patch+json"
      }
    )
    expect(patched.contentType).toBe(PB)
    expect(patched.body.data).toEqual({ k: "w", z: "1" })

    const deleted = await pb(url(), "DELETE", `${base}/a`)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toMatchObject({ apiVersion: "v1", kind: "Status", status: "Success" })
    expect((await request(url(), "GET", `${base}/a`)).status).toBe(404)
  })

  it("Secrets (bytes) and Namespaces (cluster-scoped, spec and status) round-trip in protobuf", async () => {
    const ns = await newNamespace(url())
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      type: "Opaque",
      data: { bin: Buffer.from([0, 1, 2, 255]).toString("base64") },
      immutable: false
    }
    const s = await pb(url(), "POST", `/api/v1/namespaces/${ns}/secrets`, encodeProtobuf(secret))
    expect(s.status).toBe(201)
    expect(s.body).toMatchObject({ data: secret.data, type: "Opaque", immutable: false })
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: `${ns}-pb` } }
    const n = await pb(url(), "POST", "/api/v1/namespaces", encodeProtobuf(namespace))
    expect(n.status).toBe(201)
    expect(n.body).toMatchObject({ spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } })
    const all = await pb(url(), "GET", "/api/v1/namespaces")
    expect(all.body.kind).toBe("NamespaceList")
    expect(all.body.items.map((i: any) => i.metadata.name)).toContain(`${ns}-pb`)
  })

  it("errors are Status messages in protobuf; broken bodies get the apiserver's texts and store nothing", async () => {
    const ns = await newNamespace(url())
    const base = `/api/v1/namespaces/${ns}/configmaps`
    const missing = await pb(url(), "GET", `${base}/nope`)
    expect(missing.status).toBe(404)
    expect(missing.contentType).toBe(PB)
    expect(missing.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: 'configmaps "nope" not found',
      details: { name: "nope", kind: "configmaps" }
    })
    const bad = async (body: Uint8Array, message: string) => {
      const r = await pb(url(), "POST", base, body)
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ reason: "BadRequest", code: 400, message })
    }
    const good = encodeProtobuf(configMap("x"))
    await bad(
      Uint8Array.of(0x6b, 0x38, 0x73, 0x00),
      "the object provided is unrecognized (must be of type ConfigMap): empty body (6b387300)"
    )
    // cut inside the envelope: Unknown.Unmarshal's io.ErrUnexpectedEOF (the first 30 bytes in hex)
    const cut = good.subarray(0, good.length - 3)
    await bad(
      cut,
      `the object provided is unrecognized (must be of type ConfigMap): unexpected EOF (${Buffer.from(cut.subarray(0, 30)).toString("hex")}${cut.length > 30 ? " ..." : ""})`
    )
    const envelope = (apiVersion: string, kind: string) =>
      Buffer.concat([
        Buffer.from("k8s\0"),
        lookupMessage(UNKNOWN)
          .encode({ typeMeta: { apiVersion, kind }, raw: Buffer.alloc(0) })
          .finish()
      ])
    await bad(
      envelope("v1", "Widget"),
      'Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
    await bad(
      envelope("v2", ""),
      'ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
    await bad(
      encodeProtobuf({ ...configMap("x"), kind: "Secret" }),
      "the kind in the data (Secret) does not match the expected kind (ConfigMap)"
    )
    // nothing was stored
    expect((await pb(url(), "GET", base)).body.items).toEqual([])
  })

  it("DeleteOptions in a protobuf body (client-go's typed Delete): preconditions and zero values that are set", async () => {
    const ns = await newNamespace(url())
    const base = `/api/v1/namespaces/${ns}/configmaps`
    const created = await pb(url(), "POST", base, encodeProtobuf(configMap("d")))
    const options = (preconditions: object) =>
      encodeProtobuf({ apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions })
    const refused = await pb(url(), "DELETE", `${base}/d`, options({ uid: "not-the-uid" }))
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ reason: "Conflict", code: 409 })
    expect(refused.body.message).toContain("the UID in the precondition (not-the-uid) does not match the UID in record")
    expect((await request(url(), "GET", `${base}/d`)).status).toBe(200)
    const done = await pb(url(), "DELETE", `${base}/d`, options({ uid: created.body.metadata.uid }))
    expect(done.body).toMatchObject({ kind: "Status", status: "Success" })
    expect((await request(url(), "GET", `${base}/d`)).status).toBe(404)
    const bad = await pb(url(), "DELETE", `${base}/d`, Uint8Array.of(1, 2, 3))
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe(
      "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )
  })

  it("a watch streams length-prefixed WatchEvent frames", async () => {
    const ns = await newNamespace(url())
    const base = `/api/v1/namespaces/${ns}/configmaps`
    const w = watchFrames(url(), `${base}?watch=1`, CLIENT_GO_ACCEPT)
    try {
      await request(url(), "POST", base, configMap("a", { n: "1" }))
      await request(
        url(),
        "PATCH",
        `${base}/a`,
        { data: { n: "2" } },
        { "content-type": "application/merge-patch+json" }
      )
      await request(url(), "DELETE", `${base}/a`)
      const events = await w.waitFor(3)
      expect(w.contentType()).toBe(`${PB};stream=watch`)
      expect(events.map((e) => [e.type, e.object.kind, e.object.metadata.name, e.object.data])).toEqual([
        ["ADDED", "ConfigMap", "a", { n: "1" }],
        ["MODIFIED", "ConfigMap", "a", { n: "2" }],
        ["DELETED", "ConfigMap", "a", { n: "2" }]
      ])
    } finally {
      w.close()
    }
  })

  it("custom resources: JSON after protobuf is JSON; protobuf alone is the 406 (a protobuf Status); a protobuf body is refused", async () => {
    const ns = await newNamespace(url())
    expect(
      (
        await request(
          url(),
          "POST",
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
          widgetCRD({ plural: "pbwidgets" })
        )
      ).status
    ).toBe(201)
    const path = `/apis/example.com/v1/namespaces/${ns}/pbwidgets`
    await until(async () => (await request(url(), "GET", path)).status === 200)
    const list = await pb(url(), "GET", path, undefined, { accept: CLIENT_GO_ACCEPT })
    expect(list.contentType).toBe("application/json")
    expect(list.body.kind).toBe("PbwidgetList")
    const only = await pb(url(), "GET", path)
    expect(only.status).toBe(406)
    expect(only.contentType).toBe(PB)
    expect(only.body).toMatchObject({
      reason: "NotAcceptable",
      code: 406,
      message:
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    })
    const body = await pb(url(), "POST", path, encodeProtobuf(configMap("w")), { accept: "application/json" })
    expect(body.status).toBe(400)
    expect(body.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a Pbwidget: object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message'
    )
    // PartialObjectMetadata has a message: served in protobuf for custom resources too
    const meta = await pb(url(), "GET", path, undefined, {
      accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
    })
    expect(meta.contentType).toBe(PB)
    expect(meta.body).toMatchObject({ kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", items: [] })
  })

  it("no acceptable type: the 406 lists protobuf (and its stream form for a watch of YAML)", async () => {
    const r = await request(url(), "GET", "/api/v1/namespaces", undefined, { accept: "text/html" })
    expect(r.status).toBe(406)
    expect(r.body.message).toBe(
      "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    const w = await request(url(), "GET", "/api/v1/namespaces?watch=1", undefined, { accept: "application/yaml" })
    expect(w.status).toBe(406)
    expect(w.text).toContain(
      "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    )
  })
})
