import { it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import * as Fields from "../../../src/kubernetes/api/fields.js"
import { parsePredicate, matches } from "../../../src/kubernetes/storage/selection-predicate.js"

const ok = (s: string) => Either.getOrThrowWith(Fields.parseSelector(s), (e) => new Error(e))
const err = (s: string) =>
  Either.match(Fields.parseSelector(s), { onLeft: (e) => e, onRight: (sel) => `parsed: ${sel.toString()}` })

describe("field selectors (fields.ParseSelector)", () => {
  it("parses =, == and !=, sorted, with escapes", () => {
    expect(ok("").empty()).toBe(true)
    expect(ok("metadata.name=foo").toString()).toBe("metadata.name=foo")
    expect(ok("metadata.namespace==ns,metadata.name!=foo").toString()).toBe("metadata.name!=foo,metadata.namespace=ns")
    expect(ok("spec.x=a\\,b\\=c\\\\").terms).toEqual([{ field: "spec.x", value: "a,b=c\\", not: false }])
    expect(ok("spec.x=a\\,b").toString()).toBe("spec.x=a\\,b")
    expect(ok("x=").matches({})).toBe(true)
  })
  it("matches: an absent field is the empty string", () => {
    expect(ok("metadata.name=foo").matches({ "metadata.name": "foo" })).toBe(true)
    expect(ok("metadata.name!=foo").matches({})).toBe(true)
    expect(ok("metadata.name=foo,metadata.namespace=a").matches({ "metadata.name": "foo" })).toBe(false)
    expect(ok("metadata.name=foo").requiresExactMatch("metadata.name")).toBe("foo")
    expect(ok("metadata.name!=foo").requiresExactMatch("metadata.name")).toBeUndefined()
  })
  it("gives apimachinery's errors", () => {
    expect(err("metadata.name")).toBe("invalid selector: 'metadata.name'; can't understand 'metadata.name'")
    expect(err("a=b,c")).toBe("invalid selector: 'a=b,c'; can't understand 'c'")
    expect(err("a=b=c")).toBe("invalid field selector: unescaped character in value: 61")
    expect(err("a=b\\x")).toBe("invalid field selector: invalid escape sequence: \\x")
    expect(err("a=b\\")).toBe("invalid field selector: invalid escape sequence: \\")
  })
  it.prop(
    "escape/unescape round-trip and parse(toString) is stable",
    [fc.string(), fc.string({ maxLength: 10 })],
    ([value, field]) => {
      expect(Fields.unescapeValue(Fields.escapeValue(value))).toEqual(Either.right(value))
      const f = field.replace(/[=!,\\]/g, "") || "f"
      const sel = Fields.selectorFromSet({ [f]: value })
      expect(ok(sel.toString()).toString()).toBe(sel.toString())
      expect(ok(sel.toString()).matches({ [f]: value })).toBe(true)
    }
  )
})

describe("parsePredicate (the list/watch query)", () => {
  it("turns selector errors into 400 BadRequest with the parser's message", () => {
    const bad = Either.flip(parsePredicate({ labelSelector: "x in (a" }))
    expect(Either.getOrThrow(bad)._tag).toBe("BadRequest")
    expect(Either.getOrThrow(bad).message).toBe("unable to parse requirement: found '', expected: ',' or ')'")
    const field = Either.getOrThrow(
      Either.flip(parsePredicate({ fieldSelector: "spec.foo=bar", supportedFields: ["metadata.name"] }))
    )
    expect(field.message).toBe("field label not supported: spec.foo")
  })
  it("selects by labels AND fields", () => {
    const p = Either.getOrThrow(parsePredicate({ labelSelector: "app=web", fieldSelector: "metadata.namespace=a" }))
    expect(matches(p, { metadata: { name: "x", namespace: "a", labels: { app: "web" } } })).toBe(true)
    expect(matches(p, { metadata: { name: "x", namespace: "b", labels: { app: "web" } } })).toBe(false)
    expect(matches(p, { metadata: { name: "x", namespace: "a", labels: { app: "db" } } })).toBe(false)
  })
})
