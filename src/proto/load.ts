/**
 * Loads the etcd v3 protos (../../proto/*.proto) with @grpc/proto-loader at run time.
 * See docs/decisions.md ("etcd protos: proto-loader at run time") for why not generated code.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { existsSync } from "node:fs"
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

/** Every message and service of etcdserverpb, mvccpb and authpb, keyed by full name. */
export const packageDefinition: protoLoader.PackageDefinition = protoLoader.loadSync(["rpc.proto"], loaderOptions)

export const serviceNames = ["KV", "Watch", "Lease", "Cluster", "Maintenance", "Auth"] as const
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
