/** Keys as latin1 strings (src/mvcc/key-string.ts): a round trip, and string order is byte order. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { keyBytes, keyString } from "../../src/mvcc/key-string.js"

const compareBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b)

describe("keyString / keyBytes", () => {
  it("round-trip every byte string, views into larger buffers included", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(8), (bytes, offset) => {
        const backing = new Uint8Array(offset + bytes.length + 3)
        backing.set(bytes, offset)
        const view = backing.subarray(offset, offset + bytes.length)
        expect(keyBytes(keyString(view))).toEqual(bytes)
        expect(keyString(view).length).toBe(bytes.length)
      })
    )
  })

  it("order strings as their bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
        const s = keyString(a) < keyString(b) ? -1 : keyString(a) > keyString(b) ? 1 : 0
        expect(s).toBe(Math.sign(compareBytes(a, b)))
      })
    )
  })
})
