import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { compareBytes, SortedBucket } from "../../src/backend/sorted-bucket.js"

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex")
const key = fc.uint8Array({ minLength: 0, maxLength: 4, max: 3 })
const change = fc.tuple(key, fc.option(fc.uint8Array({ maxLength: 3 }), { nil: undefined }))

describe("SortedBucket", () => {
  it("compareBytes is bytewise with shorter prefixes first", () => {
    expect(compareBytes(Uint8Array.of(1), Uint8Array.of(1, 0))).toBeLessThan(0)
    expect(compareBytes(Uint8Array.of(2), Uint8Array.of(1, 255))).toBeGreaterThan(0)
    expect(compareBytes(Uint8Array.of(), Uint8Array.of())).toBe(0)
  })

  it.prop(
    "small and merged batches match a Map model",
    [
      fc.array(
        fc.oneof(
          fc.array(change, { maxLength: 10 }),
          // at or above the merge threshold (64): merged in one pass
          fc.array(change, { minLength: 64, maxLength: 150 })
        ),
        { maxLength: 6 }
      )
    ],
    ([batches]) => {
      const b = new SortedBucket<Uint8Array>((k, v) => k.length + v.length)
      const model = new Map<string, Uint8Array>()
      for (const batch of batches) {
        b.applyBatch(batch, true)
        for (const [k, v] of batch) {
          if (v === undefined) model.delete(hex(k))
          else model.set(hex(k), v)
        }
        const got: Array<[string, string]> = []
        b.forEachInRange(new Uint8Array(0), undefined, (k, v) => {
          got.push([hex(k), hex(v)])
          return true
        })
        const want = [...model.entries()]
          .sort(([a], [c]) => compareBytes(Buffer.from(a, "hex"), Buffer.from(c, "hex")))
          .map(([k, v]) => [k, hex(v)])
        expect(got).toEqual(want)
        expect(b.bytes).toBe([...model.entries()].reduce((s, [k, v]) => s + k.length / 2 + v.length, 0))
      }
    },
    { fastCheck: { numRuns: 150 } }
  )
})
