/**
 * The built-in kinds' Go types (kinds/go-types.ts and the kinds' schemas) against what
 * encoding/json through sigs.k8s.io/json does with a body: the UnmarshalTypeError text with its
 * struct and field path (map keys and slice indices are not in it), custom decoders' own errors
 * (metav1.Time, []byte), the strict decoder's unknown fields by path, null as Go's zero value; and
 * the write path's type stage (write/decode.ts `typeCheck`): the first error in document order,
 * strict violations in document order.
 */
import { Either, FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { GoJsonSyntaxError, parseGoJson, renderPath } from "../../../../src/kubernetes/api/go-json.js"
import { ConfigMap } from "../../../../src/kubernetes/apiserver/kinds/configmap.js"
import { CustomResourceDefinition } from "../../../../src/kubernetes/apiserver/kinds/crd-type.js"
import { decodeGo, type GoSchema } from "../../../../src/kubernetes/apiserver/kinds/go-types.js"
import { Namespace } from "../../../../src/kubernetes/apiserver/kinds/namespace.js"
import { Secret } from "../../../../src/kubernetes/apiserver/kinds/secret.js"
import { jsonDecoder, typeCheck } from "../../../../src/kubernetes/apiserver/write/decode.js"

const typeErrors = (schema: GoSchema, body: unknown): ReadonlyArray<string> => {
  const r = decodeGo(schema, body)
  return Either.isLeft(r) ? r.left.map((e) => e.message) : []
}

const decoded = (schema: GoSchema, body: unknown) => {
  const r = decodeGo(schema, body)
  if (Either.isLeft(r)) throw new Error(r.left.map((e) => e.message).join("; "))
  return { value: r.right.value, unknown: r.right.unknown }
}

/** the type stage over a JSON text, as the write path runs it */
const typed = (schema: GoSchema, text: string) => {
  const doc = jsonDecoder.decode(Buffer.from(text))
  if (Either.isLeft(doc)) throw new Error(doc.left)
  return typeCheck(schema, doc.right)
}

describe("Go-typed decoding of the built-in kinds", () => {
  it("UnmarshalTypeError: the innermost struct, the struct fields from the root, the Go type", () => {
    const cases: Array<[GoSchema, unknown, string]> = [
      [
        ConfigMap,
        { data: { a: 1 } },
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
      ],
      [
        ConfigMap,
        { data: "x" },
        "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"
      ],
      [
        ConfigMap,
        { metadata: "x" },
        "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
      ],
      [
        ConfigMap,
        { metadata: { labels: { a: true } } },
        "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
      ],
      [
        ConfigMap,
        { metadata: { ownerReferences: [{ name: "o" }, { controller: "yes" }] } },
        "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"
      ],
      [
        ConfigMap,
        { metadata: { generation: 1.5 } },
        "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64"
      ],
      [
        ConfigMap,
        { metadata: { uid: 7 } },
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID"
      ],
      [
        ConfigMap,
        { metadata: { finalizers: [1] } },
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string"
      ],
      [
        ConfigMap,
        { metadata: { creationTimestamp: 5 } },
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"
      ],
      [
        ConfigMap,
        { immutable: "true" },
        "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"
      ],
      [Secret, { data: { a: 1 } }, "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"],
      [
        Secret,
        { type: ["Opaque"] },
        "json: cannot unmarshal array into Go struct field Secret.type of type v1.SecretType"
      ],
      [
        Namespace,
        { spec: { finalizers: [1] } },
        "json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"
      ],
      [
        Namespace,
        { status: { conditions: [{ status: {} }] } },
        "json: cannot unmarshal object into Go struct field NamespaceCondition.status.conditions.status of type v1.ConditionStatus"
      ],
      [
        CustomResourceDefinition,
        { spec: { versions: [{ additionalPrinterColumns: [{ priority: 2 ** 31 }] }] } },
        "json: cannot unmarshal number 2147483648 into Go struct field CustomResourceColumnDefinition.spec.versions.additionalPrinterColumns.priority of type int32"
      ]
    ]
    for (const [schema, body, message] of cases) expect([body, typeErrors(schema, body)]).toEqual([body, [message]])
  })

  it("custom decoders give their own text: metav1.Time (time.Parse), []byte (base64)", () => {
    expect(typeErrors(ConfigMap, { metadata: { creationTimestamp: "yesterday" } })).toEqual([
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
    ])
    expect(typeErrors(ConfigMap, { metadata: { creationTimestamp: "2024-13-01T00:00:00Z" } })).toEqual([
      'parsing time "2024-13-01T00:00:00Z": month out of range'
    ])
    expect(typeErrors(Secret, { data: { a: "YWJj!" } })).toEqual(["illegal base64 data at input byte 4"])
    expect(typeErrors(ConfigMap, { binaryData: { a: "YQ" } })).toEqual(["illegal base64 data at input byte 0"])
    // stored as MarshalJSON writes them: UTC to the second; base64 re-encoded (newlines skipped)
    expect(
      decoded(Secret, { metadata: { creationTimestamp: "2024-01-02T03:04:05.9+01:00" }, data: { a: "YW\nJj" } }).value
    ).toEqual({ metadata: { creationTimestamp: "2024-01-02T02:04:05Z" }, data: { a: "YWJj" } })
  })

  it("unknown fields by path (map keys are data, not fields); null is Go's zero value, left out", () => {
    const r = decoded(ConfigMap, {
      kind: "ConfigMap",
      metadata: { name: "a", bogus: 1, labels: null, ownerReferences: [{ name: "o", extra: true }] },
      data: { "any-key": "v" },
      binaryData: null,
      extra: { deep: 1 }
    })
    // in no particular order: the type stage puts them in document order
    expect(r.unknown.map(renderPath).sort()).toEqual(["extra", "metadata.bogus", "metadata.ownerReferences[0].extra"])
    expect(r.value).toEqual({
      kind: "ConfigMap",
      metadata: { name: "a", ownerReferences: [{ name: "o" }] },
      data: { "any-key": "v" }
    })
    // a CRD's schema is open below items/additionalProperties (JSONSchemaPropsOrArray/Bool)
    const crd = decoded(CustomResourceDefinition, {
      spec: { versions: [{ schema: { openAPIV3Schema: { type: "object", items: { bogus: 1 }, nope: 2 } } }] }
    })
    expect(crd.unknown).toEqual([["spec", "versions", 0, "schema", "openAPIV3Schema", "nope"]])
  })

  it("the type stage: the first type error in document order; strict violations in document order", () => {
    const first = typed(ConfigMap, '{"metadata":{"labels":{"z":1}},"data":{"a":2}}')
    expect(first).toEqual(
      Either.left("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")
    )
    const later = typed(ConfigMap, '{"data":{"a":2},"metadata":{"labels":{"z":1}}}')
    expect(later).toEqual(
      Either.left("json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    )
    const ok = typed(ConfigMap, '{"zz":1,"data":{"a":"x","a":"y"},"metadata":{"bogus":true},"aa":2}')
    if (Either.isLeft(ok)) throw new Error(ok.left)
    expect(ok.right.strict).toEqual([
      'unknown field "zz"',
      'duplicate field "data.a"',
      'unknown field "metadata.bogus"',
      'unknown field "aa"'
    ])
    expect(ok.right.object).toEqual({ data: { a: "y" }, metadata: {} })
  })

  it("property: a well-typed ConfigMap decodes to itself with no unknown fields; an added field is reported", () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9.-]{0,8}$/)
    const stringMap = fc.dictionary(key, fc.string({ maxLength: 6 }), { maxKeys: 4 })
    const configMap = fc.record(
      {
        apiVersion: fc.constant("v1"),
        kind: fc.constant("ConfigMap"),
        metadata: fc.record(
          {
            name: key,
            namespace: key,
            labels: stringMap,
            annotations: stringMap,
            finalizers: fc.array(key, { maxLength: 3 }),
            generation: fc.integer({ min: 0 })
          },
          { requiredKeys: [] }
        ),
        immutable: fc.boolean(),
        data: stringMap,
        binaryData: fc.dictionary(
          key,
          fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString("base64")),
          {
            maxKeys: 3
          }
        )
      },
      { requiredKeys: ["metadata"] }
    )
    fc.assert(
      fc.property(configMap, fc.stringMatching(/^[a-z]{1,6}$/), fc.jsonValue(), (cm, field, junk) => {
        const r = decoded(ConfigMap, structuredClone(cm))
        expect(r).toEqual({ value: cm, unknown: [] })
        fc.pre(!(field in cm) && !["apiVersion", "kind", "metadata", "immutable", "data", "binaryData"].includes(field))
        const text = JSON.stringify({ ...cm, [field]: junk })
        const parsed = parseGoJson(Buffer.from(text))
        if (parsed instanceof GoJsonSyntaxError) throw new Error(parsed.message)
        expect(decoded(ConfigMap, parsed.value)).toEqual({ value: cm, unknown: [[field]] })
      }),
      { numRuns: 300 }
    )
  })
})
