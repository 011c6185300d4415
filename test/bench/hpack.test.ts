/**
 * The bench's HPACK: RFC 7541's own examples (Appendix C: requests with and without Huffman on one
 * dynamic table, responses with a 256-octet table that evicts), Huffman round trips over every
 * byte, and malformed input refused. (End-to-end against nghttp2's encoder: h2.test.ts.)
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { grpcRequestHeaderBlock, HpackDecoder } from "../../src/h2/hpack.js"
import { huffmanDecode } from "../../src/h2/huffman.js"
import { HUFFMAN_CODES, HUFFMAN_LENGTHS } from "../../src/h2/huffman-table.js"

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex")
const decodeAll = (decoder: HpackDecoder, blocks: ReadonlyArray<string>) =>
  blocks.map((b) => {
    const buf = hex(b)
    return decoder.decode(buf, 0, buf.length)
  })
const pairs = (list: ReadonlyArray<string>) => list.flatMap((v, i) => (i % 2 === 0 ? [[v, list[i + 1]]] : []))

/** A test-only Huffman encoder from the same table (decoding it back checks the trie). */
const huffmanEncode = (bytes: Uint8Array): Uint8Array => {
  let bits = ""
  for (const b of bytes) bits += HUFFMAN_CODES[b]!.toString(2).padStart(HUFFMAN_LENGTHS[b]!, "0")
  while (bits.length % 8 !== 0) bits += "1" // EOS prefix as padding
  return Uint8Array.from(bits.match(/.{8}/g) ?? [], (byte) => parseInt(byte, 2))
}

const requests = [
  [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "www.example.com"]
  ],
  [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "www.example.com"],
    ["cache-control", "no-cache"]
  ],
  [
    [":method", "GET"],
    [":scheme", "https"],
    [":path", "/index.html"],
    [":authority", "www.example.com"],
    ["custom-key", "custom-value"]
  ]
]
const responses = (date2: string) => [
  [
    [":status", "302"],
    ["cache-control", "private"],
    ["date", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["location", "https://www.example.com"]
  ],
  [
    [":status", "307"],
    ["cache-control", "private"],
    ["date", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["location", "https://www.example.com"]
  ],
  [
    [":status", "200"],
    ["cache-control", "private"],
    ["date", date2],
    ["location", "https://www.example.com"],
    ["content-encoding", "gzip"],
    ["set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"]
  ]
]

describe("HPACK decoder", () => {
  it("decodes RFC 7541 C.3 and C.4 (requests sharing one dynamic table)", () => {
    const plain = [
      "828684410f7777772e6578616d706c652e636f6d",
      "828684be58086e6f2d6361636865",
      "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"
    ]
    const huffman = [
      "828684418cf1e3c2e5f23a6ba0ab90f4ff",
      "828684be5886a8eb10649cbf",
      "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"
    ]
    expect(decodeAll(new HpackDecoder(), plain).map(pairs)).toEqual(requests)
    expect(decodeAll(new HpackDecoder(), huffman).map(pairs)).toEqual(requests)
  })

  it("decodes RFC 7541 C.5 and C.6 (a 256-octet table that evicts)", () => {
    // each sequence starts with a table size update to 256 (3fe101)
    const plain = [
      "3fe1014803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
      "4803333037c1c0bf",
      "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31"
    ]
    const huffman = [
      "3fe101488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
      "4883640effc1c0bf",
      "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"
    ]
    expect(decodeAll(new HpackDecoder(), plain).map(pairs)).toEqual(responses("Mon, 21 Oct 2013 20:13:22 GMT"))
    expect(decodeAll(new HpackDecoder(), huffman).map(pairs)).toEqual(responses("Mon, 21 Oct 2013 20:13:22 GMT"))
  })

  it("reads the request header block it encodes", () => {
    const block = grpcRequestHeaderBlock("/etcdserverpb.KV/Put", "127.0.0.1:2379")
    expect(pairs(new HpackDecoder().decode(block, 0, block.length))).toEqual([
      [":method", "POST"],
      [":scheme", "http"],
      [":path", "/etcdserverpb.KV/Put"],
      [":authority", "127.0.0.1:2379"],
      ["content-type", "application/grpc"],
      ["te", "trailers"]
    ])
    const long = "/x/" + "y".repeat(300) // lengths past the 7-bit prefix
    const b2 = grpcRequestHeaderBlock(long, "h:1")
    expect(new HpackDecoder().decode(b2, 0, b2.length)[5]).toBe(long)
  })

  it("refuses malformed blocks", () => {
    const d = () => new HpackDecoder()
    expect(() => d().decode(hex("80"), 0, 1)).toThrow(/index 0/)
    expect(() => d().decode(hex("be"), 0, 1)).toThrow(/beyond the tables/) // 62: empty dynamic table
    expect(() => d().decode(hex("410f7777"), 0, 4)).toThrow(/beyond the block/)
    expect(() => d().decode(hex("3fe21f"), 0, 3)).toThrow(/above our setting/) // 4097
    expect(() => d().decode(hex("82 3fe101"), 0, 4)).toThrow(/after a field/)
  })
})

describe("Huffman", () => {
  it("decodes the RFC's examples", () => {
    const cases: Array<[string, string]> = [
      ["f1e3c2e5f23a6ba0ab90f4ff", "www.example.com"],
      ["a8eb10649cbf", "no-cache"],
      ["6402", "302"],
      ["d07abe941054d444a8200595040b8166e082a62d1bff", "Mon, 21 Oct 2013 20:13:21 GMT"]
    ]
    for (const [code, text] of cases) expect(huffmanDecode(hex(code), 0, hex(code).length)).toBe(text)
  })

  it.prop(
    "round-trips any bytes",
    [fc.uint8Array({ maxLength: 200 })],
    ([bytes]) => {
      const encoded = huffmanEncode(bytes)
      expect(huffmanDecode(encoded, 0, encoded.length)).toBe(Buffer.from(bytes).toString("latin1"))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("refuses bad padding and EOS", () => {
    // "0" is 00000: padding with zeros instead of ones
    expect(() => huffmanDecode(Uint8Array.of(0x00), 0, 1)).toThrow(/padding/)
    // eight bits of padding (a whole byte of ones after a complete symbol)
    expect(() => huffmanDecode(Uint8Array.of(0x07, 0xff), 0, 2)).toThrow(/padding/)
    // EOS itself: 30 ones
    expect(() => huffmanDecode(Uint8Array.of(0xff, 0xff, 0xff, 0xff), 0, 4)).toThrow(/EOS/)
  })
})
