/**
 * Bad input gets etcd's exact error (message and gRPC code) and never changes state.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type EtcdError, GrpcCode } from "../../src/errors.js"
import { MvccStore, type RequestOp, type TxnRequest } from "../../src/mvcc/kv.js"
import { internalRaftRequestSize, putRequestSize } from "../../src/mvcc/request-size.js"
import { FakeLessor, nkv } from "./driver.js"
import { b, memoryStore } from "./helpers.js"

const INVALID = GrpcCode.InvalidArgument

/** Runs `eff`, expects failure with exactly this message and code, and that rev() did not move. */
const failsWith = <A>(eff: Effect.Effect<A, EtcdError>, message: string, code: number) =>
  Effect.gen(function* () {
    const st = yield* MvccStore
    const before = st.rev()
    const all = yield* st.range({ key: b("\0"), rangeEnd: b("\0") })
    const e = yield* Effect.flip(eff)
    expect({ message: e.message, code: e.code }).toEqual({ message, code })
    expect(st.rev()).toBe(before)
    const after = yield* st.range({ key: b("\0"), rangeEnd: b("\0") })
    // compared as strings: toEqual on megabyte Uint8Arrays is slow
    expect(JSON.stringify(after.kvs.map(nkv)) === JSON.stringify(all.kvs.map(nkv))).toBe(true)
  })

const put = (k: string, v = "v"): RequestOp => ({ _tag: "Put", request: { key: b(k), value: b(v) } })
const del = (k: string, end?: string): RequestOp => ({
  _tag: "DeleteRange",
  request: { key: b(k), rangeEnd: end === undefined ? undefined : b(end) }
})
const txnOp = (t: Partial<TxnRequest>): RequestOp => ({
  _tag: "Txn",
  request: { compare: [], success: [], failure: [], ...t }
})
const ranges = (n: number): Array<RequestOp> =>
  Array.from({ length: n }, (_, i) => ({ _tag: "Range", request: { key: b(`k${i}`) } }) as RequestOp)

describe("request checks (v3rpc/key.go)", () => {
  it.effect("empty key", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const msg = "etcdserver: key is not provided"
      yield* failsWith(st.range({ key: b("") }), msg, INVALID)
      yield* failsWith(st.put({ key: b(""), value: b("x") }), msg, INVALID)
      yield* failsWith(st.deleteRange({ key: b("") }), msg, INVALID)
      yield* failsWith(
        st.txn({ compare: [{ key: b(""), target: 0, result: 0, version: 0 }], success: [], failure: [] }),
        msg,
        INVALID
      )
      yield* failsWith(st.txn({ compare: [], success: [put("")], failure: [] }), msg, INVALID)
      yield* failsWith(st.txn({ compare: [], success: [], failure: [txnOp({ success: [del("")] })] }), msg, INVALID)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("ignore_value with a value, ignore_lease with a lease", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.put({ key: b("k"), value: b("v") })
      yield* failsWith(
        st.put({ key: b("k"), value: b("x"), ignoreValue: true }),
        "etcdserver: value is provided",
        INVALID
      )
      yield* failsWith(st.put({ key: b("k"), lease: 5n, ignoreLease: true }), "etcdserver: lease is provided", INVALID)
      yield* failsWith(
        st.txn({
          compare: [],
          success: [{ _tag: "Put", request: { key: b("k"), value: b("x"), ignoreValue: true } }],
          failure: []
        }),
        "etcdserver: value is provided",
        INVALID
      )
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("ignore_value / ignore_lease on a missing key: key not found", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* failsWith(st.put({ key: b("nope"), ignoreValue: true }), "etcdserver: key not found", INVALID)
      yield* failsWith(
        st.put({ key: b("nope"), value: b("v"), ignoreLease: true }),
        "etcdserver: key not found",
        INVALID
      )
      yield* failsWith(
        st.txn({
          compare: [],
          success: [{ _tag: "Put", request: { key: b("nope"), ignoreValue: true } }],
          failure: []
        }),
        "etcdserver: key not found",
        INVALID
      )
      // a from-key delete earlier in the same txn removes the key that ignore_value needs: etcd
      // would panic mid-apply; we fail the whole txn and roll back
      yield* st.put({ key: b("b"), value: b("old") })
      yield* failsWith(
        st.txn({
          compare: [],
          success: [put("a"), del("a", "\0"), { _tag: "Put", request: { key: b("b"), ignoreValue: true } }],
          failure: []
        }),
        "etcdserver: key not found",
        INVALID
      )
      const r = yield* st.range({ key: b("b") })
      expect(r.kvs.map((kv) => Buffer.from(kv.value).toString())).toEqual(["old"])
      // the index was rolled back too: the next write to "b" continues its generation
      const next = yield* st.put({ key: b("b"), value: b("new") })
      expect(next.header.revision).toBe(3)
      const again = yield* st.range({ key: b("b"), rangeEnd: b("c") })
      expect(again.kvs.map((kv) => [kv.createRevision, kv.modRevision, kv.version])).toEqual([[2, 3, 2]])
      expect((yield* st.range({ key: b("a") })).count).toBe(0)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("invalid sort order or target (etcd 3.5+)", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const msg = "etcdserver: invalid sort option"
      yield* failsWith(st.range({ key: b("a"), sortOrder: 3 as never }), msg, INVALID)
      yield* failsWith(st.range({ key: b("a"), sortTarget: 99 as never }), msg, INVALID)
      yield* failsWith(
        st.txn({
          compare: [],
          success: [{ _tag: "Range", request: { key: b("a"), sortTarget: -1 as never } }],
          failure: []
        }),
        msg,
        INVALID
      )
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("an empty RequestOp: key not found", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* failsWith(
        st.txn({ compare: [], success: [{} as RequestOp], failure: [] }),
        "etcdserver: key not found",
        INVALID
      )
    }).pipe(Effect.provide(memoryStore()))
  )
})

describe("txn limits", () => {
  const msg = "etcdserver: too many operations in txn request"

  it.effect("at most 128 compares, success or failure ops", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const ok = yield* st.txn({ compare: [], success: ranges(128), failure: [] })
      expect(ok.responses.length).toBe(128)
      yield* failsWith(st.txn({ compare: [], success: ranges(129), failure: [] }), msg, INVALID)
      yield* failsWith(st.txn({ compare: [], success: [], failure: ranges(129) }), msg, INVALID)
      const cmp = Array.from({ length: 129 }, () => ({
        key: b("a"),
        target: 0 as const,
        result: 0 as const,
        version: 0
      }))
      yield* failsWith(st.txn({ compare: cmp, success: [], failure: [] }), msg, INVALID)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("a nested txn gets what its parent leaves: 128 - parent's widest", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      // parent widest = 100 (99 ranges + the nested txn), so the nested txn may have 28
      const fits = [...ranges(99), txnOp({ success: ranges(28) })]
      yield* st.txn({ compare: [], success: fits, failure: [] })
      const over = [...ranges(99), txnOp({ success: ranges(29) })]
      yield* failsWith(st.txn({ compare: [], success: over, failure: [] }), msg, INVALID)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("the limit is configurable (--max-txn-ops)", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.txn({ compare: [], success: ranges(4), failure: [] })
      yield* failsWith(st.txn({ compare: [], success: ranges(5), failure: [] }), msg, INVALID)
    }).pipe(Effect.provide(memoryStore({ maxTxnOps: 4 })))
  )
})

describe("duplicate keys in a txn (checkIntervals)", () => {
  const msg = "etcdserver: duplicate key given in txn request"
  const rejects = (ops: Array<RequestOp>) =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* failsWith(st.txn({ compare: [], success: ops, failure: [] }), msg, INVALID)
      yield* failsWith(st.txn({ compare: [], success: [], failure: ops }), msg, INVALID)
    })
  const accepts = (ops: Array<RequestOp>) =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.txn({ compare: [], success: ops, failure: [] })
    })

  it.effect("rejects a key put twice, or put and deleted", () =>
    Effect.gen(function* () {
      yield* rejects([put("a"), put("a")])
      yield* rejects([put("a"), del("a")])
      yield* rejects([del("a"), put("a")])
      yield* rejects([del("a", "c"), put("b")])
      yield* rejects([put("a"), txnOp({ success: [put("a")] })])
      yield* rejects([txnOp({ success: [del("a")] }), put("a")])
      yield* rejects([txnOp({ success: [put("a")] }), txnOp({ failure: [put("a")] })])
      yield* rejects([del("a", "c"), txnOp({ failure: [put("b")] })])
      yield* rejects([txnOp({ success: [del("a")] }), txnOp({ success: [put("a")] })])
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("accepts what etcd accepts", () =>
    Effect.gen(function* () {
      // the two branches of one nested txn are exclusive
      yield* accepts([txnOp({ success: [put("a")], failure: [put("a")] })])
      // deletes may overlap each other; ranges are not writes
      yield* accepts([del("a", "c"), del("b"), { _tag: "Range", request: { key: b("a") } }, put("c")])
      // a from-key delete (end "\0") covers nothing in etcd's interval check
      yield* accepts([del("a", "\0"), put("b")])
      // a put in an earlier nested txn is not checked against a later sibling's delete (etcd's order)
      yield* accepts([txnOp({ success: [put("a")] }), txnOp({ success: [del("a")] })])
      const st = yield* MvccStore
      expect(st.rev()).toBeGreaterThan(1)
    }).pipe(Effect.provide(memoryStore()))
  )
})

describe("revisions", () => {
  it.effect("ranges: future and compacted revisions", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      for (let i = 0; i < 5; i++) yield* st.put({ key: b("k"), value: b(String(i)) })
      expect(st.rev()).toBe(6)
      const future = "etcdserver: mvcc: required revision is a future revision"
      const compacted = "etcdserver: mvcc: required revision has been compacted"
      yield* failsWith(st.range({ key: b("k"), revision: 7 }), future, GrpcCode.OutOfRange)
      yield* st.compact(4)
      yield* failsWith(st.range({ key: b("k"), revision: 3 }), compacted, GrpcCode.OutOfRange)
      // the watermark itself is readable
      const at4 = yield* st.range({ key: b("k"), revision: 4 })
      expect(Buffer.from(at4.kvs[0]!.value).toString()).toBe("2")
      // inside a txn, checked before anything is applied
      yield* failsWith(
        st.txn({
          compare: [],
          success: [put("x"), { _tag: "Range", request: { key: b("k"), revision: 7 } }],
          failure: []
        }),
        future,
        GrpcCode.OutOfRange
      )
      yield* failsWith(
        st.txn({
          compare: [],
          success: [put("x"), { _tag: "Range", request: { key: b("k"), revision: 2 } }],
          failure: []
        }),
        compacted,
        GrpcCode.OutOfRange
      )
      expect((yield* st.range({ key: b("x") })).count).toBe(0)
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("compact: at or below the watermark, or in the future", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      for (let i = 0; i < 5; i++) yield* st.put({ key: b("k"), value: b(String(i)) })
      yield* failsWith(st.compact(7), "etcdserver: mvcc: required revision is a future revision", GrpcCode.OutOfRange)
      const res = yield* st.compact(3)
      expect(res.header.revision).toBe(6)
      expect(st.compactRevision()).toBe(3)
      yield* failsWith(st.compact(3), "etcdserver: mvcc: required revision has been compacted", GrpcCode.OutOfRange)
      yield* failsWith(st.compact(2), "etcdserver: mvcc: required revision has been compacted", GrpcCode.OutOfRange)
      expect(st.compactRevision()).toBe(3)
    }).pipe(Effect.provide(memoryStore()))
  )
})

describe("leases", () => {
  it.effect("a put with an unknown lease: requested lease not found", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const msg = "etcdserver: requested lease not found"
      // no lessor installed: every lease is unknown
      yield* failsWith(st.put({ key: b("k"), value: b("v"), lease: 1n }), msg, GrpcCode.NotFound)
      yield* st.attachLessor(() => ({ lessor: new FakeLessor(), value: undefined }))
      yield* failsWith(st.put({ key: b("k"), value: b("v"), lease: 3n }), msg, GrpcCode.NotFound)
      yield* failsWith(
        st.txn({ compare: [], success: [{ _tag: "Put", request: { key: b("k"), lease: 9n } }], failure: [] }),
        msg,
        GrpcCode.NotFound
      )
      // only the branch taken is checked
      const ok = yield* st.txn({
        compare: [{ key: b("k"), target: 0, result: 0, version: 0 }],
        success: [put("k")],
        failure: [{ _tag: "Put", request: { key: b("k"), lease: 9n } }]
      })
      expect(ok.succeeded).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(memoryStore()))
  )
})

describe("request size (--max-request-bytes)", () => {
  it.effect("a put over the limit is rejected; one at the limit is accepted", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const max = 4096
      // find the largest value whose request fits exactly
      const size = (n: number) => internalRaftRequestSize(putRequestSize({ key: b("k"), value: new Uint8Array(n) }))
      let n = max
      while (size(n) > max) n--
      expect(size(n + 1)).toBeGreaterThan(max)
      yield* st.put({ key: b("k"), value: new Uint8Array(n) })
      yield* failsWith(
        st.put({ key: b("k"), value: new Uint8Array(n + 1) }),
        "etcdserver: request is too large",
        INVALID
      )
      yield* failsWith(
        st.txn({
          compare: [],
          success: [{ _tag: "Put", request: { key: b("k"), value: new Uint8Array(max) } }],
          failure: []
        }),
        "etcdserver: request is too large",
        INVALID
      )
      yield* failsWith(st.deleteRange({ key: new Uint8Array(max) }), "etcdserver: request is too large", INVALID)
      // reads are not proposals: a large read-only request is fine
      yield* st.range({ key: new Uint8Array(max) })
      yield* st.txn({ compare: [], success: [{ _tag: "Range", request: { key: new Uint8Array(max) } }], failure: [] })
    }).pipe(Effect.provide(memoryStore({ maxRequestBytes: 4096 })))
  )

  it.effect("the default limit is 1.5 MiB", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      yield* st.put({ key: b("k"), value: new Uint8Array(1024 * 1024) })
      yield* failsWith(
        st.put({ key: b("k"), value: new Uint8Array(1572864) }),
        "etcdserver: request is too large",
        INVALID
      )
    }).pipe(Effect.provide(memoryStore()))
  )
})
