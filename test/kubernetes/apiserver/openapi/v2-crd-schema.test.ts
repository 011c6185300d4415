/**
 * A CRD schema made fit for /openapi/v2 (apiextensions' ToStructuralOpenAPIV2; the cases of its
 * conversion_test.go): junctors dropped, nullable fields untyped and not required, fields keeping
 * unknown fields without items/properties (and type object), arrays without items untyped; the
 * input is left as it was.
 */
import { describe, expect, it } from "vitest"
import { toOpenAPIV2Schema } from "../../../../src/kubernetes/apiserver/openapi/v2-crd-schema.js"

describe("toOpenAPIV2Schema", () => {
  it("a nullable field loses its type, and its place in required", () => {
    expect(toOpenAPIV2Schema({ type: "object", nullable: true })).toEqual({})
    const input = {
      type: "object",
      properties: {
        a: { nullable: true, type: "string" },
        b: { nullable: true, type: "string" },
        c: { type: "string" }
      },
      required: ["a", "c"]
    }
    const before = structuredClone(input)
    expect(toOpenAPIV2Schema(input)).toEqual({
      type: "object",
      properties: { a: {}, b: {}, c: { type: "string" } },
      required: ["c"]
    })
    expect(input).toEqual(before)
    expect(
      toOpenAPIV2Schema({
        type: "object",
        additionalProperties: { nullable: true, type: "string" },
        required: ["a", "c"]
      })
    ).toEqual({ type: "object", additionalProperties: {} })
  })

  it("allOf, anyOf, oneOf and not are dropped, at every depth", () => {
    expect(
      toOpenAPIV2Schema({
        type: "object",
        allOf: [{ required: ["a"] }],
        properties: { a: { type: "string", oneOf: [{ pattern: "x" }], anyOf: [{}], not: { enum: ["b"] } } }
      })
    ).toEqual({ type: "object", properties: { a: { type: "string" } } })
  })

  it("a field keeping unknown fields: no items or properties, no type object; an array without items: no type", () => {
    expect(
      toOpenAPIV2Schema({
        type: "object",
        properties: {
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { x: { type: "string" } } },
          list: { type: "array", "x-kubernetes-preserve-unknown-fields": true, items: { type: "string" } },
          items: { type: "array", items: { type: "integer", nullable: true } }
        }
      })
    ).toEqual({
      type: "object",
      properties: {
        free: { "x-kubernetes-preserve-unknown-fields": true },
        list: { "x-kubernetes-preserve-unknown-fields": true },
        items: { type: "array", items: {} }
      }
    })
  })
})
