/**
 * src/proto as grpc-js sees it: the services load through proto-loader and grpc.loadPackageDefinition,
 * messages cross a real loopback gRPC connection in the documented shapes, our bytes decode with
 * etcd3's copy of the protos and back, and the hand-written TS types agree with the protos.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import protobufjs from "protobufjs"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as proto from "../../src/proto/index.js"
import { camelCase } from "../../src/proto/load.js"
import { messageKinds } from "./message-kinds.js"
import { describeRoot, loadRoot } from "./schema.js"

const here = dirname(fileURLToPath(import.meta.url))
const ourRoot = loadRoot(proto.protoDir)
const ours = describeRoot(ourRoot)
const etcd3Root = loadRoot(join(dirname(createRequire(import.meta.url).resolve("etcd3/package.json")), "proto"))

const fullName = (name: string): string => (name.includes(".") ? name : `etcdserverpb.${name}`)

/** The kind of each field of a message as the protos say, in the vocabulary of message-kinds.ts. */
const protoKinds = (name: string): Record<string, string> => {
  const type = ourRoot.lookupType(fullName(name))
  const out: Record<string, string> = {}
  for (const f of type.fieldsArray) {
    const base = f.resolvedType instanceof protobufjs.Enum ? "enum"
      : f.resolvedType instanceof protobufjs.Type ? "message"
      : ({ sint64: "int64", sfixed64: "int64", fixed64: "uint64" } as Record<string, string>)[f.type] ?? f.type
    out[f.name] = f.repeated ? `repeated ${base}` : base
  }
  for (const o of type.oneofsArray) out[o.name] = "oneof"
  return out
}

describe("proto-loader and grpc-js", () => {
  it("protoDir is the repo's proto/ directory", () => {
    expect(proto.protoDir).toBe(resolve(here, "../../proto"))
  })

  it("every etcdserverpb service loads as a client constructor and a service definition with etcd's paths", () => {
    for (const name of proto.serviceNames) {
      const methods = ours.services.get(`etcdserverpb.${name}`)!
      const ctor = proto.etcdserverpb[name]
      expect(ctor.serviceName).toBe(name) // grpc-js names it by its last component
      expect(proto.serviceDefinition(name)).toBe(proto.packageDefinition[`etcdserverpb.${name}`])
      expect(Object.keys(ctor.service)).toEqual([...methods.keys()])
      for (const [method, desc] of methods) {
        const def = ctor.service[method]!
        expect(def.path).toBe(`/etcdserverpb.${name}/${method}`)
        expect([def.requestStream, def.responseStream]).toEqual([desc.requestStream, desc.responseStream])
      }
      const client = new ctor("127.0.0.1:1", grpc.credentials.createInsecure())
      for (const method of methods.keys()) expect(typeof client[method], `${name}.${method}`).toBe("function")
      client.close()
    }
    const loaded = grpc.loadPackageDefinition(proto.packageDefinition)
    expect(Object.keys(loaded).sort()).toEqual(["authpb", "etcdserverpb", "mvccpb"])
  })
})

describe("the package definition against proto-loader's", () => {
  // what src/proto/load.ts replaced (issue 12, start-up): proto-loader's loadSync of the same protos
  const reference = protoLoader.loadSync(["rpc.proto"], proto.loaderOptions)
  const entries = (d: protoLoader.PackageDefinition) => Object.keys(d).sort()

  it("has the same entries, kinds and paths", () => {
    expect(entries(proto.packageDefinition)).toEqual(entries(reference))
    for (const name of entries(reference)) {
      const ref = reference[name]!
      const got = proto.packageDefinition[name]!
      if ("format" in ref) {
        expect((got as { format?: string }).format, name).toBe(ref.format)
        continue
      }
      const methods = got as protoLoader.ServiceDefinition
      expect(Object.keys(methods), name).toEqual(Object.keys(ref))
      for (const [method, def] of Object.entries(ref)) {
        const mine = methods[method]!
        expect([mine.path, mine.requestStream, mine.responseStream, mine.originalName], `${name}.${method}`)
          .toEqual([def.path, def.requestStream, def.responseStream, def.originalName])
        expect(mine.options, `${name}.${method}`).toEqual(def.options)
      }
    }
  })

  it("has the same descriptors (type, fileDescriptorProtos) for every message and enum", () => {
    for (const name of entries(reference)) {
      const ref = reference[name]!
      if (!("format" in ref)) continue
      type Described = { readonly type: object; readonly fileDescriptorProtos: Array<Buffer> }
      const got = proto.packageDefinition[name] as unknown as Described
      const want = ref as unknown as Described
      expect(got.type, name).toEqual(want.type)
      const hex = (d: Described) => d.fileDescriptorProtos.map((b) => b.toString("hex"))
      expect(hex(got), name).toEqual(hex(want))
    }
    const range = proto.serviceDefinition("KV")["Range"] as unknown as protoLoader.MethodDefinition<object, object>
    const refRange = (reference["etcdserverpb.KV"] as protoLoader.ServiceDefinition)["Range"]!
    expect(range.requestType.type).toEqual(refRange.requestType.type)
    expect(range.responseType.type).toEqual(refRange.responseType.type)
  })

  it("encodes and decodes as proto-loader's codecs do, refusing an array the same way", () => {
    const kv = proto.serviceDefinition("KV")
    const refKv = reference["etcdserverpb.KV"] as protoLoader.ServiceDefinition
    const request = { key: Buffer.from("k\u00ff"), range_end: Buffer.from([0]), revision: "-5", limit: 7, sort_order: 2, keys_only: true }
    const bytes = kv["Range"]!.requestSerialize(request)
    expect(bytes.toString("hex")).toBe(refKv["Range"]!.requestSerialize(request).toString("hex"))
    expect(kv["Range"]!.requestDeserialize(bytes)).toEqual(refKv["Range"]!.requestDeserialize(bytes))
    const txn = { succeeded: true, responses: [{ response_put: { prev_kv: { key: Buffer.from("a"), lease: "18446744073709551615" } } }] }
    const txnBytes = kv["Txn"]!.responseSerialize(txn)
    expect(txnBytes.toString("hex")).toBe(refKv["Txn"]!.responseSerialize(txn).toString("hex"))
    expect(kv["Txn"]!.responseDeserialize(txnBytes)).toEqual(refKv["Txn"]!.responseDeserialize(txnBytes))
    expect(() => kv["Put"]!.requestSerialize([] as never)).toThrow(
      "Failed to serialize message: expected object with PutRequest structure, got array instead"
    )
  })

  it("names methods in camelCase as lodash does (proto-loader's originalName)", () => {
    expect(["HashKV", "LeaseTimeToLive", "MoveLeader", "Range", "UserGrantRole"].map(camelCase))
      .toEqual(["hashKv", "leaseTimeToLive", "moveLeader", "range", "userGrantRole"])
  })
})

describe("the TS message types", () => {
  it("message-kinds.ts lists exactly the protos' fields, with matching kinds", () => {
    for (const [name, kinds] of Object.entries(messageKinds)) expect(kinds, name).toEqual(protoKinds(name))
  })

  it("message-kinds.ts type-checks against src/proto/messages.ts, and a wrong entry does not", () => {
    const file = join(here, "message-kinds.ts")
    const variant = join(here, "message-kinds.variant.ts") // in memory only
    const source = ts.sys.readFile(file)!
    const altered = source.replace(`raftTerm: "uint64",`, `raftTerm: "int64",`).replace(`LeaseStatus: { ID: "int64" },`, `LeaseStatus: {},`)
    expect(altered).not.toBe(source)
    const config = ts.getParsedCommandLineOfConfigFile(join(here, "../../tsconfig.json"), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
      }
    })!
    const host = ts.createCompilerHost(config.options)
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (name, lang, ...rest) =>
      resolve(name) === variant ? ts.createSourceFile(name, altered, lang) : getSourceFile(name, lang, ...rest)
    const hostFileExists = host.fileExists.bind(host)
    host.fileExists = (name) => resolve(name) === variant || hostFileExists(name)
    const program = ts.createProgram([file, variant], { ...config.options, noEmit: true }, host)
    const errors = (f: string) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(f)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, " "))
    expect(errors(file)).toEqual([])
    const variantErrors = errors(variant)
    expect(variantErrors).toHaveLength(2)
    expect(variantErrors.join("\n")).toMatch(/"int64"' is not assignable to type '"uint64"/)
    expect(variantErrors.join("\n")).toMatch(/Property 'ID' is missing/)
  }, 30_000)

  it("every typed message decodes to the Decoded representation (int64 as string, bytes as Buffer, oneofs named)", () => {
    const samples: Record<string, (field: string) => unknown> = {
      int64: () => "-9223372036854775808",
      uint64: () => "18446744073709551615",
      bytes: () => Buffer.from([0, 0xff, 0x80]),
      string: (f) => `s-${f}`,
      bool: () => true,
      enum: () => 1,
      message: () => ({})
    }
    for (const [name, typedKinds] of Object.entries(messageKinds)) {
      const kinds: Record<string, string> = typedKinds
      const type = ourRoot.lookupType(fullName(name))
      const input: Record<string, unknown> = {}
      const setMember = new Map<string, string>() // oneof → the one member we set
      for (const [field, kind] of Object.entries(kinds)) {
        if (kind === "oneof") continue
        const group = type.fields[field]!.partOf?.name
        if (group !== undefined) {
          if (setMember.has(group)) continue
          setMember.set(group, field)
        }
        const base = kind.replace("repeated ", "")
        input[field] = kind.startsWith("repeated ") ? [samples[base]!(field)] : samples[base]!(field)
      }
      // exactly what proto-loader's serializer and deserializer do with our options
      const decoded = type.toObject(type.decode(type.encode(type.fromObject(input)).finish()), proto.loaderOptions)
      for (const [field, value] of Object.entries(input)) {
        // an empty sub-message comes back filled with defaults; its own fields are checked on its own
        if (!kinds[field]!.endsWith("message")) expect(decoded[field], `${name}.${field}`).toEqual(value)
      }
      for (const [group, member] of setMember) expect(decoded[group], `${name}.${group}`).toBe(member)
      for (const [field, kind] of Object.entries(kinds)) {
        const v = decoded[field]
        if (kind === "oneof") continue
        if (!(field in input)) { // an unset member of a oneof is absent
          expect(type.fields[field]!.partOf, `${name}.${field}`).not.toBeNull()
          expect(v, `${name}.${field}`).toBeUndefined()
          continue
        }
        if (kind.startsWith("repeated ")) expect(Array.isArray(v), `${name}.${field}`).toBe(true)
        else if (kind === "int64" || kind === "uint64" || kind === "string") expect(typeof v, `${name}.${field}`).toBe("string")
        else if (kind === "bytes") expect(Buffer.isBuffer(v), `${name}.${field}`).toBe(true)
        else if (kind === "bool") expect(typeof v).toBe("boolean")
        else if (kind === "enum") expect(typeof v).toBe("number")
        else expect(typeof v === "object" && v !== null, `${name}.${field}`).toBe(true)
      }
      // an empty message decodes with every scalar and repeated field at its default and sub-messages null
      const empty = type.toObject(type.decode(new Uint8Array(0)), proto.loaderOptions)
      for (const f of type.fieldsArray) {
        if (f.partOf !== null) expect(empty[f.name], `${name}.${f.name}`).toBeUndefined()
        else if (f.repeated) expect(empty[f.name]).toEqual([])
        else if (f.resolvedType instanceof protobufjs.Type) expect(empty[f.name], `${name}.${f.name}`).toBeNull()
        else expect(empty[f.name], `${name}.${f.name}`).not.toBeUndefined()
      }
    }
  })

  it("int64 fields accept string, number and bigint on encode and keep all 64 bits", () => {
    const grant = proto.serviceDefinition("Lease")["LeaseGrant"]!
    const roundTrip = (ID: string | number | bigint) =>
      (grant.requestDeserialize(grant.requestSerialize({ ID } satisfies proto.LeaseGrantRequestInit)) as proto.LeaseGrantRequest).ID
    expect(roundTrip(9223372036854775807n)).toBe("9223372036854775807")
    expect(roundTrip("9007199254740993")).toBe("9007199254740993")
    expect(roundTrip(-1)).toBe("-1")
    expect(roundTrip(42)).toBe("42")
  })
})

describe("wire compatibility with etcd3's copy of the protos", () => {
  it("a Txn request we encode decodes identically with etcd3's types", () => {
    const txn = proto.serviceDefinition("KV")["Txn"]!
    const req: proto.TxnRequestInit = {
      compare: [{ result: proto.CompareResult.NOT_EQUAL, target: proto.CompareTarget.MOD, key: Buffer.from("k"), mod_revision: 12 }],
      success: [
        { request_put: { key: Buffer.from("k"), value: Buffer.from([1, 2]), lease: 7205759403792793601n, prev_kv: true } },
        { request_delete_range: { key: Buffer.from("a"), range_end: Buffer.from([0]) } }
      ],
      failure: [{ request_range: { key: Buffer.from("k"), revision: 3, sort_order: proto.SortOrder.DESCEND } }]
    }
    const bytes = txn.requestSerialize(req)
    const TxnRequest = etcd3Root.lookupType("etcdserverpb.TxnRequest")
    const theirs = TxnRequest.toObject(TxnRequest.decode(bytes), { longs: String, enums: String, oneofs: true })
    expect(theirs).toEqual({
      compare: [{ result: "NotEqual", target: "Mod", key: Buffer.from("k"), mod_revision: "12", target_union: "mod_revision" }],
      success: [
        { request: "request_put", request_put: { key: Buffer.from("k"), value: Buffer.from([1, 2]), lease: "7205759403792793601", prev_kv: true } },
        { request: "request_delete_range", request_delete_range: { key: Buffer.from("a"), range_end: Buffer.from([0]) } }
      ],
      failure: [{ request: "request_range", request_range: { key: Buffer.from("k"), revision: "3", sort_order: "Descend" } }]
    })
    // and back: etcd3's re-encoding decodes to the same request on our side
    const again = txn.requestDeserialize(Buffer.from(TxnRequest.encode(TxnRequest.decode(bytes)).finish())) as proto.TxnRequest
    expect(again).toEqual(txn.requestDeserialize(bytes))
  })

  it("a WatchResponse etcd3 encodes decodes on our side", () => {
    const WatchResponse = etcd3Root.lookupType("etcdserverpb.WatchResponse")
    const bytes = WatchResponse.encode(WatchResponse.fromObject({
      header: { revision: "9007199254740993", cluster_id: "18446744073709551615" },
      watch_id: 3,
      compact_revision: 2,
      events: [{ type: 1, kv: { key: Buffer.from("k"), mod_revision: 5 }, prev_kv: { key: Buffer.from("k"), value: Buffer.from("v"), version: 2 } }]
    })).finish()
    const watch = proto.serviceDefinition("Watch")["Watch"]!
    const got = watch.responseDeserialize(Buffer.from(bytes)) as proto.WatchResponse
    expect(got.header?.revision).toBe("9007199254740993")
    expect(got.header?.cluster_id).toBe("18446744073709551615")
    expect(got.watch_id).toBe("3")
    expect(got.compact_revision).toBe("2")
    expect(got.events).toHaveLength(1)
    expect(got.events[0]!.type).toBe(proto.EventType.DELETE)
    expect(got.events[0]!.kv?.mod_revision).toBe("5")
    expect(got.events[0]!.prev_kv?.value).toEqual(Buffer.from("v"))
  })
})

describe("over a real loopback gRPC connection", () => {
  const server = new grpc.Server()
  let address = ""
  let seenTxn: proto.TxnRequest | undefined

  const kv: proto.KVServer = {
    Range: (call, cb) =>
      cb(null, {
        header: { revision: call.request.revision, cluster_id: "18446744073709551615" },
        kvs: [{ key: call.request.key, value: Buffer.from([0xff]), lease: 2n ** 62n, mod_revision: 4, version: 1 }],
        count: 1
      }),
    Put: (_call, cb) => cb(null, {}),
    DeleteRange: (_call, cb) => cb(null, { deleted: 0 }),
    Txn: (call, cb) => {
      seenTxn = call.request
      cb(null, { succeeded: true, responses: [{ response_put: { header: { revision: 9 } } }] })
    },
    Compact: (_call, cb) => cb(null, {})
  }
  const watch: proto.WatchServer = {
    Watch: (call) => {
      call.on("data", (req: proto.WatchRequest) => {
        if (req.request_union === "create_request") {
          call.write({ watch_id: req.create_request.watch_id, created: true, header: { revision: 1 } })
          call.write({
            watch_id: req.create_request.watch_id,
            events: [{ type: proto.EventType.PUT, kv: { key: req.create_request.key, value: Buffer.from("v"), mod_revision: 2 } }]
          })
        } else if (req.request_union === "cancel_request") {
          call.write({ watch_id: req.cancel_request.watch_id, canceled: true })
          call.end()
        }
      })
    }
  }

  beforeAll(async () => {
    server.addService(proto.etcdserverpb.KV.service, kv)
    server.addService(proto.etcdserverpb.Watch.service, watch)
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))))
    address = `127.0.0.1:${port}`
  })
  afterAll(() => {
    server.forceShutdown()
  })

  it("unary KV calls carry binary keys, 64-bit ids and oneofs both ways", async () => {
    const client = new proto.etcdserverpb.KV(address, grpc.credentials.createInsecure())
    try {
      const call = <Req, Res>(method: string, req: Req) =>
        new Promise<Res>((res, rej) => client[method]!(req, (e: Error | null, r: Res) => (e ? rej(e) : res(r))))
      const range = await call<proto.RangeRequestInit, proto.RangeResponse>("Range", { key: Buffer.from([0, 1, 0xfe]), revision: 5 })
      expect(range.header?.revision).toBe("5")
      expect(range.header?.cluster_id).toBe("18446744073709551615")
      expect(range.kvs[0]!.key).toEqual(Buffer.from([0, 1, 0xfe]))
      expect(Buffer.isBuffer(range.kvs[0]!.value)).toBe(true)
      expect(range.kvs[0]!.lease).toBe(String(2n ** 62n))
      expect(range.count).toBe("1")
      expect(range.more).toBe(false)

      const txn = await call<proto.TxnRequestInit, proto.TxnResponse>("Txn", {
        compare: [{ key: Buffer.from("k"), target: proto.CompareTarget.VALUE, value: Buffer.from("x") }],
        success: [{ request_put: { key: Buffer.from("k"), lease: "9223372036854775807" } }]
      })
      expect(txn.succeeded).toBe(true)
      const op = txn.responses[0]!
      expect(op.response).toBe("response_put")
      if (op.response === "response_put") expect(op.response_put.header?.revision).toBe("9")
      const c = seenTxn!.compare[0]!
      expect(c.target_union).toBe("value")
      if (c.target_union === "value") expect(c.value).toEqual(Buffer.from("x"))
      const s = seenTxn!.success[0]!
      expect(s.request).toBe("request_put")
      if (s.request === "request_put") expect(s.request_put.lease).toBe("9223372036854775807")
    } finally {
      client.close()
    }
  })

  it("the Watch stream is bidirectional and decodes oneof requests and events", async () => {
    const client = new proto.etcdserverpb.Watch(address, grpc.credentials.createInsecure())
    try {
      const stream = client["Watch"]!() as grpc.ClientDuplexStream<proto.WatchRequestInit, proto.WatchResponse>
      const got: Array<proto.WatchResponse> = []
      const done = new Promise<void>((res, rej) => {
        stream.on("data", (r: proto.WatchResponse) => {
          got.push(r)
          if (got.length === 2) stream.write({ cancel_request: { watch_id: 7 } })
        })
        stream.on("end", () => res())
        stream.on("error", rej)
      })
      stream.write({ create_request: { key: Buffer.from("w"), watch_id: 7, filters: [proto.FilterType.NODELETE] } })
      await done
      stream.end()
      expect(got.map((r) => [r.watch_id, r.created, r.canceled, r.events.length])).toEqual([
        ["7", true, false, 0],
        ["7", false, false, 1],
        ["7", false, true, 0]
      ])
      const ev = got[1]!.events[0]!
      expect(ev.type).toBe(proto.EventType.PUT)
      expect(ev.kv?.key).toEqual(Buffer.from("w"))
      expect(ev.kv?.mod_revision).toBe("2")
      expect(ev.prev_kv).toBeNull()
    } finally {
      client.close()
    }
  })
})
