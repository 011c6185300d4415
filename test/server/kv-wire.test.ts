/**
 * The KV response encoders (src/server/kv-wire.ts) against proto-loader's serializer of the same
 * object: byte for byte for every shape, the odd ones too (int64 as numbers, bigints, strings,
 * zeros present, nulls, bytes as strings, non-objects), and the same error where protobufjs
 * refuses one. The shapes the server builds take the fast path, without protobufjs.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { KeyValue } from "../../src/mvcc/key-value.js"
import { serviceDefinition } from "../../src/proto/load.js"
import { makeHeader } from "../../src/server/header.js"
import { headerFirst, rangeResponseSerializer, withKvWire } from "../../src/server/kv-wire.js"
import { putResponse, rangeResponse, txnResponse } from "../../src/server/kv-pb.js"

type Serialize = (v: unknown) => Buffer
const kv = serviceDefinition("KV")
const reference = (method: string) => kv[method]!.responseSerialize as Serialize

/** What a serializer returns or throws, comparable. */
const outcome = (f: Serialize, v: unknown): string => {
  try {
    return `ok ${Buffer.from(f(v)).toString("hex")}`
  } catch (e) {
    return `throws ${String((e as Error).message)}`
  }
}

const int64: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(0),
  fc.integer({ min: -1000, max: 2 ** 31 }),
  fc.constantFrom(2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1.5, -0, NaN),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
  fc.constantFrom(2n ** 64n, -(2n ** 63n) - 1n, 0n),
  fc.integer({ min: -99999, max: 99999 }).map(String),
  fc.constantFrom("007", "-0", "18446744073709551615", "9223372036854775807", "12345678901234567", "x1", ""),
  fc.constantFrom(null, undefined, true)
)
const bytes: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, "AAEC", 7) }
)
const header: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      { cluster_id: int64, member_id: int64, revision: int64, raft_term: int64 },
      { requiredKeys: [] }
    )
  },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, 5, "h", []) }
)
const keyValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      { key: bytes, create_revision: int64, mod_revision: int64, version: int64, value: bytes, lease: int64 },
      { requiredKeys: [] }
    )
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 3, "kv") }
)
const range: fc.Arbitrary<unknown> = fc.record(
  {
    header,
    kvs: fc.oneof(
      { weight: 8, arbitrary: fc.array(keyValue, { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constantFrom(null, {}, "x") }
    ),
    more: fc.oneof(fc.boolean(), fc.constantFrom(null, undefined, 1)),
    count: int64
  },
  { requiredKeys: [] }
)

describe("KV response encoders", () => {
  it.prop(
    "RangeResponse: protobufjs' bytes or its error, for every shape, the header's bytes cached or not",
    [fc.array(range, { minLength: 1, maxLength: 8 })],
    ([responses]) => {
      const fast = rangeResponseSerializer(reference("Range"))
      for (const r of responses) expect(outcome(fast, r)).toBe(outcome(reference("Range"), r))
    },
    { fastCheck: { numRuns: 400 } }
  )

  it.prop(
    "Put, DeleteRange and Txn responses: the header written first, the rest by protobufjs, the same bytes",
    [
      fc.array(
        fc.tuple(
          fc.constantFrom("Put", "DeleteRange", "Txn", "Compact"),
          fc.record(
            {
              header,
              prev_kv: keyValue,
              deleted: int64,
              prev_kvs: fc.array(keyValue, { maxLength: 2 }),
              succeeded: fc.boolean(),
              responses: fc.array(fc.record({ response_put: fc.record({ header }, { requiredKeys: [] }) }), {
                maxLength: 2
              })
            },
            { requiredKeys: [] }
          )
        ),
        { minLength: 1, maxLength: 8 }
      )
    ],
    ([calls]) => {
      for (const [method, r] of calls) {
        expect(outcome(headerFirst(reference(method)), r)).toBe(outcome(reference(method), r))
      }
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("the responses the server builds never reach protobufjs' fromObject for the header or a Range", () => {
    const h = makeHeader({ clusterId: 14841639068965178418n, memberId: 10276657743932975437n, raftTerm: 2n })
    const kvs: Array<KeyValue> = [
      { key: Buffer.from("a"), createRevision: 2, modRevision: 9, version: 3, value: Buffer.alloc(256, 7), lease: 0n },
      {
        key: Buffer.from("b"),
        createRevision: 4,
        modRevision: 4,
        version: 1,
        value: new Uint8Array(0),
        lease: 2n ** 62n
      }
    ]
    const passed: Array<unknown> = []
    const spy =
      (method: string): Serialize =>
      (v) => {
        passed.push(v)
        return reference(method)(v)
      }
    const wired = withKvWire({ Range: { responseSerialize: spy("Range") }, Put: { responseSerialize: spy("Put") } })
    const rangeRes = rangeResponse(h, { header: { revision: 9 }, kvs, more: true, count: 2 })
    expect(Buffer.from(wired.Range.responseSerialize(rangeRes))).toEqual(Buffer.from(reference("Range")(rangeRes)))
    expect(passed).toEqual([])
    const putRes = putResponse(h, { header: { revision: 10 }, prevKv: kvs[0] })
    expect(Buffer.from(wired.Put.responseSerialize(putRes))).toEqual(Buffer.from(reference("Put")(putRes)))
    expect(passed).toHaveLength(1)
    expect(passed[0]).not.toHaveProperty("header")
    const txn = txnResponse(h, { header: { revision: 11 }, succeeded: true, responses: [] })
    expect(Buffer.from(headerFirst(reference("Txn"))(txn))).toEqual(Buffer.from(reference("Txn")(txn)))
  })
})
