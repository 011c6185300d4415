/**
 * WatchIdMap against a Map model: any sequence of sets and deletes over allocated ids (dense), a
 * client's far or negative ids and bigints beyond 2^53 gives the same lookups, size and entries;
 * an id far beyond the array's end never grows it.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { WatchIdMap, WatchIdSet } from "../../src/watch/watch-id-map.js"
import type { WatchId } from "../../src/watch/watcher.js"

const id = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: 0, max: 5000 }),
  fc.integer({ min: -3, max: -1 }),
  fc.constantFrom<WatchId>(2 ** 53 - 1, 2n ** 53n, -(2n ** 63n), 2n ** 63n - 1n)
)
const op = fc.record({ del: fc.boolean(), id, value: fc.nat() })

describe("WatchIdMap", () => {
  it.prop(
    "agrees with a Map on get, has, size, keys, values and entries",
    [fc.array(op, { maxLength: 200 })],
    ([ops]) => {
      const m = new WatchIdMap<number>()
      const model = new Map<WatchId, number>()
      for (const o of ops) {
        if (o.del) expect(m.delete(o.id)).toBe(model.delete(o.id))
        else {
          m.set(o.id, o.value)
          model.set(o.id, o.value)
        }
        expect(m.get(o.id)).toBe(model.get(o.id))
      }
      expect(m.size).toBe(model.size)
      for (const o of ops) expect([m.has(o.id), m.get(o.id)]).toEqual([model.has(o.id), model.get(o.id)])
      const sortKey = (a: WatchId, b: WatchId) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0)
      expect([...m.keys()].sort(sortKey)).toEqual([...model.keys()].sort(sortKey))
      expect([...m.values()].sort()).toEqual([...model.values()].sort())
      expect(new Map(m.entries())).toEqual(model)
      m.clear()
      expect([m.size, m.keys(), m.get(ops[0]?.id ?? 0)]).toEqual([0, [], undefined])
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("allocated ids go to the array; an id far past its end goes to the Map, not a huge array", () => {
    const m = new WatchIdMap<string>()
    for (let i = 0; i < 1000; i++) m.set(i, `w${i}`)
    m.set(1e9, "far")
    m.set(2 ** 53 - 1, "max")
    expect(m.size).toBe(1002)
    expect(m.get(999)).toBe("w999")
    expect(m.get(1e9)).toBe("far")
    const dense = (m as unknown as { dense: Array<unknown> }).dense
    expect(dense.length).toBe(1000)
    // the Map's id stays there when the array later reaches it
    const n = new WatchIdMap<string>()
    n.set(600, "sparse")
    for (let i = 0; i <= 700; i++) if (i !== 600) n.set(i, "d")
    expect([n.get(600), n.size]).toEqual(["sparse", 701])
    n.set(600, "again")
    expect([n.get(600), n.size]).toEqual(["again", 701])
    expect(n.delete(600)).toBe(true)
    expect([n.has(600), n.size]).toEqual([false, 700])
  })

  it("WatchIdSet: add, has, delete, size", () => {
    const s = new WatchIdSet()
      .add(1)
      .add(2)
      .add(2n ** 60n)
    expect([s.has(1), s.has(2), s.has(3), s.has(2n ** 60n), s.size]).toEqual([true, true, false, true, 3])
    expect(s.delete(2)).toBe(true)
    expect(s.delete(2)).toBe(false)
    expect(s.size).toBe(2)
  })
})
