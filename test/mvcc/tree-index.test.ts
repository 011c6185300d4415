import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { TreeIndex } from "../../src/mvcc/tree-index.js"
import { b } from "./helpers.js"

const put = (ti: TreeIndex, k: string, main: number, sub = 0) => ti.put(b(k), k, main, sub)

describe("TreeIndex", () => {
  it("point lookups see the revision visible at each revision", () => {
    const ti = new TreeIndex()
    put(ti, "foo", 2)
    put(ti, "foo", 4)
    expect(ti.tombstone("foo", 6, 0)).toBe(true)
    expect(ti.tombstone("foo", 7, 0)).toBe(false)
    expect(ti.tombstone("missing", 7, 0)).toBe(false)
    expect(ti.get("foo", 1)).toBeUndefined()
    expect(ti.get("foo", 3)?.modified).toEqual({ main: 2, sub: 0 })
    expect(ti.get("foo", 5)?.ver).toBe(2)
    expect(ti.get("foo", 6)).toBeUndefined()
    expect(ti.revisions("foo", undefined, 5, 0)).toEqual({ revs: [{ main: 4, sub: 0 }], total: 1 })
    expect(ti.revisions("foo", undefined, 6, 0)).toEqual({ revs: [], total: 0 })
  })

  it("ranges [key, end), from-key, limits and counts follow byte order", () => {
    const ti = new TreeIndex()
    const keys = ["a", "a\u0000", "ab", "b", "\u00ff", "\u00ff\u00ff", "c"]
    keys.forEach((k, i) => put(ti, k, i + 2))
    expect(ti.range("a", "b", 100).keys.map((ki) => ki.k)).toEqual(["a", "a\u0000", "ab"])
    expect(ti.range("a\u0000", "", 100).keys.map((ki) => ki.k)).toEqual([
      "a\u0000",
      "ab",
      "b",
      "c",
      "\u00ff",
      "\u00ff\u00ff"
    ])
    // key >= end: empty
    expect(ti.range("b", "a", 100).keys).toEqual([])
    expect(ti.revisions("a", "", 100, 2)).toEqual({
      revs: [
        { main: 2, sub: 0 },
        { main: 3, sub: 0 }
      ],
      total: 7
    })
    expect(ti.countRevisions("a", "c", 100)).toBe(4)
    // at revision 4 only the first three puts exist
    expect(ti.countRevisions("a", "", 4)).toBe(3)
  })

  it("compact drops emptied keys and reports what the backend keeps", () => {
    const ti = new TreeIndex()
    put(ti, "a", 2)
    put(ti, "b", 3)
    ti.tombstone("a", 4, 0)
    put(ti, "b", 5)
    const keep = ti.compact(5)
    expect([...keep].sort()).toEqual(["5_0"])
    expect(ti.size).toBe(1)
    expect(ti.keyIndex("a")).toBeUndefined()
    expect(ti.range("a", "", 5).keys.map((ki) => ki.k)).toEqual(["b"])
  })

  // many keys across leaf splits and merges, checked against a sorted array
  it.prop(
    "ordered operations match a sorted-array model across leaf splits and merges",
    [
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3000 })), {
        minLength: 2000,
        maxLength: 6000,
        size: "max"
      })
    ],
    ([ops]) => {
      const ti = new TreeIndex()
      const model = new Set<string>()
      let rev = 1
      const name = (n: number) => String(n).padStart(4, "0")
      for (const [add, n] of ops) {
        const k = name(n)
        if (add) {
          rev++
          put(ti, k, rev)
          model.add(k)
        } else if (ti.remove(k) !== model.delete(k)) return false
      }
      const sorted = [...model].sort()
      const all = ti.all().map((ki) => ki.k)
      if (JSON.stringify(all) !== JSON.stringify(sorted)) return false
      const lo = name(1000)
      const hi = name(2000)
      const ranged = ti.range(lo, hi, rev).keys.map((ki) => ki.k)
      return (
        JSON.stringify(ranged) === JSON.stringify(sorted.filter((k) => k >= lo && k < hi)) && ti.size === model.size
      )
    },
    { fastCheck: { numRuns: 20 } }
  )
})
