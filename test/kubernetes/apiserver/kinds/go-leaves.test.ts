/**
 * metav1.MicroTime's JSON: time.Parse(RFC3339Micro) — exactly six fraction digits, any offset,
 * stored in UTC with six digits — and time.Parse's texts for what does not parse.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { formatMicroTime, parseMicroTime } from "../../../../src/kubernetes/apiserver/kinds/go-leaves.js"

const LAYOUT = "2006-01-02T15:04:05.000000Z07:00"

describe("MicroTime", () => {
  it("six fraction digits in any offset; stored in UTC", () => {
    expect(parseMicroTime("2026-01-02T03:04:05.123456Z")).toEqual({ value: "2026-01-02T03:04:05.123456Z" })
    expect(parseMicroTime("2026-01-02T05:04:05.000001+02:00")).toEqual({ value: "2026-01-02T03:04:05.000001Z" })
    expect(parseMicroTime("2026-01-01T23:30:00.999999-01:00")).toEqual({ value: "2026-01-02T00:30:00.999999Z" })
  })

  it("anything else is time.Parse's error", () => {
    expect(parseMicroTime("2026-01-02T03:04:05Z")).toEqual({
      error: `parsing time "2026-01-02T03:04:05Z" as "${LAYOUT}": cannot parse "Z" as ".000000"`
    })
    expect(parseMicroTime("2026-01-02T03:04:05.1234Z")).toEqual({
      error: `parsing time "2026-01-02T03:04:05.1234Z" as "${LAYOUT}": cannot parse ".1234Z" as ".000000"`
    })
    expect(parseMicroTime("2026-13-02T03:04:05.000000Z")).toEqual({
      error: 'parsing time "2026-13-02T03:04:05.000000Z": month out of range'
    })
    expect(parseMicroTime("yesterday")).toEqual({
      error: `parsing time "yesterday" as "${LAYOUT}": cannot parse "yesterday" as "2006"`
    })
  })

  it("property: any instant in microseconds formats and parses back to itself", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.integer({ min: 0, max: 999 }), (ms, us) => {
        const s = formatMicroTime(ms, us)
        expect(s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
        expect(parseMicroTime(s)).toEqual({ value: s })
      })
    )
  })
})
