/**
 * The hand-written mvccpb.KeyValue codec and the request-size estimate, checked against protobufjs
 * encoding with the project's own proto files.
 */
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import protobufjs from "protobufjs"
import type { KeyValue } from "../../src/mvcc/key-value.js"
import type { Compare, PutRequest, RequestOp, TxnRequest } from "../../src/mvcc/kv.js"
import {
  bytesToMain,
  bytesToSub,
  decodeKeyValue,
  encodeKeyValue,
  encodeTombstone,
  isTombstoneKey,
  revToBytes
} from "../../src/mvcc/kv-codec.js"
import {
  deleteRangeRequestSize,
  internalRaftRequestSize,
  putRequestSize,
  txnRequestSize
} from "../../src/mvcc/request-size.js"
import { decodeRevision, encodeRevision } from "../../src/mvcc/revision.js"

const root = new protobufjs.Root().loadSync(join(process.cwd(), "proto", "rpc.proto"), { keepCase: true })
root.resolveAll()
const T = (name: string) => root.lookupType(name)

const bytes = fc.uint8Array({ maxLength: 300 })
const rev = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 ** 31 }), fc.constant(2 ** 53 - 1))
const int64 = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }),
  fc.bigInt({ min: -(2n ** 63n), max: -1n })
)
const kvArb: fc.Arbitrary<KeyValue> = fc.record({
  key: bytes,
  createRevision: rev,
  modRevision: rev,
  version: rev,
  value: bytes,
  lease: int64
})

/**
 * protobufjs writes every field that is set; proto3 (and etcd's gogoproto code) omits zero values.
 * Drop them, except the oneof members listed in `keep`.
 */
const clean = (o: Record<string, unknown>, keep: ReadonlyArray<string> = []): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(o).filter(
      ([k, v]) =>
        keep.includes(k) ||
        !(v === undefined || v === 0 || v === "0" || v === false || (v instanceof Uint8Array && v.length === 0))
    )
  )

const toPbKv = (kv: KeyValue) =>
  clean({
    key: kv.key,
    create_revision: kv.createRevision,
    mod_revision: kv.modRevision,
    version: kv.version,
    value: kv.value,
    lease: kv.lease.toString()
  })

describe("mvccpb.KeyValue codec", () => {
  const KV = T("mvccpb.KeyValue")

  it.prop("encodes byte-for-byte like protobufjs and decodes back", [kvArb], ([kv]) => {
    const ours = encodeKeyValue(kv)
    const theirs = KV.encode(KV.fromObject(toPbKv(kv))).finish()
    expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true)
    expect(decodeKeyValue(theirs)).toEqual(kv)
  })

  it("decoding copies: the result does not alias the input", () => {
    const kv: KeyValue = {
      key: new Uint8Array([1, 2]),
      createRevision: 2,
      modRevision: 3,
      version: 1,
      value: new Uint8Array([9]),
      lease: 0n
    }
    const enc = encodeKeyValue(kv)
    const dec = decodeKeyValue(enc)
    enc.fill(0)
    expect(dec).toEqual(kv)
  })

  it("skips unknown fields and rejects truncated input", () => {
    const kv: KeyValue = {
      key: new Uint8Array([7]),
      createRevision: 5,
      modRevision: 6,
      version: 2,
      value: new Uint8Array([1, 2]),
      lease: 3n
    }
    // field 9 varint 150, field 10 bytes "ab", then the real fields
    const extra = new Uint8Array([0x48, 0x96, 0x01, 0x52, 0x02, 0x61, 0x62])
    const enc = encodeKeyValue(kv)
    const joined = new Uint8Array(extra.length + enc.length)
    joined.set(extra)
    joined.set(enc, extra.length)
    expect(decodeKeyValue(joined)).toEqual(kv)
    expect(() => decodeKeyValue(enc.subarray(0, enc.length - 1))).toThrow()
  })

  it("a tombstone stores KeyValue{key} only", () => {
    const enc = encodeTombstone(new Uint8Array([0x66, 0x6f, 0x6f]))
    expect(Buffer.from(enc).equals(Buffer.from(KV.encode(KV.fromObject({ key: Buffer.from("foo") })).finish()))).toBe(
      true
    )
  })
})

describe("revision bytes", () => {
  it.prop(
    "match revision.ts's encoding, order and tombstone mark",
    [fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.integer({ min: 0, max: 2 ** 40 }), fc.boolean()],
    ([main, sub, tomb]) => {
      const ours = revToBytes(main, sub, tomb)
      expect(Buffer.from(ours).equals(Buffer.from(encodeRevision({ main, sub }, tomb)))).toBe(true)
      expect([bytesToMain(ours), bytesToSub(ours), isTombstoneKey(ours)]).toEqual([main, sub, tomb])
      expect(decodeRevision(ours)).toEqual({ main, sub })
    }
  )

  it("byte order is revision order", () => {
    const revs = [
      [1, 0],
      [1, 1],
      [2, 0],
      [255, 7],
      [256, 0],
      [2 ** 32, 0],
      [2 ** 32 + 1, 0]
    ] as const
    const enc = revs.map(([m, s]) => Buffer.from(revToBytes(m, s)))
    const sorted = [...enc].sort(Buffer.compare)
    expect(sorted).toEqual(enc)
  })
})

describe("request size estimate", () => {
  const key = fc.uint8Array({ minLength: 1, maxLength: 40 })
  const putArb: fc.Arbitrary<PutRequest> = fc.record(
    {
      key,
      value: bytes,
      lease: int64,
      prevKv: fc.boolean(),
      ignoreValue: fc.boolean(),
      ignoreLease: fc.boolean()
    },
    { requiredKeys: ["key"] }
  )
  const compareArb: fc.Arbitrary<Compare> = fc.oneof(
    fc.record({ key, result: fc.constantFrom(0, 1, 2, 3), target: fc.constant(0), version: rev }),
    fc.record({ key, result: fc.constantFrom(0, 1, 2, 3), target: fc.constant(2), modRevision: rev, rangeEnd: bytes }),
    fc.record({ key, result: fc.constantFrom(0, 1, 2, 3), target: fc.constant(3), value: bytes }),
    fc.record({ key, result: fc.constantFrom(0, 1, 2, 3), target: fc.constant(4), lease: int64 })
  ) as fc.Arbitrary<Compare>
  const opArb: fc.Arbitrary<RequestOp> = fc.oneof(
    putArb.map((request) => ({ _tag: "Put" as const, request })),
    fc
      .record({ key, rangeEnd: bytes, prevKv: fc.boolean() })
      .map((request) => ({ _tag: "DeleteRange" as const, request })),
    fc
      .record({
        key,
        rangeEnd: bytes,
        limit: rev,
        revision: rev,
        sortOrder: fc.constantFrom(0, 1, 2),
        countOnly: fc.boolean()
      })
      .map((request) => ({ _tag: "Range" as const, request: request as never }))
  )
  const txnArb: fc.Arbitrary<TxnRequest> = fc.record({
    compare: fc.array(compareArb, { maxLength: 4 }),
    success: fc.array(
      fc.oneof(
        opArb,
        opArb.map((op) => ({ _tag: "Txn" as const, request: { compare: [], success: [op], failure: [] } }))
      ),
      { maxLength: 4 }
    ),
    failure: fc.array(opArb, { maxLength: 4 })
  })

  const pbPut = (p: PutRequest) =>
    clean({
      key: p.key,
      value: p.value,
      lease: (p.lease ?? 0n).toString(),
      prev_kv: p.prevKv,
      ignore_value: p.ignoreValue,
      ignore_lease: p.ignoreLease
    })
  const pbCompare = (c: Compare) => {
    const base = { key: c.key, result: c.result, target: c.target, range_end: c.rangeEnd }
    switch (c.target) {
      case 0:
        return clean({ ...base, version: c.version }, ["version"])
      case 1:
        return clean({ ...base, create_revision: c.createRevision }, ["create_revision"])
      case 2:
        return clean({ ...base, mod_revision: c.modRevision }, ["mod_revision"])
      case 3:
        return clean({ ...base, value: c.value }, ["value"])
      case 4:
        return clean({ ...base, lease: c.lease.toString() }, ["lease"])
    }
  }
  const pbOp = (op: RequestOp): object => {
    switch (op._tag) {
      case "Put":
        return { request_put: pbPut(op.request) }
      case "DeleteRange":
        return {
          request_delete_range: clean({
            key: op.request.key,
            range_end: op.request.rangeEnd,
            prev_kv: op.request.prevKv
          })
        }
      case "Range": {
        const r = op.request
        return {
          request_range: clean({
            key: r.key,
            range_end: r.rangeEnd,
            limit: r.limit,
            revision: r.revision,
            sort_order: r.sortOrder,
            count_only: r.countOnly
          })
        }
      }
      case "Txn":
        return { request_txn: pbTxn(op.request) }
    }
  }
  const pbTxn = (t: TxnRequest): object => ({
    compare: t.compare.map(pbCompare),
    success: t.success.map(pbOp),
    failure: t.failure.map(pbOp)
  })

  it.prop("PutRequest size is exact", [putArb], ([p]) => {
    const M = T("etcdserverpb.PutRequest")
    expect(putRequestSize(p)).toBe(M.encode(M.fromObject(pbPut(p))).finish().length)
  })

  it.prop("DeleteRangeRequest size is exact", [fc.record({ key, rangeEnd: bytes, prevKv: fc.boolean() })], ([d]) => {
    const M = T("etcdserverpb.DeleteRangeRequest")
    expect(deleteRangeRequestSize(d)).toBe(
      M.encode(M.fromObject(clean({ key: d.key, range_end: d.rangeEnd, prev_kv: d.prevKv }))).finish().length
    )
  })

  it.prop("TxnRequest size is exact (nested, all compare targets)", [txnArb], ([t]) => {
    const M = T("etcdserverpb.TxnRequest")
    expect(txnRequestSize(t)).toBe(M.encode(M.fromObject(pbTxn(t))).finish().length)
  })

  it("the raft envelope is never smaller than etcd's InternalRaftRequest", () => {
    const M = T("etcdserverpb.PutRequest")
    const p = { key: Buffer.from("k"), value: Buffer.alloc(1000) }
    const inner = M.encode(M.fromObject(p)).finish().length
    // etcd: header{ID: uint64 up to 10 varint bytes} (field 100) + put (field 4)
    const etcd = 2 + 1 + 1 + 10 + 1 + 2 + inner
    expect(internalRaftRequestSize(putRequestSize(p))).toBe(etcd)
  })
})
