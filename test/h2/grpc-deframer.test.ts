/**
 * The bench's receive framing: whatever way a server's byte stream is cut into DATA chunks, every
 * gRPC message comes out whole, in order, exactly once — and a message that sits whole inside a
 * chunk is handed over as a view of that chunk (no copy).
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { GrpcFrameParser } from "../../src/h2/grpc-deframer.js"

const frame = (body: Uint8Array): Uint8Array => {
  const out = new Uint8Array(5 + body.length)
  new DataView(out.buffer).setUint32(1, body.length)
  out.set(body, 5)
  return out
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** Cuts `bytes` at the given positions (sorted, deduplicated, inside the array) into [start, end) ranges. */
const cut = (bytes: Uint8Array, at: ReadonlyArray<number>): Array<readonly [number, number]> => {
  const points = [...new Set(at.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b)
  const ranges: Array<readonly [number, number]> = []
  let from = 0
  for (const p of [...points, bytes.length]) {
    if (p > from) ranges.push([from, p])
    from = p
  }
  return ranges
}

const patterned = (n: number, seed: number): Uint8Array => {
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed) & 0xff
  return b
}

// Small bodies (many per chunk), a few large ones (over many chunks), and empty ones.
const body = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) },
  // larger than the parser's initial 64 KiB buffer: it must grow
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 100, max: 140_000 }), fc.nat(255)).map(([n, seed]) => patterned(n, seed))
  }
)

describe("gRPC frame parser", () => {
  it.prop(
    "delivers every message whole and in order, however the stream is chunked",
    [fc.array(body, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 60 }), fc.boolean()],
    ([bodies, cuts, inPlace]) => {
      const got: Array<Uint8Array> = []
      // Copy inside the callback: the parser may reuse its buffer for the next message.
      const parser = new GrpcFrameParser((buf, start, end) => got.push(buf.slice(start, end)))
      const bytes = concat(bodies.map(frame))
      // each chunk as its own array, or as a range of one shared buffer (as DATA sits in a socket read)
      for (const [from, to] of cut(bytes, cuts)) {
        if (inPlace) parser.push(bytes, from, to)
        else parser.push(bytes.slice(from, to))
      }
      expect(got.length).toBe(bodies.length)
      got.forEach((g, i) => expect(Buffer.from(g).equals(Buffer.from(bodies[i]!))).toBe(true))
      expect(parser.buffered).toBe(0)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "hands over a message whole inside its chunk without copying",
    [fc.array(fc.uint8Array({ maxLength: 50 }), { minLength: 1, maxLength: 20 })],
    ([bodies]) => {
      const chunk = concat(bodies.map(frame))
      const views: Array<Uint8Array> = []
      new GrpcFrameParser((buf) => views.push(buf)).push(chunk)
      expect(views.length).toBe(bodies.length)
      for (const v of views) expect(v).toBe(chunk)
    }
  )

  it("keeps a partial prefix and a partial body across chunks", () => {
    const got: Array<string> = []
    const parser = new GrpcFrameParser((buf, start, end) => got.push(Buffer.from(buf.subarray(start, end)).toString()))
    const bytes = concat([frame(Buffer.from("hello")), frame(Buffer.from("world!"))])
    for (const b of bytes) parser.push(Uint8Array.of(b)) // one byte at a time
    expect(got).toEqual(["hello", "world!"])
    expect(parser.buffered).toBe(0)
  })

  it("refuses compressed messages (compression is never offered)", () => {
    const compressed = frame(Buffer.from("x"))
    compressed[0] = 1
    expect(() => new GrpcFrameParser(() => {}).push(compressed)).toThrow(/compressed/)
  })
})
