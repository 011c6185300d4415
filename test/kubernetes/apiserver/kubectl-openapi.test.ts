/**
 * kubectl (the machine's, or $KUBECTL) reading the apiserver's OpenAPI documents: `explain` of the
 * built-in kinds and their fields (Kubernetes' own descriptions), `--recursive`, `--api-version`
 * for events.k8s.io's Event, a CRD's kind; kubectl ≥ 1.27 reads /openapi/v3 (and /openapi/v2's
 * protobuf with `-o plaintext-openapiv2`), older kubectl /openapi/v2's protobuf only. With the
 * schemas present, `apply` twice of a ConfigMap and of a Namespace still patches what changed (the
 * strategic merge patch now computed from the schemas) and validation still refuses unknown fields.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { hasKubectl, kubectlMinor, runKubectl } from "./clients.js"
import { onApiServer, request, schemaCRD, until } from "./support.js"

/** kubectl's text with its wrapping and indentation undone (they differ between versions) */
const flat = (s: string) => s.replace(/\s+/g, " ").trim()

/** stderr's lines but kubectl 1.20's note that it has no kubeconfig */
const warnings = (stderr: string) => stderr.split("\n").filter((l) => l !== "" && !l.includes("Config not found"))

const gizmos = schemaCRD("explain.example.com", "gizmos", "Gizmo", {
  type: "object",
  properties: {
    spec: {
      type: "object",
      description: "What the gizmo should be.",
      required: ["size"],
      properties: {
        size: { type: "integer", description: "How big the gizmo is." },
        note: { type: "string", nullable: true, description: "A note, or null." }
      }
    }
  }
})

describe.skipIf(!hasKubectl && process.env["CI"] === undefined)("kubectl and /openapi", () => {
  const server = onApiServer()
  const v3 = kubectlMinor() >= 27
  let home = ""
  const kubectl = (args: ReadonlyArray<string>, input?: string) => runKubectl(server().url, home, args, input)
  const explain = async (...args: Array<string>) => {
    const r = await kubectl(["explain", ...args])
    expect(r.code, r.stderr).toBe(0)
    return flat(r.stdout)
  }

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "kubectl-openapi-"))
    const crd = await request(server().url, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gizmos)
    expect(crd.status).toBe(201)
    await until(async () => (await request(server().url, "GET", "/apis/explain.example.com/v1/gizmos")).status === 200)
  })

  it("explain configmap: the kind's description and its fields'", async () => {
    const out = await explain("configmap")
    expect(out).toMatch(
      /^KIND: ConfigMap VERSION: v1 DESCRIPTION: ConfigMap holds configuration data for pods to consume\./
    )
    expect(out).toContain("binaryData <map[string]string> BinaryData contains the binary data.")
    expect(out).toContain("immutable <boolean> Immutable, if set to true, ensures that data stored in the ConfigMap")
    expect(out).toMatch(/metadata <\w+> Standard object's metadata\./) // <ObjectMeta> from 1.27, <Object> before
  })

  it("explain of fields: configmap.data, namespace.spec.finalizers, lease.spec, event.involvedObject", async () => {
    expect(await explain("configmap.data")).toContain(
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'."
    )
    expect(await explain("namespace.spec.finalizers")).toContain(
      "Finalizers is an opaque list of values that must be empty to permanently remove object from storage."
    )
    const lease = await explain("lease.spec")
    expect(lease).toContain("LeaseSpec is a specification of a Lease.")
    expect(lease).toContain(
      "holderIdentity <string> holderIdentity contains the identity of the holder of a current lease."
    )
    const involved = await explain("event.involvedObject")
    expect(involved).toContain("The object that this event is about.")
    expect(involved).toContain(
      "ObjectReference contains enough information to let you inspect or modify the referred object."
    )
  })

  it("explain events --api-version=events.k8s.io/v1 and customresourcedefinition.spec.versions", async () => {
    const events = await explain("events", "--api-version=events.k8s.io/v1")
    expect(events).toContain(
      "Event is a report of an event somewhere in the cluster. It generally denotes some state change"
    )
    expect(events).toMatch(/regarding <\w+> regarding contains the object this Event is about\./)
    expect(events).not.toContain("involvedObject")
    const versions = await explain("customresourcedefinition.spec.versions")
    expect(versions).toContain("versions is the list of all API versions of the defined custom resource.")
    expect(versions).toContain("served <boolean> -required- served is a flag enabling/disabling this version")
  })

  it("explain --recursive: every field of the kind, ObjectMeta's too", async () => {
    const r = await kubectl(["explain", "namespace", "--recursive"])
    expect(r.code, r.stderr).toBe(0)
    const fields = r.stdout.split("\n").map((l) => l.trim().split(/\s+/)[0])
    for (const f of ["apiVersion", "metadata", "ownerReferences", "blockOwnerDeletion", "spec", "finalizers", "status"])
      expect(fields).toContain(f)
    expect(flat(r.stdout)).toMatch(/conditions <\[\]\w+> lastTransitionTime <string>/)
  })

  it("explain of a CRD's kind: its schema's descriptions, ObjectMeta for metadata", async () => {
    const spec = await explain("gizmo.spec")
    expect(spec).toContain("What the gizmo should be.")
    expect(spec).toContain("size <integer> -required- How big the gizmo is.")
    // a nullable field keeps its type in v3; v2 cannot say "or null", so it has none there
    expect(spec).toContain(v3 ? "note <string> A note, or null." : "note <> A note, or null.")
    expect(await explain("gizmo.metadata.ownerReferences.uid")).toContain("UID of the referent.")
  })

  it.skipIf(!v3)("explain -o plaintext-openapiv2 reads /openapi/v2's protobuf", async () => {
    expect(await explain("configmap.data", "-o", "plaintext-openapiv2")).toContain(
      "Data contains the configuration data."
    )
    expect(await explain("gizmo.spec", "-o", "plaintext-openapiv2")).toContain("How big the gizmo is.")
  })

  it("apply twice of a ConfigMap: unchanged, then the labels, finalizers and data that changed", async () => {
    const cm = (labels: string, finalizer: string, data: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied, namespace: default, labels: ${labels}, finalizers: [${finalizer}]}\ndata: ${data}\n`
    const first = cm("{a: '1'}", "example.com/x", "{k1: v1, k2: v2}")
    expect((await kubectl(["apply", "-f", "-"], first)).stdout.trim()).toBe("configmap/applied created")
    expect((await kubectl(["apply", "-f", "-"], first)).stdout.trim()).toBe("configmap/applied unchanged")
    const changed = await kubectl(["apply", "-v=6", "-f", "-"], cm("{b: '2'}", "example.com/y", "{k1: changed}"))
    expect(changed.stdout.trim()).toBe("configmap/applied configured")
    expect(warnings(changed.stderr).filter((l) => !l.startsWith("I"))).toEqual([])
    if (v3) expect(changed.stderr).toMatch(/GET \S+\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}\S* 200 OK/)
    const got = (await request(server().url, "GET", "/api/v1/namespaces/default/configmaps/applied")).body
    expect(got.metadata.labels).toEqual({ b: "2" })
    expect(got.metadata.finalizers).toEqual(["example.com/y"])
    expect(got.data).toEqual({ k1: "changed" })
    await request(
      server().url,
      "PATCH",
      "/api/v1/namespaces/default/configmaps/applied",
      [{ op: "remove", path: "/metadata/finalizers" }],
      { "content-type": "application/json-patch+json" }
    )
  })

  it("apply twice of a Namespace: unchanged, then its labels; spec.finalizers stays the server's", async () => {
    const ns = (labels: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: applied-ns, labels: ${labels}}\n`
    expect((await kubectl(["apply", "-f", "-"], ns("{team: a}"))).stdout.trim()).toBe("namespace/applied-ns created")
    expect((await kubectl(["apply", "-f", "-"], ns("{team: a}"))).stdout.trim()).toBe("namespace/applied-ns unchanged")
    const changed = await kubectl(["apply", "-f", "-"], ns("{team: b, env: dev}"))
    expect(changed.stdout.trim()).toBe("namespace/applied-ns configured")
    expect(warnings(changed.stderr)).toEqual([])
    const got = (await request(server().url, "GET", "/api/v1/namespaces/applied-ns")).body
    expect(got.metadata.labels).toEqual({ env: "dev", team: "b", "kubernetes.io/metadata.name": "applied-ns" })
    expect(got.spec).toEqual({ finalizers: ["kubernetes"] })
  })

  it("create with validation refuses an unknown field (the server's error from 1.27, kubectl's own before)", async () => {
    const body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict, namespace: default}\nbogus: 1\n"
    const r = await kubectl(["create", ...(v3 ? ["--validate=strict"] : []), "-f", "-"], body)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(
      v3
        ? 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'
        : 'ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap'
    )
    expect((await request(server().url, "GET", "/api/v1/namespaces/default/configmaps/strict")).status).toBe(404)
  })
})
