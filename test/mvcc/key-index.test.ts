import { describe, expect, it } from "@effect/vitest"
import { KeyIndex, revisionKey } from "../../src/mvcc/key-index.js"
import { b } from "./helpers.js"

/** put(main.sub) / tombstone(main.sub) from a compact script: "p2 p4 t6 p8 p10.1 t12" */
const build = (script: string): KeyIndex => {
  const ki = new KeyIndex(b("foo"), "foo")
  for (const step of script.split(" ")) {
    const [main, sub] = step.slice(1).split(".").map(Number) as [number, number | undefined]
    if (step[0] === "p") ki.put(main, sub ?? 0)
    else expect(ki.tombstone(main, sub ?? 0)).toBe(true)
  }
  return ki
}

/** generations as "created ver [revs]" strings, tombstones marked */
const gens = (ki: KeyIndex): Array<string> =>
  ki.generations.map((g) => `${g.created.main}:${g.ver}:[${g.revs.map((r) => `${r.main}.${r.sub}`).join(",")}]`)

const compactAt = (ki: KeyIndex, rev: number): Array<string> => {
  const available = new Set<string>()
  ki.compact(rev, available)
  return [...available].sort()
}

describe("KeyIndex", () => {
  it("put/tombstone build generations with created revision and version", () => {
    const ki = build("p2 p4 t6 p8 p10 t12")
    expect(gens(ki)).toEqual(["2:3:[2.0,4.0,6.0]", "8:3:[8.0,10.0,12.0]", "0:0:[]"])
    expect(ki.modified).toEqual({ main: 12, sub: 0 })
  })

  it("get returns the visible revision, its generation's creation and version", () => {
    const ki = build("p2 p4 t6 p8 p10 t12")
    expect(ki.get(1)).toBeUndefined()
    expect(ki.get(2)).toEqual({ modified: { main: 2, sub: 0 }, created: { main: 2, sub: 0 }, ver: 1 })
    expect(ki.get(5)).toEqual({ modified: { main: 4, sub: 0 }, created: { main: 2, sub: 0 }, ver: 2 })
    // deleted at 6 and 7: absent
    expect(ki.get(6)).toBeUndefined()
    expect(ki.get(7)).toBeUndefined()
    expect(ki.get(9)).toEqual({ modified: { main: 8, sub: 0 }, created: { main: 8, sub: 0 }, ver: 1 })
    expect(ki.get(11)).toEqual({ modified: { main: 10, sub: 0 }, created: { main: 8, sub: 0 }, ver: 2 })
    expect(ki.get(12)).toBeUndefined()
    expect(ki.get(100)).toBeUndefined()
  })

  it("tombstone on a deleted key reports not found and changes nothing", () => {
    const ki = build("p2 t3")
    expect(ki.tombstone(4, 0)).toBe(false)
    expect(gens(ki)).toEqual(["2:2:[2.0,3.0]", "0:0:[]"])
  })

  it("put must move forward", () => {
    const ki = build("p5.1")
    expect(() => ki.put(5, 1)).toThrow()
    expect(() => ki.put(5, 0)).toThrow()
    expect(() => ki.put(4, 9)).toThrow()
    ki.put(5, 2)
    expect(ki.modified).toEqual({ main: 5, sub: 2 })
  })

  it("since returns one revision per main revision, the largest sub", () => {
    const ki = build("p2 p4.0 p4.1 t6 p8 p8.2")
    expect(ki.since(1).map((r) => `${r.main}.${r.sub}`)).toEqual(["2.0", "4.1", "6.0", "8.2"])
    expect(ki.since(5).map((r) => `${r.main}.${r.sub}`)).toEqual(["6.0", "8.2"])
    expect(ki.since(7).map((r) => `${r.main}.${r.sub}`)).toEqual(["8.2"])
    expect(ki.since(9)).toEqual([])
  })

  // etcd's documented example: put(1);put(2);tombstone(3);put(4);tombstone(5)
  it("compaction keeps the latest revision <= R of each generation that reaches R", () => {
    const ki = build("p1 p2 t3 p4 t5")
    expect(compactAt(ki, 2)).toEqual([revisionKey(2, 0)])
    expect(gens(ki)).toEqual(["1:3:[2.0,3.0]", "4:2:[4.0,5.0]", "0:0:[]"])
    expect(compactAt(ki, 4)).toEqual([revisionKey(4, 0)])
    expect(gens(ki)).toEqual(["4:2:[4.0,5.0]", "0:0:[]"])
    // a tombstone at exactly R is kept (etcd #18089 / #19179)
    expect(compactAt(ki, 5)).toEqual([revisionKey(5, 0)])
    expect(gens(ki)).toEqual(["4:2:[5.0]", "0:0:[]"])
    expect(ki.isEmpty()).toBe(false)
    // and dropped by the next compaction past it: the key is gone
    expect(compactAt(ki, 6)).toEqual([])
    expect(ki.isEmpty()).toBe(true)
  })

  it("compaction at a tombstone revision keeps only the tombstone of that generation", () => {
    const ki = build("p1 p2 t3 p4 t5")
    expect(compactAt(ki, 3)).toEqual([revisionKey(3, 0)])
    expect(gens(ki)).toEqual(["1:3:[3.0]", "4:2:[4.0,5.0]", "0:0:[]"])
    // reads at >= R are unchanged
    expect(ki.get(3)).toBeUndefined()
    expect(ki.get(4)?.modified).toEqual({ main: 4, sub: 0 })
  })

  it("compaction keeps a live key's latest put and versions keep counting", () => {
    const ki = build("p2 p4 p6")
    expect(compactAt(ki, 5)).toEqual([revisionKey(4, 0)])
    expect(gens(ki)).toEqual(["2:3:[4.0,6.0]"])
    expect(ki.get(5)).toEqual({ modified: { main: 4, sub: 0 }, created: { main: 2, sub: 0 }, ver: 2 })
    expect(ki.get(6)?.ver).toBe(3)
    expect(compactAt(ki, 100)).toEqual([revisionKey(6, 0)])
    expect(gens(ki)).toEqual(["2:3:[6.0]"])
  })

  it("compaction before the first revision keeps everything and reports nothing", () => {
    const ki = build("p5 t7 p9")
    expect(compactAt(ki, 3)).toEqual([])
    expect(gens(ki)).toEqual(["5:2:[5.0,7.0]", "9:1:[9.0]"])
  })

  it("a delete and a put of one key in one revision both survive compaction at that revision", () => {
    // a txn deleting a from-key range and putting the key again: tombstone 5.0, put 5.1
    const ki = build("p2 t5.0 p5.1")
    expect(compactAt(ki, 5)).toEqual([revisionKey(5, 0), revisionKey(5, 1)])
    expect(gens(ki)).toEqual(["2:2:[5.0]", "5:1:[5.1]"])
    expect(ki.get(5)?.modified).toEqual({ main: 5, sub: 1 })
  })

  it("keep reports what compact would keep without changing anything", () => {
    const ki = build("p1 p2 t3 p4 t5 p6")
    const before = gens(ki)
    const kept = new Set<string>()
    ki.keep(4, kept)
    expect([...kept]).toEqual([revisionKey(4, 0)])
    expect(gens(ki)).toEqual(before)
  })

  it("restoreTombstone rebuilds a key whose only stored revision is a tombstone", () => {
    const ki = new KeyIndex(b("k"), "k")
    ki.restoreTombstone(7, 0)
    expect(ki.isEmpty()).toBe(false)
    expect(ki.get(7)).toBeUndefined()
    expect(ki.get(100)).toBeUndefined()
    ki.put(9, 0)
    expect(ki.get(9)).toEqual({ modified: { main: 9, sub: 0 }, created: { main: 9, sub: 0 }, ver: 1 })
    expect(compactAt(ki, 8)).toEqual([])
    expect(gens(ki)).toEqual(["9:1:[9.0]"])
  })

  it("restore rebuilds a live key from its latest KeyValue", () => {
    const ki = new KeyIndex(b("k"), "k")
    ki.restore({ main: 3, sub: 0 }, { main: 8, sub: 1 }, 4)
    expect(ki.get(8)).toEqual({ modified: { main: 8, sub: 1 }, created: { main: 3, sub: 0 }, ver: 4 })
    ki.put(9, 0)
    expect(ki.get(9)?.ver).toBe(5)
  })

  it("undoPut and undoTombstone restore the previous state exactly", () => {
    const ki = build("p2 p4")
    const snapshot = gens(ki)
    const prev = ki.modified
    expect(ki.tombstone(6, 0)).toBe(true)
    const prev2 = ki.modified
    ki.put(6, 1)
    ki.undoPut(prev2)
    ki.undoTombstone(prev)
    expect(gens(ki)).toEqual(snapshot)
    expect(ki.modified).toEqual({ main: 4, sub: 0 })
    expect(ki.get(10)?.ver).toBe(2)
  })
})
