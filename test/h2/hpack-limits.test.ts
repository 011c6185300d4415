/** The HPACK decoder's limits for a server (src/h2/hpack.ts): table size updates and header list size. */
import { describe, expect, it } from "vitest"
import { HpackDecoder, HpackError, pushInteger } from "../../src/h2/hpack.js"

const block = (f: (out: Array<number>) => void): Uint8Array => {
  const out: Array<number> = []
  f(out)
  return Uint8Array.from(out)
}

describe("HPACK decoding limits", () => {
  it("refuses a dynamic table size update above our SETTINGS_HEADER_TABLE_SIZE", () => {
    const d = new HpackDecoder(4096)
    const b = block((out) => pushInteger(out, 0x20, 5, 4097))
    expect(() => d.decode(b, 0, b.length)).toThrow(HpackError)
    const ok = block((out) => pushInteger(out, 0x20, 5, 100))
    expect(d.decode(ok, 0, ok.length)).toEqual([])
  })

  it("drops fields past the header list size, keeps the table in step, and says so", () => {
    const d = new HpackDecoder(4096, 100)
    // two literals with incremental indexing and a new name: 32 + 5 + 20 = 57 octets each
    const withIndexing = block((out) => {
      for (const v of ["a".repeat(20), "b".repeat(20)]) {
        out.push(0x40, 5, ...Buffer.from("x-key"), 20, ...Buffer.from(v))
      }
    })
    expect(d.decode(withIndexing, 0, withIndexing.length)).toEqual(["x-key", "a".repeat(20)])
    expect(d.listTooLarge).toBe(true)
    // both entries are in the dynamic table (index 62: the newest, "b")
    const indexed = block((out) => pushInteger(out, 0x80, 7, 62))
    expect(d.decode(indexed, 0, indexed.length)).toEqual(["x-key", "b".repeat(20)])
    expect(d.listTooLarge).toBe(false)
  })
})
