/**
 * The bench's receive framing: whatever way a server's byte stream is cut into DATA chunks, every
 * gRPC message comes out whole, in order, exactly once — and a message that sits whole inside a
 * chunk is handed over as a view of that chunk (no copy).
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { GrpcFrameParser, GrpcMessageError } from "../../src/h2/grpc-deframer.js"

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

/** Feeds `ranges` of `bytes` (in place or as copies) until the parser throws; returns what it threw. */
const feed = (
  parser: GrpcFrameParser,
  bytes: Uint8Array,
  ranges: ReadonlyArray<readonly [number, number]>,
  inPlace: boolean
): unknown => {
  try {
    for (const [from, to] of ranges) {
      if (inPlace) parser.push(bytes, from, to)
      else parser.push(bytes.slice(from, to))
    }
    return undefined
  } catch (e) {
    return e
  }
}

describe("gRPC frame parser, the server's parameters (own buffers, a size limit)", () => {
  it.prop(
    "own buffers: every message whole, in order, each in a Buffer of its own that later input leaves alone",
    [fc.array(body, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 60 }), fc.boolean()],
    ([bodies, cuts, inPlace]) => {
      const got: Array<{ buf: Uint8Array; copy: Buffer }> = []
      const parser = new GrpcFrameParser(
        {
          message: (buf, start, end) => {
            expect([start, end]).toEqual([0, buf.length])
            expect(Buffer.isBuffer(buf)).toBe(true)
            got.push({ buf, copy: Buffer.from(buf) })
          }
        },
        Infinity,
        true
      )
      const bytes = concat(bodies.map(frame))
      expect(feed(parser, bytes, cut(bytes, cuts), inPlace)).toBeUndefined()
      expect(got.length).toBe(bodies.length)
      got.forEach(({ buf, copy }, i) => {
        expect(copy.equals(Buffer.from(bodies[i]!))).toBe(true)
        // kept by the receiver: nothing the parser read afterwards changed it
        expect(Buffer.from(buf).equals(copy)).toBe(true)
        if (buf.length > 0) expect(buf.buffer === bytes.buffer).toBe(false)
      })
      expect(new Set(got.filter((g) => g.buf.length > 0).map((g) => g.buf)).size).toBe(
        got.filter((g) => g.buf.length > 0).length
      )
      expect(parser.buffered).toBe(0)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "a message above the limit is refused once its prefix is read: the ones before it delivered, none after",
    [
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 10 }),
      fc.integer({ min: 41, max: 5000 }),
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 5 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.boolean(),
      fc.boolean()
    ],
    ([before, bigSize, after, cuts, inPlace, own]) => {
      const got: Array<Buffer> = []
      const parser = new GrpcFrameParser((buf, start, end) => got.push(Buffer.from(buf.subarray(start, end))), 40, own)
      const head = concat(before.map(frame))
      const big = frame(patterned(bigSize, 1))
      // the refused message's body is never needed: its prefix alone decides
      const bytes = concat([head, big.subarray(0, 5), ...after.map(frame)])
      const thrown = feed(parser, bytes, cut(bytes, cuts), inPlace)
      expect(thrown).toBeInstanceOf(GrpcMessageError)
      expect((thrown as GrpcMessageError).reason).toBe("tooLarge")
      expect((thrown as GrpcMessageError).size).toBe(bigSize)
      expect(got.length).toBe(before.length)
      got.forEach((g, i) => expect(g.equals(Buffer.from(before[i]!))).toBe(true))
      // it reads nothing more
      parser.push(frame(Buffer.from("late")))
      expect(got.length).toBe(before.length)
      expect(parser.buffered).toBe(0)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a message of exactly the limit passes", () => {
    const got: Array<number> = []
    const parser = new GrpcFrameParser((_buf, start, end) => got.push(end - start), 40, true)
    parser.push(frame(patterned(40, 3)))
    expect(got).toEqual([40])
  })

  it("refuses a compressed message whose prefix arrives a byte at a time, in either mode", () => {
    for (const own of [false, true]) {
      const parser = new GrpcFrameParser(() => {}, Infinity, own)
      const compressed = frame(Buffer.from("xyz"))
      compressed[0] = 1
      let thrown: unknown
      for (const b of compressed) {
        try {
          parser.push(Uint8Array.of(b))
        } catch (e) {
          thrown = e
          break
        }
      }
      expect(thrown).toBeInstanceOf(GrpcMessageError)
      expect((thrown as GrpcMessageError).reason).toBe("compressed")
    }
  })

  it("stop: a partial message is dropped and nothing more is delivered", () => {
    const got: Array<string> = []
    const parser = new GrpcFrameParser(
      (buf, start, end) => got.push(Buffer.from(buf.subarray(start, end)).toString()),
      Infinity,
      true
    )
    const bytes = concat([frame(Buffer.from("one")), frame(Buffer.from("two"))])
    parser.push(bytes, 0, 10) // "one" whole, "two"'s prefix and nothing of its body
    expect(got).toEqual(["one"])
    expect(parser.buffered).toBe(2)
    parser.stop()
    expect(parser.buffered).toBe(0)
    parser.push(bytes, 10)
    parser.push(frame(Buffer.from("three")))
    expect(got).toEqual(["one"])
  })

  it("a receiver that stops the parser from its sink ends the chunk there", () => {
    const got: Array<string> = []
    const parser: GrpcFrameParser = new GrpcFrameParser({
      message: (buf, start, end) => {
        got.push(Buffer.from(buf.subarray(start, end)).toString())
        if (got.length === 2) parser.stop()
      }
    })
    parser.push(concat(["a", "b", "c", "d"].map((s) => frame(Buffer.from(s)))))
    expect(got).toEqual(["a", "b"])
  })
})
