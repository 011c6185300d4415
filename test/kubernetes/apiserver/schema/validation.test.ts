/**
 * A custom resource against its schema: one text per keyword, as kube-openapi's validator and
 * apiextensions' kubeOpenAPIResultToFieldErrors build it (the `<field>: <body>` of each error).
 */
import { describe, expect, it } from "vitest"
import { fieldErrorText } from "../../../../src/kubernetes/api/status.js"
import type { JSONSchemaProps } from "../../../../src/kubernetes/apiserver/schema/json-schema.js"
import { validateAgainstSchema } from "../../../../src/kubernetes/apiserver/schema/validation.js"

const spec = (props: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: "object",
  properties: { spec: { type: "object", properties: props, ...extra } }
})

const texts = (s: JSONSchemaProps, obj: unknown) => validateAgainstSchema(s, obj).map(fieldErrorText)

describe("custom resource validation: the apiserver's texts per keyword", () => {
  it("type: the sent JSON type's name as the value", () => {
    const s = spec({
      level: { type: "integer" },
      on: { type: "boolean" },
      list: { type: "array", items: { type: "string" } }
    })
    expect(texts(s, { spec: { level: "high" } })).toEqual([
      'spec.level: Invalid value: "string": spec.level in body must be of type integer: "string"'
    ])
    expect(texts(s, { spec: { level: 1.5 } })).toEqual([
      'spec.level: Invalid value: "number": spec.level in body must be of type integer: "number"'
    ])
    expect(texts(s, { spec: { on: "yes", list: {} } })).toEqual([
      'spec.on: Invalid value: "string": spec.on in body must be of type boolean: "string"',
      'spec.list: Invalid value: "object": spec.list in body must be of type array: "object"'
    ])
    expect(validateAgainstSchema(s, { spec: { level: "x" } })[0]!.type).toBe("FieldValueTypeInvalid")
    // an integer is a number
    expect(texts(spec({ n: { type: "number" } }), { spec: { n: 3 } })).toEqual([])
  })

  it("nullable: null is refused unless nullable", () => {
    expect(texts(spec({ a: { type: "string" } }), { spec: { a: null } })).toEqual([
      'spec.a: Invalid value: "null": spec.a in body must be of type string: "null"'
    ])
    expect(texts(spec({ a: { type: "string", nullable: true } }), { spec: { a: null } })).toEqual([])
  })

  it("required: a Required value without detail, in the schema's order", () => {
    expect(
      texts(spec({ a: { type: "string" }, b: { type: "string" } }, { required: ["b", "a"] }), { spec: {} })
    ).toEqual(["spec.b: Required value", "spec.a: Required value"])
    expect(texts({ type: "object", required: ["spec"] }, {})).toEqual(["spec: Required value"])
  })

  it("enum: Unsupported value with the supported values (non-strings as JSON)", () => {
    expect(texts(spec({ color: { type: "string", enum: ["red", "green"] } }), { spec: { color: "purple" } })).toEqual([
      'spec.color: Unsupported value: "purple": supported values: "red", "green"'
    ])
    expect(texts(spec({ n: { type: "integer", enum: [1, 2] } }), { spec: { n: 3 } })).toEqual([
      'spec.n: Unsupported value: 3: supported values: "1", "2"'
    ])
  })

  it("minimum and maximum, inclusive and exclusive", () => {
    const s = spec({
      a: { type: "integer", minimum: 1, maximum: 10 },
      b: { type: "number", minimum: 1, exclusiveMinimum: true, maximum: 2.5, exclusiveMaximum: true }
    })
    expect(texts(s, { spec: { a: 99, b: 1 } })).toEqual([
      "spec.a: Invalid value: 99: spec.a in body should be less than or equal to 10",
      "spec.b: Invalid value: 1: spec.b in body should be greater than 1"
    ])
    expect(texts(s, { spec: { a: 0, b: 2.5 } })).toEqual([
      "spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1",
      "spec.b: Invalid value: 2.5: spec.b in body should be less than 2.5"
    ])
    expect(texts(s, { spec: { a: 10, b: 2 } })).toEqual([])
    expect(texts(spec({ m: { type: "integer", multipleOf: 3 } }), { spec: { m: 7 } })).toEqual([
      "spec.m: Invalid value: 7: spec.m in body should be a multiple of 3"
    ])
  })

  it("maxLength (Too long, in characters), minLength, pattern: the first that fails", () => {
    const s = spec({ name: { type: "string", minLength: 2, maxLength: 5, pattern: "^[a-z]+$" } })
    expect(texts(s, { spec: { name: "abcdef" } })).toEqual(["spec.name: Too long: may not be more than 5 bytes"])
    expect(texts(s, { spec: { name: "a" } })).toEqual([
      'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'
    ])
    expect(texts(s, { spec: { name: "ABC" } })).toEqual([
      `spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`
    ])
    expect(texts(s, { spec: { name: "héllo" } })).toEqual([
      `spec.name: Invalid value: "héllo": spec.name in body should match '^[a-z]+$'`
    ])
  })

  it("minItems, maxItems, items with their index in the path", () => {
    const s = spec({ items: { type: "array", minItems: 1, maxItems: 2, items: { type: "integer", maximum: 5 } } })
    expect(texts(s, { spec: { items: [] } })).toEqual([
      "spec.items: Invalid value: 0: spec.items in body should have at least 1 items"
    ])
    expect(texts(s, { spec: { items: [1, 9, 3] } })).toEqual([
      "spec.items[1]: Invalid value: 9: spec.items[1] in body should be less than or equal to 5",
      "spec.items: Too many: 3: must have at most 2 items"
    ])
  })

  it("maxProperties, minProperties, additionalProperties schemas", () => {
    const s = spec({
      labels: { type: "object", maxProperties: 1, additionalProperties: { type: "string" } },
      m: { type: "object", minProperties: 1 }
    })
    expect(texts(s, { spec: { labels: { a: "x", b: 2 }, m: {} } })).toEqual([
      "spec.labels: Too many: 2: must have at most 1 items",
      'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"',
      "spec.m: Invalid value: 0: spec.m in body should have at least 1 properties"
    ])
  })

  it("formats the apiserver checks (and not the ones it drops)", () => {
    const s = spec({
      d: { type: "string", format: "date" },
      t: { type: "string", format: "date-time" },
      ip: { type: "string", format: "ipv4" },
      u: { type: "string", format: "uuid" },
      h: { type: "string", format: "hostname" },
      x: { type: "string", format: "no-such-format" }
    })
    expect(
      texts(s, {
        spec: { d: "2024-02-30", t: "yesterday", ip: "1.2.3", u: "nope", h: "-bad-", x: "anything" }
      })
    ).toEqual([
      'spec.d: Invalid value: "2024-02-30": spec.d in body must be of type date: "2024-02-30"',
      'spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday"',
      'spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"',
      'spec.u: Invalid value: "nope": spec.u in body must be of type uuid: "nope"',
      'spec.h: Invalid value: "-bad-": spec.h in body must be of type hostname: "-bad-"'
    ])
    expect(
      texts(s, {
        spec: {
          d: "2024-02-29",
          t: "2024-02-29T10:00:00Z",
          ip: "10.0.0.1",
          u: "123e4567-e89b-12d3-a456-426614174000",
          h: "example.com"
        }
      })
    ).toEqual([])
  })

  it("x-kubernetes-int-or-string: an integer or a string, nothing else", () => {
    const s = spec({ port: { "x-kubernetes-int-or-string": true } })
    expect(texts(s, { spec: { port: 80 } })).toEqual([])
    expect(texts(s, { spec: { port: "http" } })).toEqual([])
    expect(texts(s, { spec: { port: true } })).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'
    ])
  })

  it("x-kubernetes-preserve-unknown-fields: unknown fields pass, known ones are still checked", () => {
    const s = spec({ a: { type: "integer" } }, { "x-kubernetes-preserve-unknown-fields": true })
    expect(texts(s, { spec: { a: 1, anything: { x: 1 } } })).toEqual([])
    expect(texts(s, { spec: { a: "1" } })).toHaveLength(1)
  })

  it("allOf / anyOf / oneOf / not: the composite error at <nil>, and the branch's errors", () => {
    const s: JSONSchemaProps = {
      type: "object",
      properties: { spec: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } } } },
      anyOf: [{ required: ["x"] }, { required: ["y"] }]
    }
    expect(texts(s, { spec: {} })).toEqual([
      '<nil>: Invalid value: "": "" must validate at least one schema (anyOf)',
      "x: Required value"
    ])
    const one: JSONSchemaProps = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: { a: { type: "integer" } },
          oneOf: [{ required: ["a"] }, { properties: { a: { minimum: 0 } } }]
        }
      }
    }
    expect(texts(one, { spec: { a: 1 } })).toEqual([
      '<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives'
    ])
    const not: JSONSchemaProps = { type: "object", properties: { spec: { type: "object", not: { required: ["a"] } } } }
    expect(texts(not, { spec: { a: 1 } })).toEqual([
      '<nil>: Invalid value: "": "spec" must not validate the schema (not)'
    ])
  })

  it("/status: the paths get status as their prefix; the messages keep the validator's own names", () => {
    const status: JSONSchemaProps = { type: "object", properties: { replicas: { type: "integer" } } }
    expect(validateAgainstSchema(status, { replicas: "x" }, "status").map(fieldErrorText)).toEqual([
      'status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"'
    ])
  })
})
