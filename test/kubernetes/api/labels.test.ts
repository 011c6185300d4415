import { it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import * as Labels from "../../../src/kubernetes/api/labels.js"

const ok = (s: string) => Either.getOrThrowWith(Labels.parse(s), (e) => new Error(e))
const err = (s: string) =>
  Either.match(Labels.parse(s), { onLeft: (e) => e, onRight: (sel) => `parsed: ${sel.toString()}` })

describe("label selectors (labels.Parse)", () => {
  it("parses every operator and prints the canonical form, sorted by key", () => {
    expect(ok("").empty()).toBe(true)
    expect(ok("x=a,y=b").toString()).toBe("x=a,y=b")
    expect(ok("y==b ,  x=a").toString()).toBe("x=a,y==b")
    expect(ok("x!=a").toString()).toBe("x!=a")
    expect(ok("x in (b,a,a), !y, z").toString()).toBe("x in (a,b),!y,z")
    expect(ok("x notin ( a , b )").toString()).toBe("x notin (a,b)")
    expect(ok("x>1,y<2").toString()).toBe("x>1,y<2")
    expect(ok("example.com/app=web").toString()).toBe("example.com/app=web")
    // "in" and "notin" are values where values are expected
    expect(ok("x in (in,notin)").toString()).toBe("x in (in,notin)")
    // empty values
    expect(ok("x=").toString()).toBe("x=")
    expect(ok("x in (,a)").toString()).toBe("x in (,a)")
    expect(ok("x in ()").toString()).toBe("x in ()")
  })

  it("matches as apimachinery: != and notin select objects without the key", () => {
    const m = (sel: string, labels: Record<string, string>) => ok(sel).matches(labels)
    expect(m("x=a", { x: "a" })).toBe(true)
    expect(m("x=a", {})).toBe(false)
    expect(m("x!=a", {})).toBe(true)
    expect(m("x!=a", { x: "a" })).toBe(false)
    expect(m("x notin (a,b)", {})).toBe(true)
    expect(m("x notin (a,b)", { x: "c" })).toBe(true)
    expect(m("x in (a,b)", { x: "b" })).toBe(true)
    expect(m("x in (a,b)", {})).toBe(false)
    expect(m("x", { x: "" })).toBe(true)
    expect(m("!x", { x: "" })).toBe(false)
    expect(m("x>5", { x: "6" })).toBe(true)
    expect(m("x>5", { x: "5" })).toBe(false)
    expect(m("x<5", { x: "-1" })).toBe(true) // label values are parsed as int64, bounds too
    expect(m("x>5", { x: "six" })).toBe(false)
    expect(m("x>5", {})).toBe(false)
    expect(m("x=a,y=b", { x: "a", y: "b", z: "c" })).toBe(true)
    expect(m("x=a,y=b", { x: "a" })).toBe(false)
  })

  it("gives apimachinery's syntax errors", () => {
    expect(err("x=a,")).toBe("found '', expected: identifier after ','")
    expect(err(",x=a")).toBe("found ',', expected: !, identifier, or 'end of string'")
    expect(err("x=a y=b")).toBe("found 'y', expected: ',' or 'end of string'")
    expect(err("x in a")).toBe("unable to parse requirement: found 'a' expected: '('")
    expect(err("x in (a")).toBe("unable to parse requirement: found '', expected: ',' or ')'")
    expect(err("x (a)")).toBe("unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt")
    expect(err("x=(a)")).toBe("unable to parse requirement: found '(', expected: identifier")
    expect(err("!x=a")).toBe("found '=', expected: ',' or 'end of string'")
    expect(err("x=!a")).toBe("unable to parse requirement: found '!', expected: identifier")
    // a bound is also a label value: no sign
    expect(err("x<-2")).toMatch(
      /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "-2": a valid label must be/
    )
    expect(err("x>a")).toBe(
      "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
    )
  })

  it("gives apimachinery's validation errors for keys and values", () => {
    expect(err("x$=a")).toBe(
      "unable to parse requirement: <nil>: Invalid value: \"x$\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
    expect(err(`${"k".repeat(64)}=a`)).toBe(
      `unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": name part must be no more than 63 characters`
    )
    expect(err("Example.com/x=a")).toMatch(
      /^unable to parse requirement: <nil>: Invalid value: "Example\.com\/x": prefix part a lowercase RFC 1123 subdomain must consist of/
    )
    expect(err("a/b/c")).toMatch(
      /^unable to parse requirement: <nil>: Invalid value: "a\/b\/c": a qualified name must consist of/
    )
    expect(err("x=a$")).toBe(
      "unable to parse requirement: values[0][x]: Invalid value: \"a$\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
  })

  it("requiresExactMatch finds =, == and single-value in", () => {
    expect(ok("a=1,b in (2),c in (3,4),d!=5").requiresExactMatch("a")).toBe("1")
    expect(ok("a=1,b in (2),c in (3,4),d!=5").requiresExactMatch("b")).toBe("2")
    expect(ok("a=1,b in (2),c in (3,4),d!=5").requiresExactMatch("c")).toBeUndefined()
    expect(ok("a=1,b in (2),c in (3,4),d!=5").requiresExactMatch("d")).toBeUndefined()
  })

  const key = fc.stringMatching(/^[a-z]([a-z0-9.-]{0,5}[a-z0-9])?$/)
  const value = fc.stringMatching(/^([A-Za-z0-9]([A-Za-z0-9_.-]{0,4}[A-Za-z0-9])?)?$/)
  const requirement = fc.oneof(
    fc.record({ key, operator: fc.constantFrom("=", "==", "!=" as const), values: fc.tuple(value) }),
    fc.record({
      key,
      operator: fc.constantFrom("in", "notin" as const),
      values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 })
    }),
    fc.record({ key, operator: fc.constantFrom("exists", "!" as const), values: fc.constant([]) }),
    fc.record({
      key,
      operator: fc.constantFrom("gt", "lt" as const),
      values: fc.tuple(fc.integer({ min: 0, max: 99 }).map(String))
    })
  )
  const labelSet = fc.dictionary(key, fc.oneof(value, fc.integer({ min: -99, max: 99 }).map(String)), { maxKeys: 4 })

  it.prop(
    "parse(toString(s)) selects exactly what s selects",
    [fc.array(requirement, { maxLength: 4 }), fc.array(labelSet, { maxLength: 8 })],
    ([reqs, sets]) => {
      const sel = Labels.fromRequirements(reqs as ReadonlyArray<Labels.Requirement>)
      const again = ok(sel.toString())
      expect(again.toString()).toBe(sel.toString())
      for (const s of sets) expect(again.matches(s)).toBe(sel.matches(s))
    }
  )

  it.prop("selectorFromSet matches exactly the supersets of the set", [labelSet, labelSet], ([set, labels]) => {
    const superset = Object.entries(set).every(([k, v]) => labels[k] === v)
    expect(Labels.selectorFromSet(set).matches(labels)).toBe(superset)
    expect(Labels.selectorFromSet(set).matches({ ...labels, ...set })).toBe(true)
  })
})
