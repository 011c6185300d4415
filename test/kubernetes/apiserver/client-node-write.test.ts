/**
 * @kubernetes/client-node 1.4's typed CoreV1Api writing through the pipeline: dryRun "All" on
 * create, replace, patch and delete leaves the store alone; a Secret's stringData comes back as
 * data; a refused write is an ApiException with the apiserver's code and Status; deleting a
 * namespace answers with it Terminating; finalizers keep an object until the last goes.
 */
import * as k8s from "@kubernetes/client-node"
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { kubeConfig } from "./clients.js"
import { newNamespace, onApiServer } from "./support.js"

const api = (server: string) => kubeConfig(server).makeApiClient(k8s.CoreV1Api)

const failure = async (p: Promise<unknown>): Promise<{ code: number; body: any }> => {
  try {
    await p
  } catch (e) {
    const err = e as { code: number; body: string }
    return { code: err.code, body: JSON.parse(err.body) }
  }
  throw new Error("expected the call to fail")
}

describe("apiserver: @kubernetes/client-node writes", () => {
  const server = onApiServer({ namespaceDeletionDelay: Duration.hours(1) })

  it("dryRun All on create, replace, patch and delete: the answers, nothing stored", async () => {
    const core = api(server().url)
    const namespace = await newNamespace(server().url)
    const dry = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "d" }, data: { a: "1" } },
      dryRun: "All"
    })
    expect(dry.metadata?.uid).toBeDefined()
    expect((await core.listNamespacedConfigMap({ namespace })).items).toEqual([])
    const real = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "d" }, data: { a: "1" } }
    })
    const replaced = await core.replaceNamespacedConfigMap({
      name: "d",
      namespace,
      body: { ...real, data: { a: "2" } },
      dryRun: "All"
    })
    expect(replaced.data).toEqual({ a: "2" })
    const patched = await core.patchNamespacedConfigMap(
      { name: "d", namespace, body: { data: { b: "3" } }, dryRun: "All" },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch)
    )
    expect(patched.data).toEqual({ a: "1", b: "3" })
    await core.deleteNamespacedConfigMap({ name: "d", namespace, dryRun: "All" })
    const stored = await core.readNamespacedConfigMap({ name: "d", namespace })
    expect(stored.data).toEqual({ a: "1" })
    expect(stored.metadata?.resourceVersion).toBe(real.metadata?.resourceVersion)
    const bad = await failure(
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "e" } }, dryRun: "Yes" })
    )
    expect(bad.code).toBe(422)
    expect(bad.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Yes"]: supported values: "All"'
    )
  })

  it("Secrets with stringData; refusals as ApiException with the Status; finalizers and a namespace's deletion", async () => {
    const core = api(server().url)
    const namespace = await newNamespace(server().url)
    const s = await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "s" }, stringData: { user: "admin" } }
    })
    expect(s.type).toBe("Opaque")
    expect(s.data).toEqual({ user: "YWRtaW4=" })
    expect(s.stringData).toBeUndefined()
    const immutable = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "i" }, immutable: true, data: { a: "1" } }
    })
    const refused = await failure(
      core.replaceNamespacedConfigMap({ name: "i", namespace, body: { ...immutable, data: { a: "2" } } })
    )
    expect(refused.code).toBe(422)
    expect(refused.body).toMatchObject({
      kind: "Status",
      reason: "Invalid",
      message: 'ConfigMap "i" is invalid: data: Forbidden: field is immutable when `immutable` is set',
      details: { name: "i", kind: "ConfigMap", causes: [{ reason: "FieldValueForbidden", field: "data" }] }
    })
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "f", finalizers: ["example.com/f"] } }
    })
    await core.deleteNamespacedConfigMap({ name: "f", namespace })
    const marked = await core.readNamespacedConfigMap({ name: "f", namespace })
    expect(marked.metadata?.deletionTimestamp).toBeInstanceOf(Date)
    await core.patchNamespacedConfigMap(
      { name: "f", namespace, body: [{ op: "remove", path: "/metadata/finalizers" }] },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.JsonPatch)
    )
    expect((await failure(core.readNamespacedConfigMap({ name: "f", namespace }))).code).toBe(404)
    await core.deleteNamespace({ name: namespace })
    const ns = await core.readNamespace({ name: namespace })
    expect(ns.status?.phase).toBe("Terminating")
    const inTerminating = await failure(
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "late" } } })
    )
    expect(inTerminating.code).toBe(403)
    expect(inTerminating.body.details.causes[0].reason).toBe("NamespaceTerminating")
  })
})
