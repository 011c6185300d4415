/**
 * A snapshot file's entries in our buckets, whatever wrote it: etcd 3.4 to 3.6 (bbolt, its
 * buckets converted: from-etcd-buckets.ts) or etcd-effect before it sent etcd's format (our old
 * format: snapshot-format.ts). Refusals in etcdutl's words (Go's for the file's own errors).
 */
import * as fs from "node:fs"
import { readBolt } from "../../backend/bbolt/index.js"
import { decodeSnapshot } from "../../backend/snapshot-format.js"
import type { SnapshotEntry } from "../../server/snapshot/etcd-buckets.js"
import { fromEtcdBuckets } from "../../server/snapshot/from-etcd-buckets.js"
import { readSnapshotFile } from "../../server/snapshot/snapshot-file.js"

export interface SnapshotEntries {
  readonly entries: ReadonlyArray<SnapshotEntry>
  readonly unknown: ReadonlyArray<string>
}

const ERRNO: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EISDIR: "is a directory"
}

export const readSnapshotEntries = (file: string, skipHashCheck: boolean): SnapshotEntries | string => {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(file)
  } catch (e) {
    const code = (e as { code?: string }).code ?? ""
    // os.Open succeeds on a directory; its read fails
    if (code === "EISDIR") return `read ${file}: is a directory`
    return `open ${file}: ${ERRNO[code] ?? (e as Error).message}`
  }
  // Seek(-32, SeekEnd) on a shorter file
  if (bytes.length < 32) return `seek ${file}: invalid argument`
  const db = readSnapshotFile(bytes, skipHashCheck)
  if (typeof db === "string") return db
  try {
    if (db.format === "ours") return { entries: decodeSnapshot(db.bytes), unknown: [] }
    return fromEtcdBuckets(readBolt(db.bytes).buckets)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}
