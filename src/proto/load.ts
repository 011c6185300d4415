/**
 * Loads the etcd v3 protos (../../proto/*.proto) with protobufjs at run time, into the same
 * PackageDefinition @grpc/proto-loader builds (paths, codecs, message and enum entries), except that
 * each entry's descriptor (`type`, `fileDescriptorProtos`: grpc reflection's data) is built on first
 * read instead of for all ~150 types at start-up: a client command never reads one, and building
 * them all was most of the load time (issue 12, start-up). test/proto/loader.test.ts checks the
 * result against proto-loader's, entry for entry.
 * See docs/decisions.md ("etcd protos: proto-loader at run time") for why not generated code.
 */
import * as grpc from "@grpc/grpc-js"
import type * as protoLoader from "@grpc/proto-loader"
import protobufjs from "protobufjs"
// protobufjs' descriptor extension (toDescriptor, google/protobuf/descriptor.proto): proto-loader
// loads it too; building descriptors with it is what is deferred below
import descriptorExt from "protobufjs/ext/descriptor/index.js"
import { existsSync } from "node:fs"
import { parseProtos, readCompiled } from "./compile.js"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The repo's proto/ directory. Found by walking up from this module so the same code works from
 * src/proto (vitest, tsx) and dist/src/proto (compiled), and from an installed package ("files"
 * ships proto/ next to dist/).
 */
export const protoDir: string = findProtoDir(dirname(fileURLToPath(import.meta.url)))

function findProtoDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "proto")
    if (existsSync(join(candidate, "rpc.proto"))) return candidate
    if (dirname(dir) === dir) throw new Error(`etcd-effect: proto/rpc.proto not found above ${from}`)
  }
}

/**
 * The codec options every part of the project shares; messages.ts types follow them exactly.
 * longs: String — lease and member ids use all 64 bits; revisions become numbers at the edges.
 * enums: Number — matches the numeric consts in src/mvcc. bytes: Buffer — keys are binary.
 * defaults — decoded messages carry every scalar, so handlers need no `?? 0`.
 * oneofs — decoded oneofs name their set member (e.g. `request: "request_put"`).
 */
export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: Number,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
  includeDirs: [protoDir]
}

/**
 * etcdserverpb, mvccpb and authpb as protobufjs reflection, resolved (the codecs below use it):
 * from the build's compiled JSON when it matches the .proto files (compile.ts), else parsed.
 */
export const protoRoot: protobufjs.Root = readCompiled(protoDir) ?? parseProtos(protoDir)

// proto-loader's codecs, with its exact semantics (an array is refused, not coerced)
const serializer = (type: protobufjs.Type) => (arg: object): Buffer => {
  if (Array.isArray(arg)) {
    throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`)
  }
  return type.encode(type.fromObject(arg)).finish() as Buffer
}
const deserializer = (type: protobufjs.Type) => (buf: Buffer): object => type.toObject(type.decode(buf), loaderOptions)

/** proto-loader's descriptor options: reflection data as JSON-ish objects (enums by name). */
const descriptorOptions = { longs: String, enums: String, bytes: String, defaults: true, oneofs: true, json: true }

let fileDescriptors: Array<Buffer> | undefined
const fileDescriptorProtos = (): Array<Buffer> =>
  (fileDescriptors ??= (protoRoot as unknown as { toDescriptor(syntax: string): { file: Array<object> } })
    .toDescriptor("proto3")
    .file.map((f) => Buffer.from(descriptorExt.FileDescriptorProto.encode(f).finish())))

/** `type` and `fileDescriptorProtos` as getters that build on first read. */
const withDescriptor = <A extends object>(entry: A, of: protobufjs.Type | protobufjs.Enum): A => {
  let type: object | undefined
  Object.defineProperty(entry, "type", {
    enumerable: true,
    get() {
      if (type === undefined) {
        const d = (of as unknown as { toDescriptor(syntax: string): { $type: protobufjs.Type } }).toDescriptor("proto3")
        type = d.$type.toObject(d as unknown as protobufjs.Message, descriptorOptions)
      }
      return type
    }
  })
  Object.defineProperty(entry, "fileDescriptorProtos", { enumerable: true, get: fileDescriptorProtos })
  return entry
}

const messageDefinition = (type: protobufjs.Type): protoLoader.MessageTypeDefinition<object, object> =>
  withDescriptor(
    { format: "Protocol Buffer 3 DescriptorProto", serialize: serializer(type), deserialize: deserializer(type) },
    type
  ) as unknown as protoLoader.MessageTypeDefinition<object, object>

/** lodash.camelcase of a method name, as proto-loader's `originalName` ("HashKV" → "hashKv"). */
export const camelCase = (name: string): string =>
  (name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g) ?? [])
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join("")

const serviceDefinitionOf = (service: protobufjs.Service, fullName: string): protoLoader.ServiceDefinition => {
  const def: Record<string, protoLoader.MethodDefinition<object, object>> = {}
  for (const method of service.methodsArray) {
    const req = method.resolvedRequestType!
    const res = method.resolvedResponseType!
    def[method.name] = {
      path: `/${fullName}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: camelCase(method.name),
      requestType: messageDefinition(req),
      responseType: messageDefinition(res),
      // no method options in etcd's protos: proto-loader's defaults
      options: { deprecated: false, idempotency_level: "IDEMPOTENCY_UNKNOWN", uninterpreted_option: [] }
    } as unknown as protoLoader.MethodDefinition<object, object>
  }
  return def
}

/** Every message, enum and service of etcdserverpb, mvccpb and authpb, keyed by full name. */
export const packageDefinition: protoLoader.PackageDefinition = (() => {
  const def: protoLoader.PackageDefinition = {}
  const visit = (ns: protobufjs.NamespaceBase, prefix: string): void => {
    for (const obj of ns.nestedArray) {
      const name = prefix === "" ? obj.name : `${prefix}.${obj.name}`
      if (obj instanceof protobufjs.Service) def[name] = serviceDefinitionOf(obj, name)
      else if (obj instanceof protobufjs.Type) def[name] = messageDefinition(obj)
      else if (obj instanceof protobufjs.Enum) {
        def[name] = withDescriptor({ format: "Protocol Buffer 3 EnumDescriptorProto" }, obj) as unknown as protoLoader.EnumTypeDefinition
      } else if (obj instanceof protobufjs.Namespace) visit(obj, name)
    }
  }
  visit(protoRoot, "")
  return def
})()

/** The etcdserverpb services the protos define, by name. */
export const serviceNames = ["KV", "Watch", "Lease", "Cluster", "Maintenance", "Auth"] as const
/** One of `serviceNames`. */
export type ServiceName = (typeof serviceNames)[number]

/** A service's method table, for `server.addService(serviceDefinition("KV"), impl)`. */
export const serviceDefinition = (name: ServiceName): grpc.ServiceDefinition => {
  const def = packageDefinition[`etcdserverpb.${name}`]
  if (def === undefined || "format" in def) throw new Error(`etcd-effect: etcdserverpb.${name} is not a service`)
  return def as grpc.ServiceDefinition
}

/**
 * The etcdserverpb services as grpc-js client constructors: `new etcdserverpb.KV(addr, creds)`;
 * each carries its method table as `.service` for `server.addService(etcdserverpb.KV.service, impl)`.
 */
export const etcdserverpb: { readonly [N in ServiceName]: grpc.ServiceClientConstructor } = (() => {
  const pkg = grpc.loadPackageDefinition(packageDefinition)["etcdserverpb"] as grpc.GrpcObject
  const out = {} as Record<ServiceName, grpc.ServiceClientConstructor>
  for (const name of serviceNames) {
    const ctor = pkg[name]
    if (typeof ctor !== "function") throw new Error(`etcd-effect: etcdserverpb.${name} did not load as a service`)
    out[name] = ctor
  }
  return out
})()

/** A client constructor for one service (same as `etcdserverpb[name]`). */
export const clientConstructor = (name: ServiceName): grpc.ServiceClientConstructor => etcdserverpb[name]
