/**
 * The store's concurrency/durability model and etcd behaviours worth spelling out as examples
 * (the property test covers them at random; these pin the interesting cases down).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { Backend } from "../../src/backend/backend.js"
import { layerMemory } from "../../src/backend/memory.js"
import type { Event } from "../../src/mvcc/key-value.js"
import { MvccStore, type RequestOp } from "../../src/mvcc/kv.js"
import { bytesToMain, isTombstoneKey, revToBytes } from "../../src/mvcc/kv-codec.js"
import { layer, layerConfig } from "../../src/mvcc/kvstore.js"
import { FakeLessor, nEvent, nkv } from "./driver.js"
import { gateLayer, makeGate } from "./gated-backend.js"
import { b, memoryStore, s } from "./helpers.js"

const put = (k: string, v = "v"): RequestOp => ({ _tag: "Put", request: { key: b(k), value: b(v) } })
const vals = (kvs: ReadonlyArray<{ key: Uint8Array; value: Uint8Array }>) =>
  kvs.map((kv) => `${s(kv.key)}=${s(kv.value)}`)

const gatedStore = () => {
  const gate = makeGate()
  return { gate, layer: layer.pipe(Layer.provide(layerConfig()), Layer.provide(gateLayer(gate))) }
}

describe("durability and visibility", () => {
  it.effect("a staged revision is invisible until durable; then rev() moves and the listener runs", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      const seen: Array<[number, Array<unknown>]> = []
      st.addCommitListener((rev, evs) => seen.push([rev, evs.map(nEvent)]))
      const f = yield* Effect.fork(st.put({ key: b("a"), value: b("1") }))
      yield* Effect.yieldNow()
      expect(gate.pending()).toBe(1)
      expect(st.rev()).toBe(1)
      expect((yield* st.range({ key: b("a") })).kvs).toEqual([])
      expect(seen).toEqual([])
      // a future revision for readers, though staged
      const e = yield* Effect.flip(st.range({ key: b("a"), revision: 2 }))
      expect(e.message).toBe("etcdserver: mvcc: required revision is a future revision")
      // a write txn's compares see the staged state (head)
      const t = yield* Effect.fork(
        st.txn({ compare: [{ key: b("a"), target: 0, result: 0, version: 1 }], success: [put("b")], failure: [] })
      )
      yield* Effect.yieldNow()
      yield* gate.release()
      const res = yield* Fiber.join(f)
      expect(res.header.revision).toBe(2)
      const tr = yield* Fiber.join(t)
      expect(tr.succeeded).toBe(true)
      expect(tr.header.revision).toBe(3)
      expect(st.rev()).toBe(3)
      expect(seen.map(([r]) => r)).toEqual([2, 3])
      expect(vals((yield* st.range({ key: b("a"), rangeEnd: b("\0") })).kvs)).toEqual(["a=1", "b=v"])
    }).pipe(Effect.provide(l))
  })

  it.effect("commits and notifies in revision order even when writers resume out of order", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      const order: Array<number> = []
      st.addCommitListener((rev) => order.push(rev))
      const fibers = []
      for (let i = 0; i < 5; i++) fibers.push(yield* Effect.fork(st.put({ key: b(`k${i}`), value: b("v") })))
      yield* Effect.yieldNow()
      expect(gate.pending()).toBe(5)
      // all durable at once, the newest writer resumes first
      yield* gate.releaseInOrder([4, 3, 2, 1, 0])
      const revs = yield* Effect.forEach(fibers, Fiber.join)
      expect(revs.map((r) => r.header.revision)).toEqual([2, 3, 4, 5, 6])
      expect(order).toEqual([2, 3, 4, 5, 6])
      expect(st.rev()).toBe(6)
    }).pipe(Effect.provide(l))
  })

  it.effect("a result read at a staged revision waits for it (no dirty reads)", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      const w = yield* Effect.fork(st.put({ key: b("a"), value: b("1") }))
      yield* Effect.yieldNow()
      // a write txn whose compare fails and that writes nothing: it saw revision 2 (staged)
      const t = yield* Effect.fork(
        st.txn({ compare: [{ key: b("a"), target: 0, result: 0, version: 0 }], success: [put("b")], failure: [] })
      )
      // a delete of nothing, evaluated at head
      const d = yield* Effect.fork(st.deleteRange({ key: b("zzz") }))
      yield* Effect.yieldNow()
      expect(t.unsafePoll()).toBeNull()
      expect(d.unsafePoll()).toBeNull()
      yield* gate.release()
      yield* Fiber.join(w)
      const tr = yield* Fiber.join(t)
      expect([tr.succeeded, tr.header.revision]).toEqual([false, 2])
      const dr = yield* Fiber.join(d)
      expect([dr.deleted, dr.header.revision]).toEqual([0, 2])
      expect(st.rev()).toBe(2)
    }).pipe(Effect.provide(l))
  })

  it.effect("a backend write failure stops the store; staged revisions are never announced", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      const announced: Array<number> = []
      st.addCommitListener((rev) => announced.push(rev))
      const ok = yield* Effect.fork(st.put({ key: b("a"), value: b("1") }))
      yield* Effect.yieldNow()
      yield* gate.release()
      yield* Fiber.join(ok)
      const f = yield* Effect.fork(st.put({ key: b("a"), value: b("2") }))
      yield* Effect.yieldNow()
      yield* gate.fail()
      const e = yield* Effect.flip(Fiber.join(f))
      expect({ message: e.message, code: e.code }).toEqual({ message: "etcdserver: server stopped", code: 14 })
      expect(st.rev()).toBe(2)
      expect(announced).toEqual([2])
      for (const later of [
        st.put({ key: b("b"), value: b("x") }),
        st.range({ key: b("a") }),
        st.txn({ compare: [], success: [], failure: [] }),
        st.compact(2)
      ]) {
        const le = yield* Effect.flip(later as Effect.Effect<unknown, { message: string }>)
        expect(le.message).toBe("etcdserver: server stopped")
      }
    }).pipe(Effect.provide(l))
  })
})

describe("etcd semantics by example", () => {
  it.effect("a fresh store is at revision 1, never compacted; the first write is revision 2", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      expect([st.rev(), st.compactRevision()]).toEqual([1, -1])
      const r = yield* st.range({ key: b("a") })
      expect([r.header.revision, r.count, r.more, r.kvs]).toEqual([1, 0, false, []])
      expect((yield* st.put({ key: b("a") })).header.revision).toBe(2)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("one revision per txn, sub-revisions in op order, later ops see earlier ones", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const events: Array<ReadonlyArray<Event>> = []
      st.addCommitListener((_rev, evs) => events.push(evs))
      yield* st.put({ key: b("c"), value: b("old") })
      const res = yield* st.txn({
        compare: [],
        success: [
          put("b", "1"),
          { _tag: "DeleteRange", request: { key: b("a"), rangeEnd: b("\0") } },
          put("a", "2"),
          { _tag: "Range", request: { key: b("a"), rangeEnd: b("\0") } }
        ],
        failure: []
      })
      expect(res.header.revision).toBe(3)
      const range = res.responses[3]!
      expect(range._tag === "Range" && vals(range.response.kvs)).toEqual(["a=2"])
      expect(range._tag === "Range" && range.response.header.revision).toBe(3)
      // delete-range deletes in key order; the put of "a" after it creates a fresh generation
      expect(
        events[1]!.map(nEvent).map((e) => `${e.type} ${e.kv.key} ${e.kv.mod} c${e.kv.create} v${e.kv.version}`)
      ).toEqual(["PUT b 3 c3 v1", "DELETE b 3 c0 v0", "DELETE c 3 c0 v0", "PUT a 3 c3 v1"])
      // the backend keys are (3,0) (3,1)t (3,2)t (3,3)
      const keys = (yield* Backend).range("key", revToBytes(3, 0), revToBytes(4, 0))
      expect(keys.map(([k]) => `${bytesToMain(k)}${isTombstoneKey(k) ? "t" : ""}`)).toEqual(["3", "3t", "3t", "3"])
    }).pipe(Effect.provide(Layer.provideMerge(layer.pipe(Layer.provide(layerConfig())), layerMemory)))
  )

  it.effect("txn headers: no write keeps the revision; nested txn headers carry 0", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.put({ key: b("a"), value: b("1") })
      const ro = yield* st.txn({ compare: [], success: [{ _tag: "Range", request: { key: b("a") } }], failure: [] })
      expect(ro.header.revision).toBe(2)
      const nested = yield* st.txn({
        compare: [{ key: b("a"), target: 3, result: 0, value: b("1") }],
        success: [{ _tag: "Txn", request: { compare: [], success: [put("b")], failure: [] } }],
        failure: []
      })
      expect(nested.header.revision).toBe(3)
      const inner = nested.responses[0]!
      expect(inner._tag === "Txn" && [inner.response.header.revision, inner.response.succeeded]).toEqual([0, true])
      const empty = yield* st.txn({ compare: [], success: [], failure: [] })
      expect([empty.header.revision, empty.succeeded]).toEqual([3, true])
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("compares: a missing key compares as zeros, VALUE on a missing key fails, a range needs every key", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.put({ key: b("a1"), value: b("x") })
      yield* st.put({ key: b("a2"), value: b("x") })
      yield* st.put({ key: b("a2"), value: b("y") })
      const ok = (c: Parameters<typeof st.txn>[0]["compare"][number]) =>
        Effect.map(st.txn({ compare: [c], success: [], failure: [] }), (r) => r.succeeded)
      expect(yield* ok({ key: b("zz"), target: 0, result: 0, version: 0 })).toBe(true)
      expect(yield* ok({ key: b("zz"), target: 1, result: 0, createRevision: 0 })).toBe(true)
      expect(yield* ok({ key: b("zz"), target: 4, result: 0, lease: 0n })).toBe(true)
      expect(yield* ok({ key: b("zz"), target: 3, result: 0, value: b("") })).toBe(false)
      expect(yield* ok({ key: b("zz"), target: 3, result: 3, value: b("x") })).toBe(false)
      // over [a, b): both keys must satisfy
      expect(yield* ok({ key: b("a"), rangeEnd: b("b"), target: 3, result: 0, value: b("x") })).toBe(false)
      expect(yield* ok({ key: b("a"), rangeEnd: b("b"), target: 1, result: 2, createRevision: 4 })).toBe(true)
      expect(yield* ok({ key: b("a"), rangeEnd: b("\0"), target: 0, result: 1, version: 0 })).toBe(true)
      expect(yield* ok({ key: b("a"), rangeEnd: b("\0"), target: 2, result: 1, modRevision: 3 })).toBe(false)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect(
    "range: limit/more/count, sort with limit, default ascending for non-key targets, filters leave count",
    () =>
      Effect.gen(function* () {
        const st = yield* MvccStore
        // a@2 b@3 c@4, then a rewritten @5
        for (const [k, v] of [
          ["a", "3"],
          ["b", "1"],
          ["c", "2"],
          ["a", "0"]
        ] as const)
          yield* st.put({ key: b(k), value: b(v) })
        const all = { key: b("a"), rangeEnd: b("\0") }
        const r1 = yield* st.range({ ...all, limit: 2 })
        expect([vals(r1.kvs), r1.more, r1.count]).toEqual([["a=0", "b=1"], true, 3])
        const r2 = yield* st.range({ ...all, limit: 3 })
        expect([r2.more, r2.count]).toEqual([false, 3])
        // sorting sees every key before the limit applies
        const r3 = yield* st.range({ ...all, limit: 1, sortOrder: 2, sortTarget: 3 })
        expect([vals(r3.kvs), r3.more]).toEqual([["a=0"], true])
        // target VALUE with order NONE sorts ascending
        const r4 = yield* st.range({ ...all, sortTarget: 4 })
        expect(vals(r4.kvs)).toEqual(["a=0", "b=1", "c=2"])
        // filters prune kvs, not count
        const r5 = yield* st.range({ ...all, minModRevision: 4, limit: 1 })
        expect([vals(r5.kvs), r5.more, r5.count]).toEqual([["a=0"], true, 3])
        const r6 = yield* st.range({ ...all, maxCreateRevision: 2 })
        expect([vals(r6.kvs), r6.count]).toEqual([["a=0"], 3])
        const r7 = yield* st.range({ ...all, countOnly: true, limit: 1 })
        expect([r7.kvs, r7.more, r7.count]).toEqual([[], false, 3])
        const r8 = yield* st.range({ ...all, keysOnly: true })
        expect(vals(r8.kvs)).toEqual(["a=", "b=", "c="])
        // historical read
        const r9 = yield* st.range({ ...all, revision: 4 })
        expect([vals(r9.kvs), r9.header.revision]).toEqual([["a=3", "b=1", "c=2"], 5])
        // key >= range_end: empty
        expect((yield* st.range({ key: b("c"), rangeEnd: b("a") })).count).toBe(0)
      }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("put: prev_kv, ignore_value keeps the value, ignore_lease keeps the lease", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const lessor = new FakeLessor()
      yield* st.attachLessor(() => ({ lessor, value: undefined }))
      yield* st.put({ key: b("k"), value: b("v1"), lease: 1n })
      const p = yield* st.put({ key: b("k"), lease: 2n, ignoreValue: true, prevKv: true })
      expect(p.prevKv && nkv(p.prevKv)).toEqual({ key: "k", create: 2, mod: 2, version: 1, value: "v1", lease: "1" })
      yield* st.put({ key: b("k"), value: b("v2"), ignoreLease: true })
      const r = yield* st.range({ key: b("k") })
      expect(nkv(r.kvs[0]!)).toEqual({ key: "k", create: 2, mod: 4, version: 3, value: "v2", lease: "2" })
      expect(lessor.snapshot()).toEqual({ k: "2" })
      yield* st.deleteRange({ key: b("k") })
      expect(lessor.snapshot()).toEqual({})
      expect(lessor.violations).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(memoryStore()))
  )

  it.effect("keys and values are copied: the caller may reuse its buffers", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const key = Buffer.from("key")
      const value = Buffer.from("value")
      const events: Array<Event> = []
      st.addCommitListener((_r, evs) => events.push(...evs))
      yield* st.put({ key, value })
      key.fill(0x41)
      value.fill(0x42)
      const r = yield* st.range({ key: b("key") })
      expect(vals(r.kvs)).toEqual(["key=value"])
      expect(events.map(nEvent).map((e) => `${e.kv.key}=${e.kv.value}`)).toEqual(["key=value"])
    }).pipe(Effect.provide(memoryStore()))
  )
})

describe("deleteKeys (lease revoke)", () => {
  it.effect("deletes in one revision, sorted, with extra ops in the same batch", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      const events: Array<[number, ReadonlyArray<Event>]> = []
      st.addCommitListener((rev, evs) => events.push([rev, evs]))
      for (const k of ["c", "a", "b"]) {
        const f = yield* Effect.fork(st.put({ key: b(k) }))
        yield* Effect.yieldNow()
        yield* gate.release()
        yield* Fiber.join(f)
      }
      const extra = [{ bucket: "lease" as const, key: b("L1"), value: undefined }]
      const f = yield* Effect.fork(st.deleteKeys([b("c"), b("zz"), b("a"), b("c")], extra))
      yield* Effect.yieldNow()
      const batch = gate.batches[gate.batches.length - 1]!
      expect(batch.map((op) => `${op.bucket}:${op.bucket === "key" ? bytesToMain(op.key) : s(op.key)}`)).toEqual([
        "key:5",
        "key:5",
        "lease:L1"
      ])
      yield* gate.release()
      const res = yield* Fiber.join(f)
      expect([res.deleted, res.header.revision]).toEqual([2, 5])
      expect(events.slice(-1).map(([rev, evs]) => [rev, evs.map((e) => `${e.type}:${s(e.kv.key)}`)])).toEqual([
        [5, ["1:a", "1:c"]]
      ])
      // nothing to delete: no revision, the extra ops still go to the backend
      const g = yield* Effect.fork(st.deleteKeys([b("a")], extra))
      yield* Effect.yieldNow()
      expect(gate.batches[gate.batches.length - 1]).toEqual(extra)
      yield* gate.release()
      const none = yield* Fiber.join(g)
      expect([none.deleted, none.header.revision, st.rev()]).toEqual([0, 5, 5])
    }).pipe(Effect.provide(l))
  })
})

describe("compaction", () => {
  const keyBucket = (be: { range: (typeof Backend.Service)["range"] }) =>
    be.range("key", revToBytes(0, 0), undefined).map(([k]) => `${bytesToMain(k)}${isTombstoneKey(k) ? "t" : ""}`)

  it.effect("physical compaction removes superseded revisions in batches, keeps R and a tombstone at R", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const be = yield* Backend
      for (let i = 0; i < 10; i++) yield* st.put({ key: b(`k${i % 3}`), value: b(String(i)) }) // revs 2..11
      yield* st.deleteRange({ key: b("k1") }) // 12: tombstone
      yield* st.put({ key: b("x") }) // 13
      yield* st.compact(12, true)
      // k0: last put <= 12 is rev 11 (i=9); k1 tombstone at 12 kept; k2 rev 10 (i=8); x at 13
      expect(keyBucket(be)).toEqual(["10", "11", "12t", "13"])
      expect(s(be.get("meta", b("finishedCompactRev"))!)).toBe(s(revToBytes(12, 0)))
      expect(s(be.get("meta", b("scheduledCompactRev"))!)).toBe(s(revToBytes(12, 0)))
      // the DELETE at the watermark is still delivered to a watcher from R
      expect(
        st
          .eventsBetween(12, 13)
          .map(nEvent)
          .map((e) => `${e.type} ${e.kv.key} ${e.kv.mod}`)
      ).toEqual(["DELETE k1 12", "PUT x 13"])
      // the next compaction past the tombstone drops it
      yield* st.compact(13, true)
      expect(keyBucket(be)).toEqual(["10", "11", "13"])
      const r = yield* st.range({ key: b("k"), rangeEnd: b("\0"), revision: 13 })
      expect(vals(r.kvs)).toEqual(["k0=9", "k2=8", "x="])
    }).pipe(
      Effect.provide(
        Layer.provideMerge(layer.pipe(Layer.provide(layerConfig({ compactionBatchLimit: 3 }))), layerMemory)
      )
    )
  )

  it.effect("the watermark is set at request time; physical removal runs in the background, FIFO", () => {
    const { gate, layer: l } = gatedStore()
    return Effect.gen(function* () {
      const st = yield* MvccStore
      for (let i = 0; i < 4; i++) {
        const f = yield* Effect.fork(st.put({ key: b("k"), value: b(String(i)) }))
        yield* Effect.yieldNow()
        yield* gate.release()
        yield* Fiber.join(f)
      }
      const c1 = yield* Effect.fork(st.compact(3))
      const c2 = yield* Effect.fork(st.compact(4, true))
      yield* Effect.yieldNow()
      expect(st.compactRevision()).toBe(4)
      const e = yield* Effect.flip(st.range({ key: b("k"), revision: 3 }))
      expect(e.message).toBe("etcdserver: mvcc: required revision has been compacted")
      // release until both compactions are done
      while (c2.unsafePoll() === null) {
        yield* gate.release()
        yield* Effect.yieldNow()
      }
      yield* Fiber.join(c1)
      yield* Fiber.join(c2)
      const metas = gate.batches
        .flat()
        .filter((op) => op.bucket === "meta")
        .map((op) => `${s(op.key)}=${bytesToMain(op.value!)}`)
      expect(metas).toEqual([
        "scheduledCompactRev=3",
        "scheduledCompactRev=4",
        "finishedCompactRev=3",
        "finishedCompactRev=4"
      ])
      expect(vals((yield* st.range({ key: b("k"), revision: 4 })).kvs)).toEqual(["k=2"])
    }).pipe(Effect.provide(l))
  })
})
