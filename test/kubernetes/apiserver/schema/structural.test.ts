/**
 * ValidateStructural's texts (sorted by text), and pruning and defaulting as the apiserver's
 * algorithms do them.
 */
import { describe, expect, it } from "vitest"
import { fieldErrorText } from "../../../../src/kubernetes/api/status.js"
import { applyDefaults } from "../../../../src/kubernetes/apiserver/schema/defaulting.js"
import type { JSONSchemaProps } from "../../../../src/kubernetes/apiserver/schema/json-schema.js"
import { pruneNonNullableNulls, pruneResource } from "../../../../src/kubernetes/apiserver/schema/pruning.js"
import { validateStructural, validateVersionSchema } from "../../../../src/kubernetes/apiserver/schema/structural.js"

const P = "spec.versions[0].schema.openAPIV3Schema"
const texts = (s: JSONSchemaProps) => validateStructural(P, s).map(fieldErrorText)

describe("structural schemas: ValidateStructural's texts", () => {
  it("types: at the root, for array items, for object fields; the root is an object without additionalProperties", () => {
    expect(texts({ properties: { a: {}, l: { type: "array", items: {} } } })).toEqual([
      `${P}.properties[a].type: Required value: must not be empty for specified object fields`,
      `${P}.properties[l].items.type: Required value: must not be empty for specified array items`,
      `${P}.type: Required value: must not be empty at the root`
    ])
    expect(texts({ type: "array", items: { type: "string" } })).toEqual([
      `${P}.type: Invalid value: "array": must be object at the root`
    ])
    expect(texts({ type: "object", additionalProperties: { type: "string" } })).toEqual([
      `${P}.additionalProperties: Forbidden: must not be used at the root`
    ])
    expect(texts({ type: "object", properties: { l: { type: "array" } } })).toEqual([
      `${P}.properties[l].items: Required value: must be specified`
    ])
  })

  it("int-or-string and preserve-unknown-fields need no type; they exclude each other", () => {
    expect(
      texts({
        type: "object",
        properties: { p: { "x-kubernetes-int-or-string": true }, f: { "x-kubernetes-preserve-unknown-fields": true } }
      })
    ).toEqual([])
    expect(
      texts({
        type: "object",
        properties: { p: { "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true } }
      })
    ).toEqual([
      `${P}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`
    ])
    // the int-or-string anyOf pattern is exempt from the nested rules
    expect(
      texts({
        type: "object",
        properties: { p: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] } }
      })
    ).toEqual([])
  })

  it("nested value validations: no types, defaults, descriptions, nullable, extensions, metadata", () => {
    expect(
      texts({
        type: "object",
        properties: { a: { type: "string" } },
        allOf: [{ description: "d", nullable: true, default: "x", properties: { a: { type: "string" } } }],
        not: { properties: { metadata: { maxLength: 3 } } }
      })
    ).toEqual([
      `${P}.allOf[0].default: Forbidden: must be undefined to be structural`,
      `${P}.allOf[0].description: Forbidden: must be empty to be structural`,
      `${P}.allOf[0].nullable: Forbidden: must be false to be structural`,
      `${P}.allOf[0].properties[a].type: Forbidden: must be empty to be structural`,
      `${P}.not.properties[metadata]: Forbidden: must not be specified in a nested context`,
      `${P}.properties[metadata]: Required value: because it is defined in ${P}.not.properties[metadata]`
    ])
  })

  it("root metadata: only name and generateName; embedded resources are objects with properties", () => {
    expect(
      texts({
        type: "object",
        properties: { metadata: { type: "object", properties: { name: { type: "string", maxLength: 5 } } } }
      })
    ).toEqual([])
    expect(texts({ type: "object", properties: { metadata: { type: "object", required: ["name"] } } })).toEqual([
      `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`
    ])
    expect(texts({ type: "object", properties: { e: { "x-kubernetes-embedded-resource": true } } })).toEqual([
      `${P}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      `${P}.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true`
    ])
  })

  it("the OpenAPI checks beside: unknown types, uniqueItems, nullable root", () => {
    expect(
      validateVersionSchema(P, {
        type: "object",
        nullable: true,
        properties: { a: { type: "float" }, l: { type: "array", uniqueItems: true, items: { type: "string" } } }
      }).map(fieldErrorText)
    ).toEqual([
      `${P}.nullable: Forbidden: nullable cannot be true at the root`,
      `${P}.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`
    ])
  })
})

describe("pruning and defaulting", () => {
  const schema: JSONSchemaProps = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          list: { type: "array", items: { type: "object", properties: { a: { type: "string", default: "d" } } } },
          keep: {
            type: "object",
            "x-kubernetes-preserve-unknown-fields": true,
            properties: { n: { type: "object", properties: {} } }
          },
          m: { type: "object", additionalProperties: { type: "integer", default: 0 } },
          nul: { type: "string" },
          ok: { type: "string", nullable: true },
          e: { type: "object", "x-kubernetes-embedded-resource": true, properties: { spec: { type: "object" } } }
        }
      }
    }
  }

  it("pruning: unknown fields anywhere, sorted paths; root and embedded apiVersion/kind/metadata kept; preserve-unknown-fields keeps, but not below a known field", () => {
    const obj: Record<string, unknown> = {
      apiVersion: "x/v1",
      kind: "K",
      metadata: { name: "n" },
      extra: 1,
      spec: {
        list: [{ a: "x", b: 1 }],
        keep: { anything: 1, n: { gone: 1 } },
        m: { k: 1 },
        e: { apiVersion: "v1", kind: "Pod", metadata: {}, spec: {}, status: {} }
      }
    }
    expect(pruneResource(obj, schema)).toEqual(["extra", "spec.e.status", "spec.keep.n.gone", "spec.list[0].b"])
    expect(obj).toEqual({
      apiVersion: "x/v1",
      kind: "K",
      metadata: { name: "n" },
      spec: {
        list: [{ a: "x" }],
        keep: { anything: 1, n: {} },
        m: { k: 1 },
        e: { apiVersion: "v1", kind: "Pod", metadata: {}, spec: {} }
      }
    })
  })

  it("nulls: non-nullable ones without a default removed, nullable ones kept; defaults fill absent fields and non-nullable nulls", () => {
    const obj: Record<string, unknown> = { spec: { nul: null, ok: null, list: [{}, { a: null }], m: { z: null } } }
    pruneNonNullableNulls(obj, schema)
    expect(obj).toEqual({ spec: { ok: null, list: [{}, { a: null }], m: { z: null } } })
    applyDefaults(obj, schema)
    expect(obj).toEqual({ spec: { ok: null, list: [{ a: "d" }, { a: "d" }], m: { z: 0 } } })
  })
})
