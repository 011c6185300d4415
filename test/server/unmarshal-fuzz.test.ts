/**
 * Malformed protobuf bodies, differential against etcd 3.4: valid request bodies of the unary
 * rpcs (made with the protos' own encoders from random field values), then mutated — bytes
 * flipped, inserted, deleted, truncated, random tags appended, or entirely random — sent raw to
 * etcd 3.4 and to our server. Whenever etcd refuses to decode one (INTERNAL "grpc: error
 * unmarshalling request: …"), ours refuses it with the same code and text; whenever etcd decodes
 * it, ours does too (whatever the handler then answers). Thousands of bodies, batched so the
 * run stays short; plus a few hand-written cases per refusal kind, and the checker itself
 * against the wire forms it must accept.
 */
import * as grpc from "@grpc/grpc-js"
import { it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { packageDefinition } from "../../src/proto/load.js"
import { canonical, checkUnmarshal, goFieldName, makeRules, needsCanonical } from "../../src/server/unmarshal-check.js"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, startInProcess } from "./support/in-process.js"

/** The rpcs fuzzed, with the request type; rpcs that would change etcd's membership or auth are left out. */
const METHODS: ReadonlyArray<readonly [path: string, type: string]> = [
  ["/etcdserverpb.KV/Range", "RangeRequest"],
  ["/etcdserverpb.KV/Put", "PutRequest"],
  ["/etcdserverpb.KV/DeleteRange", "DeleteRangeRequest"],
  ["/etcdserverpb.KV/Txn", "TxnRequest"],
  ["/etcdserverpb.KV/Compact", "CompactionRequest"],
  ["/etcdserverpb.Lease/LeaseGrant", "LeaseGrantRequest"],
  ["/etcdserverpb.Lease/LeaseRevoke", "LeaseRevokeRequest"],
  ["/etcdserverpb.Lease/LeaseTimeToLive", "LeaseTimeToLiveRequest"],
  ["/etcdserverpb.Lease/LeaseLeases", "LeaseLeasesRequest"],
  ["/etcdserverpb.Maintenance/Status", "StatusRequest"],
  ["/etcdserverpb.Maintenance/Hash", "HashRequest"],
  ["/etcdserverpb.Maintenance/HashKV", "HashKVRequest"],
  ["/etcdserverpb.Auth/Authenticate", "AuthenticateRequest"],
  ["/etcdserverpb.Auth/UserGet", "AuthUserGetRequest"],
  ["/etcdserverpb.Auth/RoleGet", "AuthRoleGetRequest"],
  ["/etcdserverpb.Auth/UserGrantRole", "AuthUserGrantRoleRequest"],
  ["/etcdserverpb.Auth/RoleGrantPermission", "AuthRoleGrantPermissionRequest"]
]

const encoder = (type: string) => {
  const def = packageDefinition[`etcdserverpb.${type}`] as unknown as { serialize: (v: unknown) => Buffer }
  return def.serialize
}

const bytes = fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b))
const i64 = fc.oneof(
  fc.integer({ min: -5, max: 50 }),
  fc.constantFrom("-9223372036854775808", "9223372036854775807", "0")
)
/** Random values for every field of the fuzzed requests (unknown names are ignored by the encoder). */
const putOp = fc.record({ key: bytes, value: bytes, lease: i64, prev_kv: fc.boolean() })
const rangeOp = fc.record({ key: bytes, range_end: bytes, limit: i64, revision: i64, count_only: fc.boolean() })
const requestOp = fc.oneof(
  putOp.map((p) => ({ request_put: p })),
  rangeOp.map((r) => ({ request_range: r })),
  fc.record({ key: bytes, range_end: bytes }).map((d) => ({ request_delete_range: d }))
)
const compare = fc.record({
  result: fc.integer({ min: 0, max: 5 }),
  target: fc.integer({ min: 0, max: 5 }),
  key: bytes,
  version: i64,
  value: bytes,
  range_end: bytes
})
const fields = fc.record({
  key: bytes,
  range_end: bytes,
  value: bytes,
  limit: i64,
  revision: i64,
  sort_order: fc.integer({ min: 0, max: 4 }),
  serializable: fc.boolean(),
  lease: i64,
  ID: i64,
  TTL: i64,
  keys: fc.boolean(),
  physical: fc.boolean(),
  name: fc.string({ maxLength: 8 }),
  password: fc.string({ maxLength: 8 }),
  user: fc.string({ maxLength: 8 }),
  role: fc.string({ maxLength: 8 }),
  compare: fc.array(compare, { maxLength: 2 }),
  success: fc.array(requestOp, { maxLength: 3 }),
  failure: fc.array(requestOp, { maxLength: 2 }),
  perm: fc.record({ permType: fc.integer({ min: 0, max: 3 }), key: bytes, range_end: bytes })
})

type Mutation =
  | { readonly kind: "flip"; readonly at: number; readonly value: number }
  | { readonly kind: "insert"; readonly at: number; readonly bytes: Uint8Array }
  | { readonly kind: "delete"; readonly at: number; readonly n: number }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "append"; readonly bytes: Uint8Array }
  | { readonly kind: "random"; readonly bytes: Uint8Array }

/** Bytes that are often tags or varint pieces (wire types 0–7, continuation bits, field 0). */
const tagByte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 31 }).map((f) => f * 8 + 0),
  fc.constantFrom(0x00, 0x07, 0x0b, 0x0c, 0x80, 0xff, 0x0e, 0x0f)
)
const tagBytes = fc.array(tagByte, { minLength: 1, maxLength: 12 }).map((a) => Uint8Array.from(a))

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), value: tagByte }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: tagBytes }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), bytes: tagBytes }),
  fc.record({ kind: fc.constant("random" as const), bytes: fc.uint8Array({ maxLength: 24 }) })
)

const mutate = (body: Buffer, ms: ReadonlyArray<Mutation>): Buffer => {
  let b = Buffer.from(body)
  for (const m of ms) {
    const at = b.length === 0 ? 0 : "at" in m ? m.at % (b.length + 1) : 0
    switch (m.kind) {
      case "flip":
        if (b.length > 0) b[Math.min(at, b.length - 1)] = m.value
        break
      case "insert":
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)])
        break
      case "delete":
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.n)])
        break
      case "truncate":
        b = b.subarray(0, at)
        break
      case "append":
        b = Buffer.concat([b, m.bytes])
        break
      case "random":
        b = Buffer.from(m.bytes)
        break
    }
  }
  return b
}

const testCase = fc.record({
  method: fc.integer({ min: 0, max: METHODS.length - 1 }),
  fields,
  mutations: fc.array(mutation, { minLength: 1, maxLength: 3 })
})

const id = (b: Buffer) => b

/**
 * etcd 3.4's generated code has no overflow check on `index + length`: a length within a body's
 * size of 2^63 (after Go keeps the varint's low 64 bits) makes it panic and exit (slice bounds
 * out of range). Such bodies are not sent to
 * it; ours refuses them ("negative length", as later gogo versions do), checked on its own below.
 */
const crashesEtcd34 = (body: Uint8Array): boolean => {
  for (let i = 0; i < body.length; i++) {
    let v = 0n
    for (let k = 0; k < 10 && i + k < body.length; k++) {
      const b = body[i + k]!
      // Go's decoder keeps the low 64 bits: a tenth byte adds only its lowest bit
      v = (v | (BigInt(b & 0x7f) << BigInt(7 * k))) & ((1n << 64n) - 1n)
      if (b < 0x80) {
        if (v >= (1n << 63n) - 4096n && v < 1n << 63n) return true
        break
      }
    }
  }
  return false
}

const rules = makeRules(packageDefinition)
const deserialize = (type: string) =>
  (packageDefinition[`etcdserverpb.${type}`] as unknown as { deserialize: (b: Buffer) => unknown }).deserialize

interface RangeFields {
  readonly sort_target?: number
}
interface OpFields {
  readonly request_range?: RangeFields | null
  readonly request_txn?: TxnFields | null
}
interface TxnFields {
  readonly success?: ReadonlyArray<OpFields>
  readonly failure?: ReadonlyArray<OpFields>
}
/** RangeRequest.SortTarget has five values; etcd 3.4 does not check it */
const badSort = (r: RangeFields | null | undefined): boolean =>
  r != null && ((r.sort_target ?? 0) < 0 || (r.sort_target ?? 0) > 4)
const txnBadSort = (t: TxnFields): boolean =>
  [...(t.success ?? []), ...(t.failure ?? [])].some(
    (op) => badSort(op.request_range) || (op.request_txn != null && txnBadSort(op.request_txn))
  )

/**
 * etcd 3.4 also panics APPLYING a range whose sort_target is none of its five (apply.go's sorter
 * stays nil: "invalid memory address or nil pointer dereference" in sort.Sort; found by a shuffled
 * run's fuzz), in a Range or in a Txn's ops. Such a body, when it decodes (as gogo reads it), is
 * not sent to it.
 */
const crashesEtcd34Applying = (path: string, body: Buffer): boolean => {
  const type =
    path === "/etcdserverpb.KV/Range" ? "RangeRequest" : path === "/etcdserverpb.KV/Txn" ? "TxnRequest" : undefined
  if (type === undefined) return false
  const rule = rules(`etcdserverpb.${type}`)
  if (checkUnmarshal(rule, body) !== undefined) return false
  const decoded = deserialize(type)(canonical(rule, body))
  return type === "RangeRequest" ? badSort(decoded as RangeFields) : txnBadSort(decoded as TxnFields)
}

/** What a server made of a body: its unmarshalling refusal, or "decoded" (whatever the handler said). */
const outcome = (client: grpc.Client, path: string, body: Buffer) =>
  new Promise<string>((resolve) =>
    client.makeUnaryRequest(path, id, id, body, { deadline: Date.now() + 10_000 }, (e) => {
      if (e === null) return resolve("decoded")
      if (e.details.startsWith("grpc: error unmarshalling request:")) return resolve(`${e.code} ${e.details}`)
      // a server that stopped answering is not a "decoded"
      if (e.code === grpc.status.DEADLINE_EXCEEDED || e.code === grpc.status.UNAVAILABLE)
        return resolve(`${e.code} ${e.details}`)
      // our decoder failing where the check passed would show here
      if (e.details.startsWith("Error deserializing request")) return resolve(`${e.code} ${e.details}`)
      resolve("decoded")
    })
  )

// the last test checks what the property before it covered: a shuffled run keeps their order
describe.skipIf(skipEtcd)("malformed protobuf bodies, differential against etcd 3.4", { shuffle: false }, () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  let theirClient: grpc.Client
  let ourClient: grpc.Client
  let refused = 0
  let total = 0
  /** bodies that made etcd 3.4 exit although no predicate above knew them: each with its panic */
  const unknownCrashes: Array<string> = []

  beforeAll(async () => {
    ;[etcd, ours] = await Promise.all([EtcdProcess.start(), startInProcess()])
    theirClient = new grpc.Client(etcd.endpoint, grpc.credentials.createInsecure())
    ourClient = new grpc.Client(ours.endpoint, grpc.credentials.createInsecure())
  }, 60_000)
  afterAll(async () => {
    theirClient?.close()
    ourClient?.close()
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  const compareOne = async ([path, body]: readonly [string, Buffer]) => {
    const [theirs, mine] = await Promise.all([outcome(theirClient, path, body), outcome(ourClient, path, body)])
    return { path, body: body.toString("hex"), theirs, mine }
  }
  const etcdDied = async (results: ReadonlyArray<{ readonly theirs: string }>) =>
    results.some((r) => r.theirs.startsWith(`${grpc.status.UNAVAILABLE} `)) && !(await etcd.healthy())
  const restartEtcd = async () => {
    theirClient.close()
    await etcd.restart()
    theirClient = new grpc.Client(etcd.endpoint, grpc.credentials.createInsecure())
  }

  const compareBodies = (cases: ReadonlyArray<readonly [string, Buffer]>) =>
    Effect.promise(async () => {
      const safe = cases.filter(([path, body]) => !crashesEtcd34(body) && !crashesEtcd34Applying(path, body))
      let results = await Promise.all(safe.map(compareOne))
      if (await etcdDied(results)) {
        // a body no predicate knows made etcd 3.4 exit (it has no answer to compare with): find it
        // by sending the batch again one body at a time, leave it out, and say which it was
        await restartEtcd()
        results = []
        for (const c of safe) {
          const r = await compareOne(c)
          if (!(await etcdDied([r]))) {
            results.push(r)
            continue
          }
          unknownCrashes.push(`${r.path} ${r.body}\n${etcd.recentLog().slice(-1500)}`)
          await restartEtcd()
        }
      }
      const mismatches = results.filter((r) => r.mine !== r.theirs)
      total += results.length
      refused += results.filter((r) => r.theirs !== "decoded").length
      // the first difference only, readable (fast-check prints the whole batch otherwise)
      const first = mismatches[0]
      if (first !== undefined) {
        // etcd that stopped answering most likely panicked on a body: its last output says which
        const died = first.theirs.startsWith(`${grpc.status.UNAVAILABLE} `)
          ? `\netcd's output:\n${etcd.recentLog().slice(-4000)}`
          : ""
        throw new Error(
          `${mismatches.length} differ; first: ${first.path} ${first.body}: etcd ${first.theirs}; ours ${first.mine}${died}`
        )
      }
    })

  it.effect.prop(
    "every mutated body etcd refuses, ours refuses with the same code and text; every one it decodes, ours decodes",
    [fc.array(testCase, { minLength: 25, maxLength: 25 })],
    ([batch]) =>
      compareBodies(
        batch.map((c) => {
          const [path, type] = METHODS[c.method]!
          return [path, mutate(encoder(type)(c.fields), c.mutations)] as const
        })
      ),
    { fastCheck: { numRuns: 130, endOnFailure: true }, timeout: 120_000 }
  )

  it.effect("hand-written refusals of each kind match etcd's", () =>
    compareBodies(
      [
        ["/etcdserverpb.KV/Range", "0000"], // field 0
        ["/etcdserverpb.KV/Range", "0d01020304"], // wrong wire type for a known field
        ["/etcdserverpb.KV/Range", "0a0561"], // truncated bytes
        ["/etcdserverpb.KV/Range", "0a016134"], // end group outside a group
        ["/etcdserverpb.KV/Range", "0a01613e00"], // wire type 6 on a known field
        ["/etcdserverpb.KV/Range", "0a0161f80100"], // wire type 0 on unknown field 31: skipped
        ["/etcdserverpb.KV/Range", "0a0161ff0100"], // wire type 7 on an unknown field
        ["/etcdserverpb.KV/Range", "0a0161ffffffffffffffffffff01"], // varint too long
        ["/etcdserverpb.KV/Range", "0affffffffffffffffff01"], // negative length
        ["/etcdserverpb.KV/Range", "f8ffffffffffffffff01"], // a tag whose field number is -1 as int32
        ["/etcdserverpb.KV/Range", "88808080800100"], // a field number past int32, truncated to 1
        ["/etcdserverpb.KV/Range", "8a8080808000016108"], // a padded tag for key: decoded by both
        ["/etcdserverpb.KV/Range", "0a0161b5ffdce1a778b1c8f3c3"], // an unknown field with a 6-byte tag, skipped
        ["/etcdserverpb.KV/Range", "0a01612080808000"], // a padded varint value
        ["/etcdserverpb.KV/Txn", "0a020d00"], // nested: wrong wire type in Compare
        ["/etcdserverpb.KV/Txn", "12040a020000"], // nested twice: field 0 in RangeRequest
        ["/etcdserverpb.Maintenance/Status", "0b1c"], // a group skipped (any end-group number)
        ["/etcdserverpb.Maintenance/Status", "0b"], // an unterminated group
        ["/etcdserverpb.Maintenance/Status", "0b1b0c"], // nested groups
        ["/etcdserverpb.Auth/Authenticate", "0a02ffff"], // invalid UTF-8 in a string: gogo decodes it
        ["/etcdserverpb.Auth/UserGet", "0000"], // a method we do not implement refuses it first
        ["/etcdserverpb.Lease/LeaseGrant", "0a00"] // wrong wire type on TTL
      ].map(([p, h]) => [p!, Buffer.from(h!, "hex")] as const)
    )
  )

  it("the fuzz sent thousands of bodies, a good share of them refused", () => {
    // runs after the property (vitest keeps file order): the fuzz must exercise refusals too
    expect(total).toBeGreaterThan(3000)
    expect(refused).toBeGreaterThan(total / 4)
    // a body that crashes etcd 3.4 unforeseen is rare (a predicate above is then due); many would
    // mean etcd dies for another reason, which this test must not paper over
    if (unknownCrashes.length > 0) console.warn(`etcd 3.4 exited on:\n${unknownCrashes.join("\n")}`)
    expect(unknownCrashes.length).toBeLessThanOrEqual(2)
  })
})

describe("checkUnmarshal", () => {
  const rule = makeRules(packageDefinition)

  it("refuses a length that overflows int64 with the index (etcd 3.4 panics there; later gogo refuses)", () => {
    expect(checkUnmarshal(rule("etcdserverpb.RangeRequest"), Buffer.from("0affffffffffffffff7f00", "hex"))).toBe(
      "grpc: error unmarshalling request: proto: negative length found during unmarshaling"
    )
    expect(crashesEtcd34(Buffer.from("0affffffffffffffff7f00", "hex"))).toBe(true)
    // ten bytes: Go drops all but the last byte's lowest bit, so this length is 2^63-1 too (found by CI's fuzz)
    expect(checkUnmarshal(rule("etcdserverpb.RangeRequest"), Buffer.from("0affffffffffffffffff0200", "hex"))).toBe(
      "grpc: error unmarshalling request: proto: negative length found during unmarshaling"
    )
    expect(crashesEtcd34(Buffer.from("0affffffffffffffffff0200", "hex"))).toBe(true)
    expect(crashesEtcd34(Buffer.from("0affffffffffffffffff0300", "hex"))).toBe(false)
  })

  it("knows the ranges etcd 3.4 panics applying: a sort_target none of the five, in a Range or a Txn", () => {
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Range", Buffer.from("0a01613007", "hex"))).toBe(true)
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Range", Buffer.from("0a01613004", "hex"))).toBe(false)
    // refused while unmarshalling: never applied
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Range", Buffer.from("0a0161300718", "hex"))).toBe(false)
    const txn = (target: number) =>
      encoder("TxnRequest")({
        success: [{ request_txn: { failure: [{ request_range: { key: Buffer.from("a"), sort_target: target } }] } }]
      })
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Txn", txn(9))).toBe(true)
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Txn", txn(3))).toBe(false)
    expect(crashesEtcd34Applying("/etcdserverpb.KV/Put", Buffer.from("0a01613007", "hex"))).toBe(false)
  })

  it.prop(
    "a body rewritten canonically decodes (protobufjs) to what the original means to gogo",
    [fc.integer({ min: 0, max: METHODS.length - 1 }), fields, fc.array(mutation, { maxLength: 2 })],
    ([m, f, ms]) => {
      const type = METHODS[m]![1]
      const r = rule(`etcdserverpb.${type}`)
      const body = mutate(encoder(type)(f), ms)
      if (checkUnmarshal(r, body) !== undefined) return
      const decode = (packageDefinition[`etcdserverpb.${type}`] as unknown as { deserialize: (b: Buffer) => unknown })
        .deserialize
      const c = canonical(r, body)
      // canonical is a fixed point, and protobufjs reads it
      expect(checkUnmarshal(r, c)).toBeUndefined()
      expect(canonical(r, c)).toEqual(c)
      expect(() => decode(c)).not.toThrow()
    },
    { fastCheck: { numRuns: 3000 } }
  )

  it.prop(
    "accepts every body the protos' own encoder writes",
    [fc.integer({ min: 0, max: METHODS.length - 1 }), fields],
    ([m, f]) => {
      const type = METHODS[m]![1]
      expect(checkUnmarshal(rule(`etcdserverpb.${type}`), encoder(type)(f))).toBeUndefined()
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it("a 32-bit field's long varint is cut to its Go type, so protobufjs reads what gogo keeps", () => {
    const decode = (type: string, b: Buffer) =>
      (packageDefinition[`etcdserverpb.${type}`] as unknown as { deserialize: (b: Buffer) => any }).deserialize(b)
    // PutRequest{key: "k", prev_kv: <a 6-byte varint of 7 << 35>}: gogo's bool is true
    const put = Buffer.from([0x0a, 0x01, 0x6b, 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x07])
    const putRule = rule("etcdserverpb.PutRequest")
    expect(checkUnmarshal(putRule, put)).toBeUndefined()
    expect(needsCanonical()).toBe(true)
    expect(decode("PutRequest", canonical(putRule, put))).toMatchObject({ key: Buffer.from("k"), prev_kv: true })
    // RangeRequest{sort_order: 2^35 + 1 in 6 bytes}: an enum (int32) keeps the low 32 bits, 1
    const range = Buffer.from([0x28, 0x81, 0x80, 0x80, 0x80, 0x80, 0x01])
    const rangeRule = rule("etcdserverpb.RangeRequest")
    expect(checkUnmarshal(rangeRule, range)).toBeUndefined()
    expect(needsCanonical()).toBe(true)
    expect(decode("RangeRequest", canonical(rangeRule, range)).sort_order).toBe(1)
  })

  it("names fields as protoc-gen-go does", () => {
    expect(["range_end", "ID", "TTL", "peerURLs", "keys_only", "memberID"].map(goFieldName)).toEqual([
      "RangeEnd",
      "ID",
      "TTL",
      "PeerURLs",
      "KeysOnly",
      "MemberID"
    ])
  })
})
