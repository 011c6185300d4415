import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { compareAffine, IntervalTree } from "../../src/watch/interval-tree.js"

// Short strings over a tiny alphabet so intervals overlap and repeat often; "" is +∞ as an end.
const key = fc.stringMatching(/^[abc]{1,3}$/)
const end = fc.oneof(key, fc.constant(""))
const op = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), begin: key, end }),
  fc.record({ kind: fc.constant("delete" as const), begin: key, end })
)

const containsPoint = (begin: string, end: string, p: string): boolean =>
  compareAffine(begin, p) <= 0 && compareAffine(p, end) < 0

describe("IntervalTree", () => {
  it("compareAffine treats the empty string as +infinity", () => {
    expect(compareAffine("", "zzz")).toBe(1)
    expect(compareAffine("a", "")).toBe(-1)
    expect(compareAffine("", "")).toBe(0)
    expect(compareAffine("a\xff", "b")).toBe(-1)
  })

  it.prop(
    "matches a brute-force model under random inserts and deletes (stab, contains, get, size, AVL invariants)",
    [fc.array(op, { maxLength: 80 }), fc.array(key, { minLength: 1, maxLength: 10 })],
    ([ops, points]) => {
      const tree = new IntervalTree<number>()
      const model = new Map<string, { begin: string; end: string; v: number }>()
      ops.forEach((o, i) => {
        const id = `${o.begin}|${o.end}`
        if (o.kind === "insert") {
          tree.insert(o.begin, o.end, i)
          model.set(id, { begin: o.begin, end: o.end, v: i })
        } else {
          expect(tree.delete(o.begin, o.end)).toBe(model.delete(id))
        }
        tree.verify()
      })
      expect(tree.size).toBe(model.size)
      for (const m of model.values()) expect(tree.get(m.begin, m.end)).toBe(m.v)
      for (const p of points) {
        const got: Array<number> = []
        tree.stab(p, (v) => got.push(v))
        const want = [...model.values()].filter((m) => containsPoint(m.begin, m.end, p)).map((m) => m.v)
        expect(got.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b))
        expect(tree.contains(p)).toBe(want.length > 0)
      }
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("stays balanced with 10k sorted inserts and visits only matches' paths", () => {
    const tree = new IntervalTree<number>()
    for (let i = 0; i < 10_000; i++) {
      const k = i.toString().padStart(6, "0")
      tree.insert(k, k + "\x00", i)
    }
    tree.verify()
    const got: Array<number> = []
    tree.stab("004242", (v) => got.push(v))
    expect(got).toEqual([4242])
    for (let i = 0; i < 10_000; i += 2)
      tree.delete(i.toString().padStart(6, "0"), i.toString().padStart(6, "0") + "\x00")
    tree.verify()
    expect(tree.size).toBe(5000)
  })
})
