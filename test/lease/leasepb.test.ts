import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { bytesToLeaseId, composeAutoId, leaseIdToBytes } from "../../src/lease/lease-id.js"
import { decodeLeaseRecord, encodeLeaseRecord } from "../../src/lease/leasepb.js"

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex")

describe("leasepb.Lease codec", () => {
  it("writes etcd's wire bytes", () => {
    // leasepb.Lease{ID: 1, TTL: 10}: field 1 varint 1, field 2 varint 10; RemainingTTL 0 omitted
    expect(hex(encodeLeaseRecord({ id: 1n, ttl: 10, remainingTTL: 0 }))).toBe("0801100a")
    // int64 -1 is a ten-byte varint
    expect(hex(encodeLeaseRecord({ id: -1n, ttl: 2, remainingTTL: 5 }))).toBe("08ffffffffffffffffff0110021805")
    // checked against protobufjs encoding an int64 {ID, TTL} message
    expect(hex(encodeLeaseRecord({ id: 0x694d77aa9e38260fn, ttl: 9_000_000_000, remainingTTL: 0 }))).toBe(
      "088fcce0f1a9f5dda669" + "1080b4c4c321"
    )
  })

  it("skips unknown fields and rejects truncated input", () => {
    // field 4 (len-delimited, 2 bytes) then field 2
    expect(decodeLeaseRecord(Uint8Array.from([0x08, 0x07, 0x22, 0x02, 0xaa, 0xbb, 0x10, 0x03]))).toEqual({
      id: 7n,
      ttl: 3,
      remainingTTL: 0
    })
    expect(() => decodeLeaseRecord(Uint8Array.from([0x08, 0x80]))).toThrow(/truncated/)
    expect(() => decodeLeaseRecord(Uint8Array.from([0x22, 0x05, 0x01]))).toThrow(/truncated/)
  })

  it.prop(
    "round-trips any int64 id and TTLs",
    [
      FastCheck.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
      FastCheck.integer({ min: 0, max: 9_000_000_000 }),
      FastCheck.integer({ min: 0, max: 1 << 30 })
    ],
    ([id, ttl, remainingTTL]) => {
      expect(decodeLeaseRecord(encodeLeaseRecord({ id, ttl, remainingTTL }))).toEqual({ id, ttl, remainingTTL })
      expect(bytesToLeaseId(leaseIdToBytes(id))).toBe(id)
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it("keys the bucket by big-endian id bytes", () => {
    expect(hex(leaseIdToBytes(0x0102030405060708n))).toBe("0102030405060708")
    expect(hex(leaseIdToBytes(-2n))).toBe("fffffffffffffffe")
  })

  it.prop(
    "auto ids are positive 63-bit values",
    [FastCheck.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), FastCheck.integer({ min: 0, max: 1023 })],
    ([hi, lo]) => {
      const id = composeAutoId(hi, lo)
      expect(id >= 0n && id < 1n << 63n).toBe(true)
      expect(id & 0x3ffn).toBe(BigInt(lo))
    }
  )
})
