/**
 * The FieldManager on fixed cases whose answers are Kubernetes' (checked against the Go oracle,
 * test/go/kubernetes/cmd/ssa-oracle): managedFields of a create, conflicts and their texts,
 * force, pruning on re-apply, associative lists shared by two appliers, before-first-apply.
 */
import { describe, expect, it } from "vitest"
import { ApplyConflict } from "../../../src/kubernetes/managedfields/apply-errors.js"
import {
  apply,
  type FieldManagerConfig,
  type Obj,
  update
} from "../../../src/kubernetes/managedfields/field-manager.js"
import { fromOpenApi } from "../../../src/kubernetes/managedfields/openapi-schema.js"
import { builtinDefinitions } from "../../../src/kubernetes/apiserver/write/managed-fields.js"

const NOW = "2026-11-27T15:00:00Z"
const configMaps: FieldManagerConfig = {
  typed: {
    schema: builtinDefinitions().schema,
    type: { named: "io.k8s.api.core.v1.ConfigMap" },
    versions: new Set(["v1"])
  },
  gvk: { group: "", version: "v1", kind: "ConfigMap" },
  subresource: "",
  now: () => NOW
}
const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "default", ...extra },
  data
})
const stored = (o: Obj): Obj => ({ ...o, metadata: { ...o.metadata, uid: "u1", creationTimestamp: NOW } })
const fieldsOf = (o: Obj) =>
  (o.metadata?.["managedFields"] as Array<Record<string, unknown>>).map(({ manager, operation, fieldsV1 }) => ({
    manager,
    operation,
    fieldsV1
  }))

describe("FieldManager", () => {
  it("a create records an Update entry with the fields it set", () => {
    const o = update(
      configMaps,
      { apiVersion: "v1", kind: "ConfigMap", metadata: {} },
      cm({ a: "1" }),
      "kubectl-create"
    )
    expect(o.metadata?.["managedFields"]).toEqual([
      {
        manager: "kubectl-create",
        operation: "Update",
        apiVersion: "v1",
        time: NOW,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { ".": {}, "f:a": {} } }
      }
    ])
  })

  it("a second applier of the same field conflicts; force moves the field", () => {
    const a = stored(
      apply(
        configMaps,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default" } },
        cm({ x: "1" }),
        "a",
        false
      )
    )
    let err: unknown
    try {
      apply(configMaps, a, cm({ x: "2" }), "b", false)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ApplyConflict)
    expect((err as ApplyConflict).message).toBe('Apply failed with 1 conflict: conflict with "a": .data.x')
    expect((err as ApplyConflict).causes).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "a"', field: ".data.x" }
    ])
    const forced = apply(configMaps, a, cm({ x: "2" }), "b", true)
    expect(forced["data"]).toEqual({ x: "2" })
    expect(fieldsOf(forced)).toEqual([{ manager: "b", operation: "Apply", fieldsV1: { "f:data": { "f:x": {} } } }])
  })

  it("a field the applier omits now is removed; one another manager shares stays", () => {
    const a = stored(
      apply(
        configMaps,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default" } },
        cm({ x: "1", y: "2" }),
        "a",
        false
      )
    )
    expect(apply(configMaps, a, cm({ x: "1" }), "a", false)["data"]).toEqual({ x: "1" })
    const shared = stored(apply(configMaps, a, cm({ y: "2" }), "b", false))
    expect(apply(configMaps, shared, cm({ x: "1" }), "a", false)["data"]).toEqual({ x: "1", y: "2" })
  })

  it("an existing object without managedFields gets them on its first apply (before-first-apply)", () => {
    const live = stored(cm({ old: "1" }))
    const o = apply(configMaps, live, cm({ x: "1" }), "a", false)
    expect(fieldsOf(o)).toEqual([
      { manager: "a", operation: "Apply", fieldsV1: { "f:data": { "f:x": {} } } },
      { manager: "before-first-apply", operation: "Update", fieldsV1: { "f:data": { ".": {}, "f:old": {} } } }
    ])
  })

  it("an update of an untracked object records nothing", () => {
    const live = stored(cm({ old: "1" }))
    expect(update(configMaps, live, cm({ old: "2" }), "x").metadata?.["managedFields"]).toBeUndefined()
  })

  it("two appliers of a map list keep their own items", () => {
    const defs = {
      ...builtinDefinitions().definitions,
      w: {
        type: "object",
        properties: {
          apiVersion: { type: "string" },
          kind: { type: "string" },
          metadata: { $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" },
          spec: {
            type: "object",
            properties: {
              items: {
                type: "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                items: { type: "object", properties: { name: { type: "string" }, v: { type: "integer" } } }
              }
            }
          }
        }
      }
    } as const
    const cfg: FieldManagerConfig = {
      typed: { schema: fromOpenApi(defs), type: { named: "w" }, versions: new Set(["ex.com/v1"]) },
      gvk: { group: "ex.com", version: "v1", kind: "W" },
      subresource: "",
      now: () => NOW
    }
    const w = (items: Array<{ name: string; v: number }>): Obj => ({
      apiVersion: "ex.com/v1",
      kind: "W",
      metadata: { name: "w" },
      spec: { items }
    })
    const one = stored(
      apply(cfg, { apiVersion: "ex.com/v1", kind: "W", metadata: { name: "w" } }, w([{ name: "a", v: 1 }]), "m1", false)
    )
    const two = apply(cfg, one, w([{ name: "b", v: 2 }]), "m2", false)
    expect((two["spec"] as { items: unknown }).items).toEqual([
      { name: "a", v: 1 },
      { name: "b", v: 2 }
    ])
    expect(fieldsOf(two).map((e) => e.fieldsV1)).toEqual([
      { "f:spec": { "f:items": { 'k:{"name":"a"}': { ".": {}, "f:name": {}, "f:v": {} } } } },
      { "f:spec": { "f:items": { 'k:{"name":"b"}': { ".": {}, "f:name": {}, "f:v": {} } } } }
    ])
  })
})
