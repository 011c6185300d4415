/**
 * The gateway's codec pieces on their own: the Go-compatible JSON reader agrees with JSON.parse on
 * what is JSON and what it means, reads a body cut anywhere into the same values (the watch body
 * arrives in chunks), keeps Go's nesting limit; base64 decodes what Node encodes and reports Go's
 * offsets; jsonpb request decoding follows jsonpb's field-name, null and integer rules.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { decodeStdBase64 } from "../../src/server/gateway/base64.js"
import { decodeNext, type JsonValue, JsonSyntaxError, unmarshal } from "../../src/server/gateway/json-scanner.js"
import { decodeMessage, goJsonString, messageType } from "../../src/server/gateway/jsonpb.js"

/** A JsonValue as JSON.parse would give it. */
const toJs = (v: JsonValue): unknown => {
  switch (v._tag) {
    case "object":
      return Object.fromEntries(v.fields.map(([k, x]) => [k, toJs(x)]))
    case "array":
      return v.items.map(toJs)
    case "string":
    case "bool":
      return v.value
    case "number":
      return Number(v.raw)
    case "null":
      return null
  }
}

const parses = (s: string): boolean => {
  try {
    JSON.parse(s)
    return true
  } catch {
    return false
  }
}

/** JSON text, sometimes damaged by one edit. */
const maybeJson = fc
  .tuple(
    fc.json(),
    fc.nat(),
    fc.constantFrom("", "{", "}", "[", "]", ",", ":", '"', "\\", "e", "-", ".", "t", "0", "\u0001")
  )
  .map(([text, at, c]) => {
    const i = at % (text.length + 1)
    return at % 3 === 0
      ? text
      : at % 3 === 1
        ? text.slice(0, i) + c + text.slice(i)
        : text.slice(0, i) + text.slice(i + 1)
  })

describe("json-scanner", () => {
  it.prop("accepts exactly what JSON.parse accepts, with the same meaning", [maybeJson], ([text]) => {
    const v = unmarshal(text)
    expect(v instanceof JsonSyntaxError, text).toBe(!parses(text))
    if (!(v instanceof JsonSyntaxError)) expect(toJs(v)).toEqual(JSON.parse(text))
  })

  it.prop(
    "a body cut anywhere reads as the same values (json.Decoder over a stream)",
    [fc.array(fc.jsonValue(), { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 6 })],
    ([values, cuts]) => {
      const body = values.map((v) => JSON.stringify(v)).join(" \n")
      const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b)
      const seen: Array<unknown> = []
      let received = ""
      let pos = 0
      for (const end of [...points, body.length]) {
        received = body.slice(0, end)
        const complete = end === body.length
        for (;;) {
          const next = decodeNext(received, pos, complete)
          if (next instanceof JsonSyntaxError) throw new Error(`${next.message} at ${pos} in ${received}`)
          if (next._tag !== "Value") break
          seen.push(toJs(next.value))
          pos = next.end
        }
      }
      expect(seen).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))))
    }
  )

  it("Go's texts: incomplete input, bad characters, nesting deeper than 10000", () => {
    const err = (s: string) => (decodeNext(s, 0, true) as JsonSyntaxError).message
    expect(err(`{"key":"Zm9v",`)).toBe("unexpected EOF")
    expect(err(`{"key" 1}`)).toBe("invalid character '1' after object key")
    expect(err(`{"a":1 "b"}`)).toBe("invalid character '\"' after object key:value pair")
    expect(err(`[1 2]`)).toBe("invalid character '2' after array element")
    expect(err(`{1:2}`)).toBe("invalid character '1' looking for beginning of object key string")
    expect(err(`tru`)).toBe("unexpected EOF")
    expect(err(`trux`)).toBe("invalid character 'x' in literal true (expecting 'e')")
    expect(err(`-x`)).toBe("invalid character 'x' in numeric literal")
    expect(err(`"a\u0001"`)).toBe("invalid character '\\x01' in string literal")
    expect(err(`"\\q"`)).toBe("invalid character 'q' in string escape code")
    expect(err("[".repeat(10001))).toBe("invalid character '[' exceeded max depth")
    expect(decodeNext("[".repeat(10000) + "]".repeat(10000), 0, true)._tag).toBe("Value")
    expect(unmarshal("1 2")).toEqual(new JsonSyntaxError("invalid character '2' after top-level value"))
    expect(unmarshal("")).toEqual(new JsonSyntaxError("unexpected end of JSON input"))
    // what follows the first value is not looked at, as Go's Decoder
    expect(decodeNext(`{} garbage`, 0, true)._tag).toBe("Value")
  })
})

describe("base64 (Go's StdEncoding)", () => {
  it.prop("decodes what Node encodes", [fc.uint8Array({ maxLength: 64 })], ([bytes]) => {
    expect(decodeStdBase64(Buffer.from(bytes).toString("base64"))).toEqual(Uint8Array.from(bytes))
  })

  it("Go's offsets for bad input", () => {
    const offset = (s: string) => {
      const r = decodeStdBase64(s)
      return r instanceof Uint8Array ? "ok" : r.message
    }
    expect(offset("YQ")).toBe("illegal base64 data at input byte 0")
    expect(offset("Y!==")).toBe("illegal base64 data at input byte 1")
    expect(offset("YQ==YQ==")).toBe("illegal base64 data at input byte 4")
    expect(offset("YQ=")).toBe("illegal base64 data at input byte 3")
    expect(offset("YQ==\n")).toBe("ok")
  })
})

describe("jsonpb requests", () => {
  const range = messageType("etcdserverpb.RangeRequest")
  const decode = (text: string) => {
    const v = unmarshal(text)
    if (v instanceof JsonSyntaxError) throw new Error(v.message)
    return decodeMessage(range, v)
  }

  it("proto or lowerCamel names (camel wins), null unset, unknown fields ignored", () => {
    expect(decode(`{"key":"YQ==","range_end":"Yg==","rangeEnd":"Yw==","count_only":null,"zzz":[1]}`)).toEqual(
      Either.right({ key: Uint8Array.from([97]), range_end: Uint8Array.from([99]) })
    )
  })

  it.prop(
    "int64 as number or string: in range taken, out of range Go's error",
    [fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n })],
    ([n]) => {
      const inRange = n >= -(2n ** 63n) && n < 2n ** 63n
      for (const text of [`{"limit":${n}}`, `{"limit":"${n}"}`]) {
        const r = decode(text)
        if (inRange) expect(r).toEqual(Either.right({ limit: n.toString() }))
        else expect(r).toEqual(Either.left(`json: cannot unmarshal number ${n} into Go value of type int64`))
      }
    }
  )

  it("strings as Go's encoding/json writes them", () => {
    expect(goJsonString("<a&b>\u2028")).toBe('"\\u003ca\\u0026b\\u003e\\u2028"')
  })
})
