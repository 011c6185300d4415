/**
 * etcd's protos compiled at build time: `npm run build` parses proto/*.proto once and writes the
 * resolved protobufjs reflection as JSON beside them (proto/etcd-protos.json, with a hash of the
 * sources it came from); load.ts builds its Root from that JSON with `Root.fromJSON`, skipping
 * protobufjs' .proto tokenizer and parser — about half of the proto step of a start-up
 * (docs/benchmarks.md, "Start-up and idle footprint"). A JSON that does not match the .proto files
 * next to it (edited since the build) or is missing is ignored: load.ts parses them as before.
 */
import protobufjs from "protobufjs"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const COMPILED_FILE = "etcd-protos.json"

/** sha256 over every .proto file of `dir` (name and text, in name order) */
export const protoSourcesHash = (dir: string): string => {
  const hash = createHash("sha256")
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".proto"))
    .sort()) {
    hash.update(`${name}\0`).update(readFileSync(join(dir, name))).update("\0")
  }
  return hash.digest("hex")
}

/** rpc.proto and its imports parsed by protobufjs (field names as written: keepCase), resolved. */
export const parseProtos = (dir: string): protobufjs.Root => {
  const root = new protobufjs.Root()
  // every import of rpc.proto (kv.proto, auth.proto) sits beside it
  root.resolvePath = (_origin, target) => join(dir, target)
  root.loadSync("rpc.proto", { keepCase: true })
  root.resolveAll()
  return root
}

/** The build-time JSON of `dir`'s protos, when present and made from the .proto files there now. */
export const readCompiled = (dir: string): protobufjs.Root | undefined => {
  let compiled: { sources?: unknown; root?: protobufjs.INamespace }
  try {
    compiled = JSON.parse(readFileSync(join(dir, COMPILED_FILE), "utf8")) as typeof compiled
  } catch {
    return undefined
  }
  if (compiled.sources !== protoSourcesHash(dir) || compiled.root === undefined) return undefined
  const root = protobufjs.Root.fromJSON(compiled.root)
  root.resolveAll()
  return root
}

/** Writes `dir`'s compiled JSON (the build's step after tsc). */
export const writeCompiled = (dir: string): void => {
  const json = JSON.stringify({ sources: protoSourcesHash(dir), root: parseProtos(dir).toJSON() })
  const tmp = join(dir, `${COMPILED_FILE}.${process.pid}.tmp`)
  writeFileSync(tmp, json)
  renameSync(tmp, join(dir, COMPILED_FILE))
}
