/**
 * go-json.ts against encoding/json: the scanner's error for each kind of malformed input (the
 * texts Go prints, byte for byte), duplicate keys with their paths, key offsets, and a property:
 * on any JSON text the value is JSON.parse's (the last duplicate wins).
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import {
  goMarshalSorted,
  GoJsonSyntaxError,
  parseGoJson,
  quoteChar,
  renderPath
} from "../../../src/kubernetes/api/go-json.js"

const err = (text: string | Uint8Array) => {
  const r = parseGoJson(typeof text === "string" ? Buffer.from(text, "utf8") : text)
  return r instanceof GoJsonSyntaxError ? r.message : undefined
}

describe("go-json", () => {
  it("encoding/json's syntax errors", () => {
    const cases: Array<[string, string]> = [
      ["", "unexpected end of JSON input"],
      ["{", "unexpected end of JSON input"],
      ['{"a": ', "unexpected end of JSON input"],
      ["{not json", "invalid character 'n' looking for beginning of object key string"],
      ["x", "invalid character 'x' looking for beginning of value"],
      ['{"a" 1}', "invalid character '1' after object key"],
      ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
      ["[1 2]", "invalid character '2' after array element"],
      ["[1,]", "invalid character ']' looking for beginning of value"],
      ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
      ["{} x", "invalid character 'x' after top-level value"],
      ["01", "invalid character '1' after top-level value"],
      ["-x", "invalid character 'x' in numeric literal"],
      ["1.x", "invalid character 'x' after decimal point in numeric literal"],
      ["1ex", "invalid character 'x' in exponent of numeric literal"],
      ["tru", "unexpected end of JSON input"],
      ["trux", "invalid character 'x' in literal true (expecting 'e')"],
      ["nul1", "invalid character '1' in literal null (expecting 'l')"],
      ['"a\\x"', "invalid character 'x' in string escape code"],
      ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
      ['"a\nb"', "invalid character '\\n' in string literal"],
      ["'a'", "invalid character '\\'' looking for beginning of value"],
      ["\u00e9", "invalid character 'Ã' looking for beginning of value"]
    ]
    for (const [text, message] of cases) expect([text, err(text)]).toEqual([text, message])
    expect(quoteChar(0x01)).toBe("'\\x01'")
    expect(quoteChar(0x85)).toBe("'\\u0085'")
  })

  it("duplicate keys with their paths (the last wins), key offsets, Go's sorted marshalling", () => {
    const r = parseGoJson(Buffer.from('{"a":{"x":1,"x":2},"l":[{"k":1,"k":3}],"a":{"y":true}}'))
    if (r instanceof GoJsonSyntaxError) throw new Error(r.message)
    expect(r.value).toEqual({ a: { y: true }, l: [{ k: 3 }] })
    expect(r.duplicates.map((d) => renderPath(d.path))).toEqual(["a.x", "l[0].k", "a"])
    expect(r.offsets.get("l[0].k")).toBe(31)
    expect(goMarshalSorted({ b: 1, a: ["<&>", { d: null, c: 2 }] })).toBe(
      '{"a":["\\u003c\\u0026\\u003e",{"c":2,"d":null}],"b":1}'
    )
  })

  it("property: on any JSON text the value is JSON.parse's", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const r = parseGoJson(Buffer.from(text, "utf8"))
        expect(r instanceof GoJsonSyntaxError ? r.message : r.value).toEqual(JSON.parse(text))
      }),
      { numRuns: 500 }
    )
  })
})
