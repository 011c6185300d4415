/** etcd 3.6's --feature-gates as etcd reads it (texts checked against etcd 3.6.16). */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { FEATURE_GATES, type FeatureGate, parseFeatureGates } from "../../../src/cli/flags/feature-gates.js"
import { ValueError } from "../../../src/cli/flags/go-values.js"

const reason = (text: string) => {
  const r = parseFeatureGates(text)
  return r instanceof ValueError ? r.reason : r
}

describe("--feature-gates", () => {
  it("reads Gate=bool lists and refuses with etcd's words", () => {
    expect(reason("InitialCorruptCheck=true,CompactHashCheck=true")).toEqual({
      InitialCorruptCheck: true,
      CompactHashCheck: true
    })
    expect(reason(" InitialCorruptCheck = true ,,")).toEqual({ InitialCorruptCheck: true })
    expect(reason("")).toEqual({})
    expect(reason("Foo=true")).toBe("unrecognized feature gate: Foo")
    expect(reason("=true")).toBe("unrecognized feature gate: ")
    expect(reason("initialcorruptcheck=true")).toBe("unrecognized feature gate: initialcorruptcheck")
    expect(reason("InitialCorruptCheck")).toBe("missing bool value for InitialCorruptCheck")
    expect(reason("InitialCorruptCheck=maybe")).toBe(
      'invalid value of InitialCorruptCheck=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'
    )
  })

  const gates = Object.keys(FEATURE_GATES) as Array<FeatureGate>
  it.prop(
    "any list of known gates with booleans reads back, the last of a gate winning",
    [fc.array(fc.tuple(fc.constantFrom(...gates), fc.boolean()), { maxLength: 12 })],
    ([pairs]) => {
      const expected: Record<string, boolean> = {}
      for (const [g, b] of pairs) expected[g] = b
      expect(reason(pairs.map(([g, b]) => `${g}=${b}`).join(","))).toEqual(expected)
    }
  )
})
