/**
 * The protos compiled at build time (src/proto/compile.ts): the Root read from the JSON is the
 * parsed one — same reflection, same descriptors (grpc reflection's fileDescriptorProtos) — and a
 * JSON that no longer matches its .proto files, or is missing, is not used.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type protobufjs from "protobufjs"
import { parseProtos, readCompiled, writeCompiled } from "../../src/proto/compile.js"
import { protoDir } from "../../src/proto/load.js"

const descriptors = (root: protobufjs.Root) =>
  JSON.stringify((root as unknown as { toDescriptor(s: string): { toJSON(): unknown } }).toDescriptor("proto3").toJSON())

describe("compiled protos", () => {
  it("read back as the parsed protos, and only while they match the .proto files", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-protos-"))
    try {
      for (const f of fs.readdirSync(protoDir).filter((n) => n.endsWith(".proto"))) {
        fs.copyFileSync(path.join(protoDir, f), path.join(dir, f))
      }
      expect(readCompiled(dir)).toBeUndefined() // not compiled yet
      writeCompiled(dir)
      const compiled = readCompiled(dir)!
      const parsed = parseProtos(dir)
      expect(compiled.toJSON()).toEqual(parsed.toJSON())
      expect(descriptors(compiled)).toBe(descriptors(parsed))
      const Put = compiled.lookupType("etcdserverpb.PutRequest")
      const bytes = Put.encode(Put.fromObject({ key: Buffer.from("k"), value: Buffer.from("v"), lease: "7" })).finish()
      expect(Buffer.from(bytes).toString("hex")).toBe(
        Buffer.from(parsed.lookupType("etcdserverpb.PutRequest").encode(Put.decode(bytes)).finish()).toString("hex")
      )
      fs.appendFileSync(path.join(dir, "kv.proto"), "\n// edited after the build\n")
      expect(readCompiled(dir)).toBeUndefined()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
