/**
 * The send side of gRPC framing: what grpcMessage and writeGrpcPrefix write is what the receive
 * side (grpc-deframer.ts) reads back, message for message, and the prefix is gRPC's: a zero
 * compressed flag and the length, big-endian.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { GrpcFrameParser } from "../../src/h2/grpc-deframer.js"
import { GRPC_PREFIX_BYTES, grpcMessage, writeGrpcPrefix } from "../../src/h2/grpc-message-prefix.js"

describe("gRPC message prefix", () => {
  it("is a zero flag and the length as 4 big-endian bytes", () => {
    const framed = grpcMessage(Buffer.alloc(0x010203, 7))
    expect([...framed.subarray(0, GRPC_PREFIX_BYTES)]).toEqual([0, 0, 0x01, 0x02, 0x03])
    expect(framed.length).toBe(GRPC_PREFIX_BYTES + 0x010203)
    const at = Buffer.alloc(12, 0xff)
    writeGrpcPrefix(at, 3, 258)
    expect([...at]).toEqual([0xff, 0xff, 0xff, 0, 0, 0, 1, 2, 0xff, 0xff, 0xff, 0xff])
  })

  it.prop(
    "messages framed by either writer come back whole from the deframer",
    [fc.array(fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.boolean()), { maxLength: 20 })],
    ([messages]) => {
      // one stream of bytes: some messages as grpcMessage's own buffers, some prefixed in place
      const parts = messages.map(([body, inPlace]) => {
        if (!inPlace) return grpcMessage(body)
        const b = Buffer.alloc(GRPC_PREFIX_BYTES + body.length)
        writeGrpcPrefix(b, 0, body.length)
        b.set(body, GRPC_PREFIX_BYTES)
        return b
      })
      const got: Array<Buffer> = []
      const parser = new GrpcFrameParser((buf, start, end) => got.push(Buffer.from(buf.slice(start, end))))
      const bytes = Buffer.concat(parts)
      parser.push(bytes, 0, bytes.length)
      expect(got.map((g) => [...g])).toEqual(messages.map(([body]) => [...body]))
    }
  )
})
