/**
 * The schema validator against its rules, on random structural schemas: an object generated to
 * meet the schema is accepted; the same object with one planted violation (a wrong type, a value
 * outside the enum, past a bound, a missing required field, too many items, a pattern miss) is
 * refused with exactly one error, at the planted path, of the rule's kind. Pruning then defaulting
 * leave a valid object valid, and pruning is idempotent and removes only what the schema does not
 * know.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import type { JSONSchemaProps } from "../../../../src/kubernetes/apiserver/schema/json-schema.js"
import { applyDefaults } from "../../../../src/kubernetes/apiserver/schema/defaulting.js"
import { pruneResource } from "../../../../src/kubernetes/apiserver/schema/pruning.js"
import { validateAgainstSchema } from "../../../../src/kubernetes/apiserver/schema/validation.js"
import { validateStructural } from "../../../../src/kubernetes/apiserver/schema/structural.js"

const NAME = fc.constantFrom("a", "b", "c", "size", "name", "items")

/** A random structural schema node (depth-limited). */
const schemaArb: fc.Arbitrary<JSONSchemaProps> = fc.letrec<{ node: JSONSchemaProps }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      type: fc.constant("integer"),
      minimum: fc.integer({ min: -5, max: 0 }),
      maximum: fc.integer({ min: 1, max: 50 }),
      exclusiveMaximum: fc.boolean()
    }),
    fc.record({
      type: fc.constant("string"),
      maxLength: fc.integer({ min: 1, max: 8 }),
      pattern: fc.constant("^[a-z]*$")
    }),
    fc.record({
      type: fc.constant("string"),
      enum: fc.uniqueArray(fc.stringMatching(/^[a-z]{1,4}$/), { minLength: 1, maxLength: 3 })
    }),
    fc.record({ type: fc.constant("boolean") }),
    fc.record({ type: fc.constant("array"), items: tie("node"), maxItems: fc.integer({ min: 1, max: 3 }) }),
    fc.dictionary(NAME, tie("node"), { minKeys: 1, maxKeys: 3 }).chain((properties) =>
      fc.record({
        type: fc.constant("object"),
        properties: fc.constant(properties),
        required: fc.subarray(Object.keys(properties))
      })
    )
  )
})).node

/** A value that meets the schema. */
const valid = (s: JSONSchemaProps): fc.Arbitrary<unknown> => {
  switch (s.type) {
    case "integer":
      return fc.integer({ min: s.minimum!, max: s.exclusiveMaximum === true ? s.maximum! - 1 : s.maximum! })
    case "string":
      return s.enum !== undefined
        ? fc.constantFrom(...(s.enum as Array<string>))
        : fc.stringMatching(/^[a-z]*$/).filter((x) => x.length <= s.maxLength!)
    case "boolean":
      return fc.boolean()
    case "array":
      return fc.array(valid(s.items!), { maxLength: s.maxItems! })
    default: {
      const props = s.properties ?? {}
      const required = new Set(s.required ?? [])
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, p]) => [k, valid(p)])), {
        requiredKeys: [...required]
      })
    }
  }
}

interface Plant {
  readonly path: string
  readonly type: string
}

/** Plants one violation somewhere in `v` (mutating it); where and what, or undefined when there is no room. */
const plant = (s: JSONSchemaProps, v: unknown, path: string, pick: number): Plant | undefined => {
  if (s.type === "object") {
    const o = v as Record<string, unknown>
    const present = Object.keys(s.properties ?? {}).filter((k) => Object.hasOwn(o, k))
    const missingRequired = (s.required ?? []).filter((k) => Object.hasOwn(o, k))
    if (present.length > 0 && pick % 3 !== 0) {
      const k = present[pick % present.length]!
      return plant(s.properties![k]!, o[k], path === "" ? k : `${path}.${k}`, Math.floor(pick / 3))
    }
    if (missingRequired.length > 0) {
      const k = missingRequired[pick % missingRequired.length]!
      delete o[k]
      return { path: path === "" ? k : `${path}.${k}`, type: "FieldValueRequired" }
    }
    return undefined
  }
  if (s.type === "array") {
    const a = v as Array<unknown>
    if (a.length > 0 && pick % 2 === 0)
      return plant(s.items!, a[pick % a.length], `${path}[${pick % a.length}]`, pick >> 1)
    return undefined
  }
  return undefined
}

/** A leaf's replacement that breaks exactly one of its rules. */
const breakLeaf = (s: JSONSchemaProps, pick: number): { value: unknown; type: string } => {
  if (s.type === "integer") {
    if (pick % 3 === 0) return { value: "x", type: "FieldValueTypeInvalid" }
    // just past a bound (the maximum itself when it is exclusive)
    if (pick % 3 === 1)
      return { value: s.exclusiveMaximum === true ? s.maximum! : s.maximum! + 1, type: "FieldValueInvalid" }
    return { value: s.minimum! - 1, type: "FieldValueInvalid" }
  }
  if (s.type === "string" && s.enum !== undefined) return { value: "ZZZZZ", type: "FieldValueNotSupported" }
  if (s.type === "string")
    return pick % 2 === 0
      ? { value: "a".repeat(s.maxLength! + 1), type: "FieldValueTooLong" }
      : { value: "A", type: "FieldValueInvalid" }
  if (s.type === "boolean") return { value: 1, type: "FieldValueTypeInvalid" }
  return { value: true, type: "FieldValueTypeInvalid" }
}

/** Replaces the value at a leaf chosen by `pick` with a broken one. */
const plantLeaf = (s: JSONSchemaProps, v: unknown, path: string, pick: number): Plant | undefined => {
  if (s.type === "object") {
    const o = v as Record<string, unknown>
    const present = Object.keys(s.properties ?? {}).filter((k) => Object.hasOwn(o, k))
    if (present.length === 0) return undefined
    const k = present[pick % present.length]!
    const child = s.properties![k]!
    const p = path === "" ? k : `${path}.${k}`
    if (child.type === "object" || (child.type === "array" && (o[k] as Array<unknown>).length > 0 && pick % 2 === 1))
      return plantLeaf(child, o[k], p, pick >> 1)
    if (child.type === "array") {
      o[k] = Array.from({ length: child.maxItems! + 1 }, () => null)
      return { path: p, type: "__array__" }
    }
    const broken = breakLeaf(child, pick >> 1)
    o[k] = broken.value
    return { path: p, type: broken.type }
  }
  if (s.type === "array") {
    const a = v as Array<unknown>
    const i = pick % a.length
    if (s.items!.type === "object") return plantLeaf(s.items!, a[i], `${path}[${i}]`, pick >> 1)
    if (s.items!.type === "array") return undefined
    const broken = breakLeaf(s.items!, pick >> 1)
    a[i] = broken.value
    return { path: `${path}[${i}]`, type: broken.type }
  }
  return undefined
}

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: "object", properties: { spec } })
const objectSchema = schemaArb.filter((s) => s.type === "object")

const caseArb = objectSchema.chain((spec) =>
  fc.record({ spec: fc.constant(spec), value: valid(spec), pick: fc.nat(1 << 16), leaf: fc.boolean() })
)

describe("schema validation: valid objects pass, one planted violation is found where it was planted", () => {
  it("random schemas are structural", () => {
    fc.assert(
      fc.property(objectSchema, (spec) => {
        expect(validateStructural("", root(spec))).toEqual([])
      }),
      { numRuns: 300 }
    )
  })

  it("a generated object is accepted; one planted violation is one error at its path, of its kind", () => {
    let planted = 0
    fc.assert(
      fc.property(caseArb, ({ spec, value, pick, leaf }) => {
        expect(validateAgainstSchema(root(spec), { spec: value })).toEqual([])
        const v = structuredClone(value)
        const p = leaf ? plantLeaf(spec, v, "spec", pick) : plant(spec, v, "spec", pick)
        if (p === undefined) return
        planted++
        const errs = validateAgainstSchema(root(spec), { spec: v })
        if (p.type === "__array__") {
          // too many items of nulls: the count, and each null's type
          expect(errs.some((e) => e.field === p.path && e.type === "FieldValueTooMany")).toBe(true)
          return
        }
        expect(errs.map((e) => [e.field, e.type])).toEqual([[p.path, p.type]])
      }),
      { numRuns: 500 }
    )
    expect(planted).toBeGreaterThan(200)
  })

  it("pruning removes only unknown fields (and is idempotent); defaulting keeps a valid object valid", () => {
    fc.assert(
      fc.property(caseArb, fc.dictionary(fc.constantFrom("zz", "extra"), fc.integer()), ({ spec, value }, junk) => {
        const s = root(spec)
        const obj: Record<string, unknown> = { spec: structuredClone(value), ...junk }
        const pruned = pruneResource(obj, s)
        expect(pruned).toEqual(Object.keys(junk).sort())
        expect(obj).toEqual({ spec: value })
        expect(pruneResource(obj, s)).toEqual([])
        applyDefaults(obj, s)
        expect(validateAgainstSchema(s, obj)).toEqual([])
      }),
      { numRuns: 300 }
    )
  })
})
