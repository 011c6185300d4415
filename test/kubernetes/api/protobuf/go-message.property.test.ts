/**
 * The JSON ↔ protobuf codec of the built-in kinds (src/kubernetes/api/protobuf): for random objects
 * in Go's JSON shape, JSON → `k8s\0` + Unknown + message → JSON is the identity, and the envelope
 * names the object's apiVersion and kind. A watch frame carries the full encoding in its object.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { decodeProtobuf, encodeProtobuf, watchFrame } from "../../../../src/kubernetes/api/protobuf/envelope.js"
import { lookupMessage, WATCH_EVENT } from "../../../../src/kubernetes/api/protobuf/messages.js"
import * as A from "./arbitraries.js"

const roundTrip = (obj: Record<string, unknown>) => {
  const bytes = encodeProtobuf(obj)
  expect(Array.from(bytes.subarray(0, 4))).toEqual([0x6b, 0x38, 0x73, 0x00])
  const back = decodeProtobuf(bytes, { apiVersion: "", kind: "", custom: false })
  expect(back).toEqual(Either.right(obj))
}

const kinds: ReadonlyArray<[string, fc.Arbitrary<Record<string, unknown>>]> = [
  ["ConfigMap", A.configMap],
  ["Secret", A.secret],
  ["Namespace", A.namespace],
  ["Lease", A.lease],
  ["core/v1 Event", A.coreEvent],
  ["events.k8s.io/v1 Event", A.eventsEvent],
  ["ConfigMapList", A.listOf("v1", "ConfigMap", A.configMap)],
  ["SecretList", A.listOf("v1", "Secret", A.secret)],
  ["NamespaceList", A.listOf("v1", "Namespace", A.namespace)],
  ["LeaseList", A.listOf("coordination.k8s.io/v1", "Lease", A.lease)]
]

describe("protobuf codec: JSON → protobuf → JSON", () => {
  for (const [name, arb] of kinds) {
    it(`is the identity for random ${name}s`, () => {
      fc.assert(fc.property(arb, roundTrip), { numRuns: 200 })
    })
  }

  it("a watch frame: big-endian length, then WatchEvent{type, object.raw = the full encoding}", () => {
    fc.assert(
      fc.property(A.configMap, fc.constantFrom("ADDED", "MODIFIED", "DELETED"), (cm, type) => {
        const full = encodeProtobuf(cm)
        const frame = watchFrame(type, full)
        const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0)
        expect(length).toBe(frame.length - 4)
        const event = lookupMessage(WATCH_EVENT).decode(frame.subarray(4)) as unknown as {
          type: string
          object: { raw: Uint8Array }
        }
        expect(event.type).toBe(type)
        expect(Buffer.from(event.object.raw).equals(Buffer.from(full))).toBe(true)
      }),
      { numRuns: 50 }
    )
  })
})
