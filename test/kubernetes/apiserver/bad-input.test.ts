/**
 * Bad input gets the apiserver's 4xx Status, never a 500 or a crash: malformed JSON, a body whose
 * kind/apiVersion/namespace/name disagrees with the URL, invalid names, unknown resources and
 * paths, bad selectors, bodies over 3 MiB (413), unsupported patch and body media types (415), a
 * broken protobuf body (400).
 */
import { describe, expect, it } from "vitest"
import { configMap, newNamespace, onApiServer, request } from "./support.js"

describe("apiserver: bad input", () => {
  const server = onApiServer()
  const url = () => server().url

  const expectStatus = (r: { status: number; body: any }, code: number, reason: string, message?: string | RegExp) => {
    expect(r.status).toBe(code)
    expect(r.body).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason })
    if (typeof message === "string") expect(r.body.message).toBe(message)
    else if (message !== undefined) expect(r.body.message).toMatch(message)
  }

  it("malformed JSON and non-object bodies: 400 with Go's decoder texts", async () => {
    const ns = await newNamespace(url())
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, "{not json"),
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({not json)"
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, '{"a": '),
      400,
      "BadRequest",
      'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"a": )'
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, "[1,2]"),
      400,
      "BadRequest",
      'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b312c325d)'
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, { metadata: "x" }),
      400,
      "BadRequest",
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta'
    )
  })

  it("a body that does not match the URL: 400 with the apiserver's messages", async () => {
    const ns = await newNamespace(url())
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, { ...configMap("a"), apiVersion: "v2" }),
      400,
      "BadRequest",
      "the API version in the data (v2) does not match the expected API version (v1)"
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, { ...configMap("a"), kind: "Secret" }),
      400,
      "BadRequest",
      "the kind in the data (Secret) does not match the expected kind (ConfigMap)"
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, {
        ...configMap("a"),
        metadata: { name: "a", namespace: "other" }
      }),
      400,
      "BadRequest",
      "the namespace of the provided object does not match the namespace sent on the request"
    )
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))
    expectStatus(
      await request(url(), "PUT", `/api/v1/namespaces/${ns}/configmaps/a`, configMap("b")),
      400,
      "BadRequest",
      "the name of the object (b) does not match the name on the URL (a)"
    )
  })

  it("names: not a DNS subdomain (or label, for namespaces) is 422 Invalid; none is 422 Required", async () => {
    const ns = await newNamespace(url())
    const r = await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("Bad_Name"))
    expectStatus(
      r,
      422,
      "Invalid",
      "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    expect(r.body.details).toMatchObject({
      name: "Bad_Name",
      kind: "ConfigMap",
      causes: [{ reason: "FieldValueInvalid", field: "metadata.name" }]
    })
    expectStatus(
      await request(url(), "POST", "/api/v1/namespaces", { metadata: { name: "a.b" } }),
      422,
      "Invalid",
      /^Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label/
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, { data: {} }),
      422,
      "Invalid",
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )
  })

  it("unknown resources, groups, versions and paths: 404 Status; a missing namespace: 404 namespaces", async () => {
    for (const p of [
      "/api/v1/namespaces/default/pods",
      "/apis/nope.io/v1/things",
      "/api/v2/configmaps",
      "/nothing/here",
      "/apis/nope.io",
      "/api/v1/namespaces/default/configmaps/a/status"
    ]) {
      expectStatus(await request(url(), "GET", p), 404, "NotFound", "the server could not find the requested resource")
    }
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/no-such-ns/configmaps`, configMap("a")),
      404,
      "NotFound",
      'namespaces "no-such-ns" not found'
    )
    expectStatus(
      await request(url(), "GET", `/api/v1/namespaces/default/configmaps/missing`),
      404,
      "NotFound",
      'configmaps "missing" not found'
    )
  })

  it("bad selectors, RVs and numbers: 400", async () => {
    expectStatus(await request(url(), "GET", "/api/v1/configmaps?labelSelector=%3D%3D"), 400, "BadRequest")
    expectStatus(
      await request(url(), "GET", "/api/v1/configmaps?fieldSelector=metadata.uid%3Dx"),
      400,
      "BadRequest",
      '"metadata.uid" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    expectStatus(
      await request(url(), "GET", "/api/v1/secrets?fieldSelector=data.a%3Dx"),
      400,
      "BadRequest",
      "field label not supported: data.a"
    )
    expectStatus(
      await request(url(), "GET", "/api/v1/configmaps?limit=ten"),
      400,
      "BadRequest",
      'strconv.ParseInt: parsing "ten": invalid syntax'
    )
    expectStatus(
      await request(url(), "GET", "/api/v1/configmaps?continue=garbage&limit=1"),
      400,
      "BadRequest",
      /continue key is not valid/
    )
    expectStatus(
      await request(url(), "GET", "/api/v1/namespaces/default/configmaps/x?resourceVersion=-1"),
      400,
      "BadRequest",
      /^invalid resource version/
    )
  })

  it("bodies over 3 MiB: 413", async () => {
    const ns = await newNamespace(url())
    const big = JSON.stringify(configMap("big", { v: "x".repeat(3 * 1024 * 1024) }))
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, big),
      413,
      "RequestEntityTooLarge",
      "Request entity too large: limit is 3145728"
    )
    // the server is still fine
    expect((await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(200)
  })

  it("media types: a broken protobuf body is 400, an unknown body or patch type 415; strategic merge patch on a custom resource is 415", async () => {
    const ns = await newNamespace(url())
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, "junk", {
        "content-type": "application/vnd.kubernetes.protobuf"
      }),
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (6a756e6b)"
    )
    expectStatus(
      await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, "<x/>", { "content-type": "text/xml" }),
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    await request(url(), "POST", `/api/v1/namespaces/${ns}/configmaps`, configMap("a"))
    expectStatus(
      await request(url(), "PATCH", `/api/v1/namespaces/${ns}/configmaps/a`, {}, { "content-type": "text/plain" }),
      415,
      "UnsupportedMediaType"
    )
    expectStatus(
      await request(url(), "GET", `/api/v1/namespaces/${ns}/configmaps`, undefined, {
        // a Table is JSON or YAML only (protobuf Accept bodies: test/kubernetes/apiserver/protobuf.test.ts)
        accept: "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"
      }),
      406,
      "NotAcceptable"
    )
    expectStatus(
      await request(
        url(),
        "PATCH",
        `/api/v1/namespaces/${ns}/configmaps/a`,
        [{ op: "test", path: "/data/x", value: "1" }],
        { "content-type": "application/json-patch+json" }
      ),
      422,
      "Invalid"
    )
    expectStatus(
      await request(url(), "PATCH", `/api/v1/namespaces/${ns}/configmaps/a`, "{", {
        "content-type": "application/merge-patch+json"
      }),
      400,
      "BadRequest"
    )
    expectStatus(
      await request(url(), "DELETE", `/api/v1/namespaces/${ns}/configmaps/a`, { propagationPolicy: "Sometimes" }),
      422,
      "Invalid",
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'
    )
  })
})
