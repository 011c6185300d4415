import { it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { describe, expect } from "vitest"
import { decodeObject, encodeObject } from "../../../src/kubernetes/api/codec.js"
import { isKubeObject, KubeObject } from "../../../src/kubernetes/api/object-meta.js"

const schemaIs = Schema.is(KubeObject)

/** values near the schema's boundary: right shapes with wrong types mixed in */
const metaField = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.string()),
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer()))
)
const nearMeta = fc.record(
  {
    name: metaField,
    namespace: metaField,
    uid: metaField,
    resourceVersion: metaField,
    generation: metaField,
    creationTimestamp: metaField,
    deletionGracePeriodSeconds: metaField,
    labels: metaField,
    annotations: metaField,
    finalizers: metaField,
    ownerReferences: metaField,
    managedFields: metaField,
    other: fc.anything()
  },
  { requiredKeys: [] }
)
const nearObject = fc.record(
  { apiVersion: metaField, kind: metaField, metadata: fc.oneof(nearMeta, fc.anything()), spec: fc.anything() },
  { requiredKeys: [] }
)

describe("KubeObject's fast guard", () => {
  it.prop(
    "agrees with Schema.is(KubeObject) on values near the boundary",
    [nearObject],
    ([u]) => {
      expect(isKubeObject(u)).toBe(schemaIs(u))
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it.prop(
    "agrees with Schema.is(KubeObject) on anything",
    [fc.anything()],
    ([u]) => {
      expect(isKubeObject(u)).toBe(schemaIs(u))
    },
    { fastCheck: { numRuns: 500 } }
  )

  // Effect's arbitrary may let an index-signature entry overwrite a named field ("name": 5), so
  // even generated values are compared against the schema rather than assumed valid
  it.prop(
    "agrees on what the schema generates, and the codec round-trips valid objects",
    [Arbitrary.make(KubeObject)],
    ([o]) => {
      expect(isKubeObject(o)).toBe(schemaIs(o))
      if (!schemaIs(o)) return
      // JSON has no NaN or Infinity (they become null): only what JSON can carry must round-trip
      const viaJson: unknown = JSON.parse(JSON.stringify(o))
      const back = decodeObject(encodeObject(o))
      expect(back._tag).toBe(schemaIs(viaJson) ? "Right" : "Left")
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("explains a failure with the schema's message", () => {
    const r = decodeObject(new TextEncoder().encode('{"metadata":{"name":5}}'))
    expect(r._tag).toBe("Left")
    expect(r._tag === "Left" && r.left).toContain("name")
  })
})
