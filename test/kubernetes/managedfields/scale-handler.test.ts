/**
 * ScaleHandler (scale-handler.ts): a resource's managedFields through a scale write. Examples of
 * kube-apiserver v1.37.2's answers (seen with kubectl against it: the replicas taken from an
 * applier, the entry of a new scale manager without a time, an Update manager split in two), and
 * a property test against a model: after the Scale's own field manager ran, whoever changed the
 * replicas owns them alone (unless nobody owned them: a Scale without managers is not tracked)
 * and every other field keeps its managers and times; a write that changes nothing leaves
 * appliers' entries as they were.
 */
import { it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import type { ResourceInfo } from "../../../src/kubernetes/apiserver/resources.js"
import { fieldManagerFor } from "../../../src/kubernetes/apiserver/write/managed-fields.js"
import * as FM from "../../../src/kubernetes/managedfields/field-manager.js"
import type { ManagedFieldsEntry } from "../../../src/kubernetes/managedfields/managed-fields.js"
import { replicasPathOf, toParent, toSubresource } from "../../../src/kubernetes/managedfields/scale-handler.js"

const GV = "ex.com/v1"
const mappings = new Map([
  [GV, replicasPathOf(".spec.replicas")],
  ["ex.com/v0", null]
])
const T = "2026-11-28T10:00:00Z"
const entry = (
  manager: string,
  operation: "Apply" | "Update",
  fields: ReadonlyArray<string>,
  extra: Partial<ManagedFieldsEntry> = {}
): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: GV,
  time: T,
  fieldsType: "FieldsV1",
  fieldsV1: { "f:spec": Object.fromEntries(fields.map((f) => [`f:${f}`, {}])) },
  ...extra
})
const scaleCfg = fieldManagerFor(
  { custom: true, group: "ex.com", kind: "W", versions: ["v1"] } as unknown as ResourceInfo,
  "v1",
  "scale"
)!
const scaleObj = (replicas: number, managedFields?: ReadonlyArray<ManagedFieldsEntry>): FM.Obj => ({
  apiVersion: "autoscaling/v1",
  kind: "Scale",
  metadata: { name: "w", uid: "u-1", ...(managedFields ? { managedFields: managedFields as never } : {}) },
  spec: { replicas },
  status: { replicas: 0 }
})
/** a scale write by `manager` from `from` to `to` replicas, as handlers/scale.ts runs it */
const scaleWrite = (parent: ReadonlyArray<ManagedFieldsEntry>, manager: string, from: number, to: number) => {
  const live = scaleObj(from, toSubresource(parent, mappings))
  const next = FM.update(scaleCfg, live, scaleObj(to), manager)
  return toParent(parent, (next.metadata?.["managedFields"] ?? []) as never, GV, mappings) ?? []
}
const withoutTimes = (es: ReadonlyArray<ManagedFieldsEntry>) => es.map(({ time: _, ...rest }) => rest)

describe("ScaleHandler", () => {
  it("maps the owners of the replicas path to spec.replicas of the Scale, in autoscaling/v1", () => {
    const parent = [entry("a", "Apply", ["replicas", "color"]), entry("u", "Update", ["color"])]
    expect(toSubresource(parent, mappings)).toEqual([
      { ...entry("a", "Apply", ["replicas"]), apiVersion: "autoscaling/v1" }
    ])
  })

  it("a scaler takes the replicas from the applier; its new entry has no time (kube-apiserver's answer)", () => {
    const parent = [entry("kubectl", "Apply", ["color", "replicas"])]
    expect(scaleWrite(parent, "hpa", 1, 3)).toEqual([
      entry("kubectl", "Apply", ["color"]),
      { ...withoutTimes([entry("hpa", "Update", ["replicas"], { subresource: "scale" })])[0]! }
    ])
  })

  it("an Update manager of the replicas is another manager on the Scale: a no-op write splits its entry (as upstream)", () => {
    const parent = [entry("editor", "Update", ["color", "replicas"])]
    expect(scaleWrite(parent, "other", 11, 11)).toEqual([
      withoutTimes([entry("editor", "Update", ["replicas"])])[0],
      entry("editor", "Update", ["color"])
    ])
  })

  it("nobody owns the replicas: the Scale has no managers and the scaler is not tracked (skipNonApplied, as upstream)", () => {
    const parent = [entry("kubectl", "Apply", ["color"])]
    expect(scaleWrite(parent, "hpa", 0, 4)).toEqual(parent)
  })

  it("drops entries of apiVersions the resource does not have; keeps those of versions without scale", () => {
    const parent = [
      entry("old", "Update", ["replicas"], { apiVersion: "ex.com/v9" }),
      entry("v0", "Update", ["replicas"], { apiVersion: "ex.com/v0" })
    ]
    expect(toParent(parent, [], GV, mappings)).toEqual([parent[1]])
  })

  const field = fc.constantFrom("replicas", "color", "size")
  const applier = fc.record({
    manager: fc.constantFrom("a", "b", "c", "d"),
    fields: fc.uniqueArray(field, { minLength: 1, maxLength: 3 }),
    seconds: fc.integer({ min: 0, max: 59 })
  })
  it.prop(
    "after a scale write the one who changed the replicas owns them alone; other fields keep their managers and times",
    [fc.uniqueArray(applier, { selector: (a) => a.manager, maxLength: 4 }), fc.boolean()],
    ([appliers, changes]) => {
      const parent = appliers.map((a) =>
        entry(a.manager, "Apply", a.fields, { time: `2026-11-28T10:00:${String(a.seconds).padStart(2, "0")}Z` })
      )
      const after = scaleWrite(parent, "hpa", 2, changes ? 3 : 2)
      const owners = (f: string) => after.filter((e) => `f:${f}` in ((e.fieldsV1 as any)["f:spec"] ?? {}))
      // the model: appliers keep every field but the replicas (which they keep on a no-op write)
      const model = parent
        .map((e) => {
          const fields = Object.keys((e.fieldsV1 as any)["f:spec"]).map((k) => k.slice(2))
          return { ...e, fields: changes ? fields.filter((f) => f !== "replicas") : fields }
        })
        .filter((e) => e.fields.length > 0)
        .map(({ fields, ...e }) => entry(e.manager!, "Apply", fields, { time: e.time! }))
      const appliersAfter = after.filter((e) => e.operation === "Apply")
      const byManager = (es: ReadonlyArray<ManagedFieldsEntry>) =>
        [...es].sort((x, y) => (x.manager! < y.manager! ? -1 : 1))
      expect(byManager(appliersAfter)).toEqual(byManager(model))
      // a Scale without managers is not tracked (skipNonApplied: it has a uid), as kube-apiserver:
      // when nobody owned the replicas, the scaler does not become their owner either
      const owned = parent.some((e) => "f:replicas" in (e.fieldsV1 as any)["f:spec"])
      if (changes && owned) {
        expect(owners("replicas").map((e) => [e.manager, e.operation, e.subresource, e.time])).toEqual([
          ["hpa", "Update", "scale", undefined]
        ])
      } else expect(after.some((e) => e.manager === "hpa")).toBe(false)
    }
  )
})
