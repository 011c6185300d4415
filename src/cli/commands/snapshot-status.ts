/**
 * `snapshot status <filename>`, as etcdutl 3.6's: hash, revision, total keys, total size and
 * storage version, in etcdutl's simple, json, table and fields forms (protobuf: refused as
 * etcdutl refuses it). Reads etcd's bbolt snapshots (a trailing SHA-256 is past the database's
 * pages, as bbolt ignores it) and our old format.
 */
import * as fs from "node:fs"
import { Effect } from "effect"
import type { ParsedRun } from "../flags/parse.js"
import { snapshotTable } from "../snapshot/status-table.js"
import { usage } from "./global.js"
import { humanBytes, write } from "./output.js"
import { EXIT_BAD_FEATURE, UsageError, valuesOf } from "./usage.js"
import type { snapshotStatusFlags } from "../flags/snapshot-flags.js"
import { boltStatus, oursStatus, type SnapshotStatus } from "../../server/snapshot/snapshot-status.js"
import { hasChecksum } from "../../server/snapshot/snapshot-file.js"

const OURS_MAGIC = Buffer.from("etcd-effect-snapshot/1\n", "latin1")
const FORMATS = ["simple", "json", "table", "fields", "protobuf"]

const row = (s: SnapshotStatus): Array<string> => [
  s.hash.toString(16),
  String(s.revision),
  String(s.totalKey),
  humanBytes(BigInt(s.totalSize)),
  s.version
]

const print = (format: string, s: SnapshotStatus): string => {
  switch (format) {
    case "json":
      return `${JSON.stringify({ hash: s.hash, revision: s.revision, totalKey: s.totalKey, totalSize: s.totalSize, version: s.version })}\n`
    case "table":
      return snapshotTable(["hash", "revision", "total keys", "total size", "version"], [row(s)])
    case "fields":
      return `"Hash" : ${s.hash}\n"Revision" : ${s.revision}\n"Keys" : ${s.totalKey}\n"Size" : ${s.totalSize}\n"Version" : ${s.version}\n`
    default:
      return `${row(s).join(", ")}\n`
  }
}

const failWith = (message: string, code = 1): Effect.Effect<void> => usage(new UsageError(message, code))

export const runSnapshotStatus = (p: ParsedRun): Effect.Effect<void> => {
  if (p.args.length !== 1) return usage(new UsageError("snapshot status requires exactly one argument"))
  const file = p.args[0]!
  return Effect.suspend(() => {
    let st: fs.Stats
    try {
      st = fs.statSync(file)
    } catch (e) {
      return failWith(
        `stat ${file}: ${(e as { code?: string }).code === "ENOENT" ? "no such file or directory" : String(e)}`
      )
    }
    const format = valuesOf<typeof snapshotStatusFlags>(p)["write-out"]
    if (!FORMATS.includes(format)) return failWith("unsupported output format", EXIT_BAD_FEATURE)
    let bytes: Buffer
    try {
      bytes = st.isDirectory() ? Buffer.alloc(0) : fs.readFileSync(file)
    } catch (e) {
      return failWith(String((e as Error).message))
    }
    const ours = bytes.subarray(0, OURS_MAGIC.length).equals(OURS_MAGIC)
    const status = ours ? oursStatus(bytes) : boltStatus(hasChecksum(bytes.length) ? bytes.subarray(0, -32) : bytes)
    if (typeof status === "string") return failWith(status)
    if (format === "protobuf") return failWith("protobuf not supported as output format", EXIT_BAD_FEATURE)
    return Effect.sync(() => write(print(format, status)))
  })
}
