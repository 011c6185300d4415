/**
 * Go's readings of flag texts (src/cli/flags/go-values.ts): what strconv and time.ParseDuration
 * accept and the exact error texts (values checked against Go 1.19's documented behaviour and
 * etcdctl 3.4's answers), plus round trips as properties.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import {
  formatDuration,
  goQuote,
  parseBool,
  parseCsv,
  parseDurationMillis,
  parseInt,
  parseUint,
  ValueError
} from "../../../src/cli/flags/go-values.js"

const reason = (v: unknown) => (v instanceof ValueError ? v.reason : v)

describe("Go's value syntax", () => {
  it("strconv.ParseBool", () => {
    for (const t of ["1", "t", "T", "TRUE", "true", "True"]) expect(parseBool(t)).toBe(true)
    for (const f of ["0", "f", "F", "FALSE", "false", "False"]) expect(parseBool(f)).toBe(false)
    expect(reason(parseBool("yes"))).toBe('strconv.ParseBool: parsing "yes": invalid syntax')
    expect(reason(parseBool(""))).toBe('strconv.ParseBool: parsing "": invalid syntax')
  })

  it("strconv.ParseInt with base 0: prefixes, underscores, signs, range", () => {
    const cases: Array<[string, bigint]> = [
      ["0", 0n],
      ["42", 42n],
      ["+5", 5n],
      ["-3", -3n],
      ["0x10", 16n],
      ["0X1f", 31n],
      ["010", 8n],
      ["0o17", 15n],
      ["0b101", 5n],
      ["1_000", 1000n],
      ["0x_1f", 31n],
      ["9223372036854775807", 9223372036854775807n],
      ["-9223372036854775808", -9223372036854775808n]
    ]
    for (const [text, value] of cases) expect(parseInt(text), text).toBe(value)
    const syntax = ["", "abc", "08", "_1", "1__0", "1_", "0x", "--1", "1e3", " 1"]
    for (const text of syntax) {
      expect(reason(parseInt(text)), text).toBe(`strconv.ParseInt: parsing ${goQuote(text)}: invalid syntax`)
    }
    for (const text of ["9223372036854775808", "-9223372036854775809", "99999999999999999999"]) {
      const e = parseInt(text)
      expect(reason(e)).toBe(`strconv.ParseInt: parsing "${text}": value out of range`)
      expect(e instanceof ValueError && e.range).toBe(true)
    }
    expect(parseInt("ff", 64, 16)).toBe(255n)
    expect(reason(parseInt("0xff", 64, 16))).toBe('strconv.ParseInt: parsing "0xff": invalid syntax')
    expect(reason(parseInt("1_0", 64, 10))).toBe('strconv.ParseInt: parsing "1_0": invalid syntax')
  })

  it("strconv.ParseUint refuses a sign", () => {
    expect(parseUint("18446744073709551615")).toBe(18446744073709551615n)
    expect(reason(parseUint("-1"))).toBe('strconv.ParseUint: parsing "-1": invalid syntax')
    expect(reason(parseUint("4294967296", 32))).toBe('strconv.ParseUint: parsing "4294967296": value out of range')
  })

  it("time.ParseDuration", () => {
    const cases: Array<[string, number]> = [
      ["0", 0],
      ["-0", 0],
      ["2s", 2000],
      ["1.5s", 1500],
      [".5s", 500],
      ["1.s", 1000],
      ["1h2m3.5s", 3_723_500],
      ["-1.5h", -5_400_000],
      ["300ms", 300],
      ["1us", 0.001],
      ["1µs", 0.001],
      ["1μs", 0.001],
      ["5ns", 0.000005]
    ]
    for (const [text, ms] of cases) expect(parseDurationMillis(text), text).toBeCloseTo(ms, 9)
    expect(reason(parseDurationMillis("3"))).toBe('time: missing unit in duration "3"')
    expect(reason(parseDurationMillis("0.0"))).toBe('time: missing unit in duration "0.0"')
    expect(reason(parseDurationMillis("3x"))).toBe('time: unknown unit "x" in duration "3x"')
    expect(reason(parseDurationMillis(""))).toBe('time: invalid duration ""')
    expect(reason(parseDurationMillis("abc"))).toBe('time: invalid duration "abc"')
    expect(reason(parseDurationMillis(".s"))).toBe('time: invalid duration ".s"')
    expect(reason(parseDurationMillis("3000000h"))).toBe('time: invalid duration "3000000h"')
    expect(reason(parseDurationMillis("1é"))).toBe('time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"')
  })

  it("Go's Duration.String for help's defaults", () => {
    expect([0, 500, 2000, 600_000, 7_200_000, 5_025_000].map(formatDuration)).toEqual([
      "0s",
      "500ms",
      "2s",
      "10m0s",
      "2h0m0s",
      "1h23m45s"
    ])
  })

  it("pflag's string slices are one CSV record", () => {
    expect(parseCsv("")).toEqual([])
    expect(parseCsv("a,b")).toEqual(["a", "b"])
    expect(parseCsv('"a,b",c')).toEqual(["a,b", "c"])
    expect(parseCsv("a,,b")).toEqual(["a", "", "b"])
    expect(reason(parseCsv('a"b'))).toBe('parse error on line 1, column 2: bare " in non-quoted-field')
  })

  it.prop(
    "every int64 reads back from its decimal text",
    [FastCheck.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
    ([n]) => {
      expect(parseInt(String(n))).toBe(n)
    }
  )

  it.prop(
    "every whole-second duration help prints reads back",
    [FastCheck.integer({ min: 0, max: 1_000_000 })],
    ([seconds]) => {
      expect(parseDurationMillis(formatDuration(seconds * 1000))).toBe(seconds * 1000)
    }
  )
})
