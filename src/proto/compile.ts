/**
 * Protos compiled at build time: `npm run build` parses each set of .proto files once and writes
 * the resolved protobufjs reflection as JSON beside them, with a hash of the sources it came from —
 * etcd's (proto/*.proto → proto/etcd-protos.json) and Kubernetes' (proto/k8s.io/… →
 * proto/k8s-protos.json). Loaders build their Root from that JSON with `Root.fromJSON`, skipping
 * protobufjs' .proto tokenizer and parser — about half of the proto step of a start-up
 * (docs/benchmarks.md, "Start-up and idle footprint"). A JSON that does not match the .proto files
 * next to it (edited since the build) or is missing is ignored: the loader parses them as before.
 */
import protobufjs from "protobufjs"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** One set of .proto files: the files it hashes, the entry files it loads, the JSON it compiles to. */
export interface ProtoSet {
  readonly compiledFile: string
  /** the .proto files of the set, relative to the proto directory (the hash covers these) */
  readonly sources: (dir: string) => ReadonlyArray<string>
  /** the files loaded (their imports are resolved relative to the proto directory) */
  readonly entries: ReadonlyArray<string>
  /** types resolved on first use rather than all at load (most of a large set is never used) */
  readonly lazy?: true
}

/** etcd's etcdserverpb, mvccpb and authpb: rpc.proto and its imports, beside it */
export const etcdProtos: ProtoSet = {
  compiledFile: "etcd-protos.json",
  sources: (dir) =>
    readdirSync(dir)
      .filter((n) => n.endsWith(".proto"))
      .sort(),
  entries: ["rpc.proto"]
}

/**
 * k8s.io/api's and k8s.io/apimachinery's generated.proto (vendored, docs/decisions.md "Kubernetes
 * protos"): the built-in kinds served in protobuf and apimachinery's meta, runtime, resource and
 * intstr packages they import.
 */
export const k8sProtos: ProtoSet = {
  compiledFile: "k8s-protos.json",
  sources: () => [
    "k8s.io/api/authentication/v1/generated.proto",
    "k8s.io/api/authorization/v1/generated.proto",
    "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/events/v1/generated.proto",
    "k8s.io/apimachinery/pkg/api/resource/generated.proto",
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/schema/generated.proto",
    "k8s.io/apimachinery/pkg/util/intstr/generated.proto"
  ],
  entries: [
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io/api/events/v1/generated.proto",
    "k8s.io/api/authentication/v1/generated.proto",
    "k8s.io/api/authorization/v1/generated.proto"
  ],
  lazy: true
}

/**
 * gnostic's OpenAPI v2 model (vendored, docs/decisions.md "Built-in kinds' OpenAPI"): the protobuf
 * form of /openapi/v2 that client-go asks for (kubectl before 1.27 explains and validates with it).
 */
export const gnosticProtos: ProtoSet = {
  compiledFile: "gnostic-protos.json",
  sources: () => ["github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto"],
  entries: ["github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto"]
}

export const COMPILED_FILE = etcdProtos.compiledFile

/** sha256 over the set's .proto files of `dir` (name and text, in order) */
export const protoSourcesHash = (dir: string, set: ProtoSet = etcdProtos): string => {
  const hash = createHash("sha256")
  for (const name of set.sources(dir)) {
    hash.update(`${name}\0`).update(readFileSync(join(dir, name))).update("\0")
  }
  return hash.digest("hex")
}

/** The set's entry files and their imports parsed by protobufjs (field names as written: keepCase), resolved. */
export const parseProtos = (dir: string, set: ProtoSet = etcdProtos): protobufjs.Root => {
  const root = new protobufjs.Root()
  // imports name paths relative to the proto directory
  root.resolvePath = (_origin, target) => join(dir, target)
  for (const entry of set.entries) root.loadSync(entry, { keepCase: true })
  root.resolveAll()
  return root
}

/** The build-time JSON of `dir`'s protos, when present and made from the .proto files there now. */
export const readCompiled = (dir: string, set: ProtoSet = etcdProtos): protobufjs.Root | undefined => {
  let compiled: { sources?: unknown; root?: protobufjs.INamespace }
  try {
    compiled = JSON.parse(readFileSync(join(dir, set.compiledFile), "utf8")) as typeof compiled
  } catch {
    return undefined
  }
  if (compiled.sources !== protoSourcesHash(dir, set) || compiled.root === undefined) return undefined
  const root = protobufjs.Root.fromJSON(compiled.root)
  if (set.lazy !== true) root.resolveAll()
  return root
}

const writeSet = (dir: string, set: ProtoSet): void => {
  const json = JSON.stringify({ sources: protoSourcesHash(dir, set), root: parseProtos(dir, set).toJSON() })
  const tmp = join(dir, `${set.compiledFile}.${process.pid}.tmp`)
  writeFileSync(tmp, json)
  renameSync(tmp, join(dir, set.compiledFile))
}

/** Writes `dir`'s compiled JSON of each set present there (the build's step after tsc). */
export const writeCompiled = (
  dir: string,
  sets: ReadonlyArray<ProtoSet> = [etcdProtos, k8sProtos, gnosticProtos]
): void => {
  for (const set of sets) {
    try {
      set.sources(dir).forEach((f) => readFileSync(join(dir, f)))
    } catch {
      continue // not in this directory (a test copies etcd's protos alone)
    }
    writeSet(dir, set)
  }
}
