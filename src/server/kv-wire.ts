/**
 * The KV service's responses to bytes without protobufjs' `fromObject` on the hot fields (the
 * unary twin of watch-wire.ts). protobufjs turns every int64 of a response into a Long and every
 * message into an instance before it encodes: for a Range of one 256-byte value that was 9–11 µs
 * of the server's ~70 µs per call, up to half of it the ResponseHeader's two uint64 ids (issue 29,
 * docs/benchmarks.md "Lever 29b").
 *
 * - Every KV response (Range, Put, DeleteRange, Txn, Compact) has its ResponseHeader as field 1:
 *   the header is written here, its cluster_id/member_id/raft_term bytes kept while they stay the
 *   same, and the rest of the message encoded by the method's own serializer after it — the
 *   bytes protobufjs writes, which orders fields by number.
 * - RangeResponse is written here whole (header, kvs, more, count).
 *
 * The output is byte-for-byte protobufjs': a field is written when present (not null/undefined),
 * zeros included, as protobufjs' generated encoders do. A value of a shape these encoders do not
 * take (an int64 as a long decimal string, bytes as a base64 string, …) sends the whole message to
 * the method's serializer, so no shape is encoded differently (test/server/kv-wire.test.ts
 * compares the two on random messages).
 */
import { putVarintBig, putVarintNum, varintSizeBig, varintSizeNum } from "../mvcc/kv-codec.js"
import type { KeyValueInit, RangeResponseInit, ResponseHeaderInit } from "../proto/messages.js"

type Serialize = (value: unknown) => Buffer

const U64_MAX = (1n << 64n) - 1n
const I64_MIN = -(1n << 63n)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const MIN_SAFE = -MAX_SAFE

/**
 * An int64/uint64 field's value as a number (safe integers) or a bigint (the 64-bit rest); undefined
 * when the shape is not one these encoders take.
 */
const int64 = (v: unknown): number | bigint | undefined => {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : undefined
  if (typeof v === "bigint") {
    if (v >= MIN_SAFE && v <= MAX_SAFE) return Number(v)
    return v >= I64_MIN && v <= U64_MAX ? v : undefined
  }
  if (typeof v === "string" && v.length > 0 && v.length <= 15 && /^-?[0-9]+$/.test(v)) return Number(v)
  return undefined
}

const varintSize = (v: number | bigint): number => (typeof v === "number" ? varintSizeNum(v) : varintSizeBig(v))

const putVarint = (b: Uint8Array, p: number, v: number | bigint): number =>
  typeof v === "number" ? putVarintNum(b, p, v) : putVarintBig(b, p, v)

/** A message's fields as [tag, value] pairs in field order, sized: the encoders' one plan. */
class Plan {
  readonly tags: Array<number> = []
  readonly values: Array<number | bigint | Uint8Array | Plan | boolean> = []
  size = 0

  int(tag: number, v: number | bigint): void {
    this.tags.push(tag)
    this.values.push(v)
    this.size += 1 + varintSize(v)
  }

  bool(tag: number, v: boolean): void {
    this.tags.push(tag)
    this.values.push(v)
    this.size += 2
  }

  bytes(tag: number, v: Uint8Array | Plan): void {
    this.tags.push(tag)
    this.values.push(v)
    const n = v instanceof Plan ? v.size : v.length
    this.size += 1 + varintSizeNum(n) + n
  }

  write(b: Uint8Array, p: number): number {
    for (let i = 0; i < this.tags.length; i++) {
      b[p++] = this.tags[i]!
      const v = this.values[i]!
      if (typeof v === "boolean") b[p++] = v ? 1 : 0
      else if (typeof v === "number" || typeof v === "bigint") p = putVarint(b, p, v)
      else if (v instanceof Plan) {
        p = putVarintNum(b, p, v.size)
        p = v.write(b, p)
      } else {
        p = putVarintNum(b, p, v.length)
        b.set(v, p)
        p += v.length
      }
    }
    return p
  }
}

/**
 * Adds an int64 field (a uint64 one when `unsigned`) when present; false when its shape is not
 * taken here (protobufjs writes a negative number in a uint64 field as 0: that is left to it).
 */
const addInt = (plan: Plan, tag: number, v: unknown, unsigned = false): boolean => {
  if (v === undefined || v === null) return true
  const n = int64(v)
  if (n === undefined || (unsigned && n < 0)) return false
  plan.int(tag, n)
  return true
}

const addBytes = (plan: Plan, tag: number, v: unknown): boolean => {
  if (v === undefined || v === null) return true
  if (!(v instanceof Uint8Array)) return false
  plan.bytes(tag, v)
  return true
}

/** mvccpb.KeyValue: key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6. */
const keyValuePlan = (kv: KeyValueInit): Plan | undefined => {
  const plan = new Plan()
  const ok =
    addBytes(plan, 0x0a, kv.key) &&
    addInt(plan, 0x10, kv.create_revision) &&
    addInt(plan, 0x18, kv.mod_revision) &&
    addInt(plan, 0x20, kv.version) &&
    addBytes(plan, 0x2a, kv.value) &&
    addInt(plan, 0x30, kv.lease)
  return ok ? plan : undefined
}

/** An object literal's shape (a protobufjs message instance, an array or bytes go to protobufjs). */
const isPlainObject = (v: unknown): v is object =>
  typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype

/** Bytes of a plan. */
const planBytes = (plan: Plan): Uint8Array => {
  const b = new Uint8Array(plan.size)
  plan.write(b, 0)
  return b
}

/**
 * The header as field 1 of a response; undefined when absent, null when its shape goes to
 * protobufjs. A server's headers differ only by revision: the bytes of the ids and the term are
 * kept while they stay the same, and the whole field while the revision does too.
 */
const headerBytes = (() => {
  let cluster: unknown
  let member: unknown
  let term: unknown
  let ids: Uint8Array | null = null // cluster_id and member_id fields
  let termField: Uint8Array | null = null
  let revision: unknown
  let field: Uint8Array | null = null
  return (h: ResponseHeaderInit | null | undefined): Uint8Array | null | undefined => {
    if (h === undefined || h === null) return undefined
    if (!isPlainObject(h)) return null
    if (field !== null && h.cluster_id === cluster && h.member_id === member && h.raft_term === term) {
      if (h.revision === revision) return field
    } else {
      const a = new Plan()
      const b = new Plan()
      if (!addInt(a, 0x08, h.cluster_id, true) || !addInt(a, 0x10, h.member_id, true)) return null
      if (!addInt(b, 0x20, h.raft_term, true)) return null
      cluster = h.cluster_id
      member = h.member_id
      term = h.raft_term
      ids = planBytes(a)
      termField = planBytes(b)
    }
    const rev = new Plan()
    if (!addInt(rev, 0x18, h.revision)) return null
    const size = ids!.length + rev.size + termField!.length
    const out = new Uint8Array(1 + varintSizeNum(size) + size)
    out[0] = 0x0a
    let p = putVarintNum(out, 1, size)
    out.set(ids!, p)
    p = rev.write(out, p + ids!.length)
    out.set(termField!, p)
    revision = h.revision
    field = out
    return out
  }
})()

const concat = (head: Uint8Array, rest: Uint8Array): Buffer => {
  const out = Buffer.allocUnsafe(head.length + rest.length)
  out.set(head, 0)
  out.set(rest, head.length)
  return out
}

/**
 * A serializer for a response whose field 1 is its ResponseHeader: the header written here, the
 * rest by `serialize` (the same bytes protobufjs writes for the whole message).
 */
export const headerFirst =
  (serialize: Serialize): Serialize =>
  (value: unknown): Buffer => {
    if (!isPlainObject(value)) return serialize(value)
    const o = value as { readonly header?: ResponseHeaderInit | null }
    const head = headerBytes(o.header)
    if (head === undefined || head === null) return serialize(value)
    const { header: _header, ...rest } = o
    return concat(head, serialize(rest))
  }

/** RangeResponse (header 1, kvs 2, more 3, count 4) whole; `serialize` takes what is not plain. */
export const rangeResponseSerializer =
  (serialize: Serialize): Serialize =>
  (value: unknown): Buffer => {
    if (!isPlainObject(value)) return serialize(value)
    const o = value as RangeResponseInit
    const head = headerBytes(o.header)
    if (head === null) return serialize(value)
    const plan = new Plan()
    if (o.kvs !== undefined && o.kvs !== null) {
      if (!Array.isArray(o.kvs)) return serialize(value)
      for (const kv of o.kvs) {
        if (!isPlainObject(kv)) return serialize(value)
        const p = keyValuePlan(kv)
        if (p === undefined) return serialize(value)
        plan.bytes(0x12, p)
      }
    }
    if (o.more !== undefined && o.more !== null) {
      if (typeof o.more !== "boolean") return serialize(value)
      plan.bool(0x18, o.more)
    }
    if (!addInt(plan, 0x20, o.count)) return serialize(value)
    const headLength = head === undefined ? 0 : head.length
    const out = Buffer.allocUnsafe(headLength + plan.size)
    if (head !== undefined) out.set(head, 0)
    plan.write(out, headLength)
    return out
  }

/** The KV service's definition with these serializers on its responses. */
export const withKvWire = <D extends Record<string, { readonly responseSerialize: Serialize }>>(definition: D): D => {
  const out: Record<string, { readonly responseSerialize: Serialize }> = {}
  for (const [method, def] of Object.entries(definition)) {
    out[method] = {
      ...def,
      responseSerialize:
        method === "Range" ? rangeResponseSerializer(def.responseSerialize) : headerFirst(def.responseSerialize)
    }
  }
  return out as D
}
