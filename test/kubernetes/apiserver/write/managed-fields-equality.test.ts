/**
 * IgnoreManagedFieldsTimestampsTransformer's rule (managed-fields-equality.ts): an update whose
 * only change is the times of managedFields entries keeps the old times; any other change, an
 * entry more or less, or another order keeps the new ones. And `unchanged`, the no-write test.
 */
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import type { Obj } from "../../../../src/kubernetes/apiserver/kinds/strategy.js"
import {
  ignoreManagedFieldsTimestamps,
  unchanged
} from "../../../../src/kubernetes/apiserver/write/managed-fields-equality.js"

const entry = (manager: string, time: string | undefined, fields: object = { "f:data": { "f:x": {} } }) => ({
  manager,
  operation: "Apply",
  apiVersion: "v1",
  ...(time === undefined ? {} : { time }),
  fieldsType: "FieldsV1",
  fieldsV1: fields
})
const cm = (data: Record<string, string>, managedFields: ReadonlyArray<object>): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "n", resourceVersion: "5", managedFields },
    data
  }) as unknown as KubeObject
const T1 = "2026-11-28T10:00:01Z"
const T2 = "2026-11-28T10:00:02Z"

describe("ignoreManagedFieldsTimestamps", () => {
  it("keeps the old times when nothing but the times changed (a manifest applied again a second later)", () => {
    const old = cm({ x: "1" }, [entry("a", T1), entry("b", undefined)])
    const next = cm({ x: "1" }, [entry("a", T2), entry("b", T2)]) as unknown as Obj
    const out = ignoreManagedFieldsTimestamps(next, old)
    expect(out.metadata.managedFields).toEqual([entry("a", T1), entry("b", undefined)])
    expect(unchanged(out, old)).toBe(true)
  })

  it("keeps the new times when anything else changed", () => {
    const old = cm({ x: "1" }, [entry("a", T1)])
    const data = ignoreManagedFieldsTimestamps(cm({ x: "2" }, [entry("a", T2)]) as unknown as Obj, old)
    expect(data.metadata.managedFields).toEqual([entry("a", T2)])
    const fields = cm({ x: "1" }, [entry("a", T2, { "f:data": {} })]) as unknown as Obj
    expect(ignoreManagedFieldsTimestamps(fields, old).metadata.managedFields).toEqual([
      entry("a", T2, { "f:data": {} })
    ])
    const more = cm({ x: "1" }, [entry("a", T2), entry("b", T2)]) as unknown as Obj
    expect(ignoreManagedFieldsTimestamps(more, old).metadata.managedFields).toHaveLength(2)
    const twoOld = cm({ x: "1" }, [entry("a", T1), entry("b", T1)])
    const swapped = cm({ x: "1" }, [entry("b", T2), entry("a", T2)]) as unknown as Obj
    expect(ignoreManagedFieldsTimestamps(swapped, twoOld).metadata.managedFields).toEqual([
      entry("b", T2),
      entry("a", T2)
    ])
  })

  it("unchanged compares the stored JSON's values, not the order of keys", () => {
    const old = cm({ x: "1", y: "2" }, [entry("a", T1)])
    const reordered = { data: { y: "2", x: "1" }, kind: "ConfigMap", apiVersion: "v1", metadata: old.metadata }
    expect(unchanged(reordered as unknown as Obj, old)).toBe(true)
    // a member whose value is undefined is not stored: absent; null is a value
    expect(unchanged({ ...reordered, immutable: undefined } as unknown as Obj, old)).toBe(true)
    expect(unchanged({ ...reordered, immutable: null } as unknown as Obj, old)).toBe(false)
    expect(unchanged(cm({ x: "1" }, [entry("a", T1)]) as unknown as Obj, old)).toBe(false)
  })
})
