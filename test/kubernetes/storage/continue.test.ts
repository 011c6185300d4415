import { it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import {
  decodeContinue,
  encodeContinue,
  ErrEmptyStartKey,
  ErrInvalidStartRV,
  goPathClean
} from "../../../src/kubernetes/storage/continue.js"

/** a token as the apiserver writes it: base64url without padding of its JSON */
const token = (json: string) => Buffer.from(json).toString("base64url")

describe("continue tokens (storage/continue.go)", () => {
  it("encodes the apiserver's exact bytes", () => {
    const t = Either.getOrThrow(encodeContinue("/registry/pods/second/bar\x00", "/registry/pods/second/", 42n))
    expect(Buffer.from(t, "base64url").toString()).toBe('{"v":"meta.k8s.io/v1","rv":42,"start":"bar\\u0000"}')
    expect(t).not.toContain("=")
    // Go's encoder escapes HTML characters
    const html = Either.getOrThrow(encodeContinue("/p/a<b>&c", "/p/", 1n))
    expect(Buffer.from(html, "base64url").toString()).toBe(
      '{"v":"meta.k8s.io/v1","rv":1,"start":"a\\u003cb\\u003e\\u0026c"}'
    )
  })

  it("refuses a key outside the prefix", () => {
    expect(encodeContinue("/other/x", "/pods/", 1n)).toEqual(
      Either.left("unable to encode next field: the key and key prefix do not match")
    )
  })

  it("decodes to the full key and revision, negative revisions included", () => {
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":7,"start":"ns/foo\\u0000"}'), "/registry/pods/")).toEqual(
      Either.right({ fromKey: "/registry/pods/ns/foo\x00", rv: 7n })
    )
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}'), "/p/")).toEqual(
      Either.right({ fromKey: "/p/a", rv: -1n })
    )
    // int64 revisions stay exact
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":9007199254740993,"start":"a"}'), "/p/")).toEqual(
      Either.right({ fromKey: "/p/a", rv: 9007199254740993n })
    )
  })

  it("gives the apiserver's errors for bad tokens", () => {
    const left = (t: string) =>
      Either.getLeft(decodeContinue(t, "/test/")).pipe((o) => (o._tag === "Some" ? o.value : ""))
    expect(left(token('{"v":"meta.k8s.io/v1","rv":0,"start":"key"}'))).toBe(ErrInvalidStartRV)
    expect(left(token('{"v":"meta.k8s.io/v1","rv":1,"start":""}'))).toBe(ErrEmptyStartKey)
    expect(left(token('{"v":"v1","rv":1,"start":"key"}'))).toBe(
      "continue key is not valid: server does not recognize this encoded version v1"
    )
    expect(left(token('{"rv":1,"start":"key"}'))).toBe(
      "continue key is not valid: server does not recognize this encoded version "
    )
    for (const start of ["../key", "./key", "./../key", "key/../.."]) {
      expect(left(token(`{"v":"meta.k8s.io/v1","rv":1,"start":${JSON.stringify(start)}}`))).toBe(
        `continue key is not valid: ${start}`
      )
    }
    expect(left("!!!")).toMatch(/^continue key is not valid: illegal base64 data at input byte 0$/)
    // json.Unmarshal's own words
    expect(left(token("not json"))).toBe(
      "continue key is not valid: invalid character 'o' in literal null (expecting 'u')"
    )
    expect(left(token('{"v":"meta.k8s.io/v1","rv":"5","start":"a"}'))).toBe(
      "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"
    )
    expect(left(token("[1]"))).toBe(
      "continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken"
    )
  })

  it.prop(
    "round-trips every key under the prefix",
    [fc.string({ minLength: 1 }), fc.bigInt({ min: 1n, max: (1n << 63n) - 1n })],
    ([suffix, rv]) => {
      const key = "/registry/pods/" + suffix.replace(/^\/+/, "") + "\x00"
      const encoded = Either.getOrThrow(encodeContinue(key, "/registry/pods/", rv))
      const decoded = decodeContinue(encoded, "/registry/pods/")
      const start = key.slice("/registry/pods/".length)
      // traversal-looking starts are refused; everything else comes back unchanged
      if (goPathClean("/" + start) !== "/" + start) expect(Either.isLeft(decoded)).toBe(true)
      else expect(decoded).toEqual(Either.right({ fromKey: key, rv }))
    }
  )

  it("path.Clean as Go does it", () => {
    expect(goPathClean("/a/b/../c/./d/")).toBe("/a/c/d")
    expect(goPathClean("/../a")).toBe("/a")
    expect(goPathClean("a/../../b")).toBe("../b")
    expect(goPathClean("")).toBe(".")
    expect(goPathClean("//a//b")).toBe("/a/b")
  })
})
