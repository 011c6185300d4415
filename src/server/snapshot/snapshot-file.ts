/**
 * A snapshot file as etcdutl's `snapshot restore` reads it (v3_snapshot.go copyAndVerifyDB): a
 * size 32 past a multiple of 512 means a SHA-256 follows the database; it must match unless
 * --skip-hash-check, and a file without one is refused unless --skip-hash-check (a db copied from
 * a data dir). The refusals are etcdutl's words. Then the database is told apart: our own old
 * format (snapshot-format.ts, which carries its hash the same way) or a bbolt file.
 */
import { createHash } from "node:crypto"

const SHA256_SIZE = 32
const OURS_MAGIC = Buffer.from("etcd-effect-snapshot/1\n", "latin1")

export interface SnapshotFile {
  /** "ours": the whole file for decodeSnapshot (hash included); "bolt": the database without its hash */
  readonly format: "bolt" | "ours"
  readonly bytes: Uint8Array
}

/** etcdutl's hasChecksum */
export const hasChecksum = (size: number): boolean => size % 512 === SHA256_SIZE

/** Go's %v of a []byte: "[1 2 3]" */
const goBytes = (b: Uint8Array): string => `[${[...b].join(" ")}]`

/** The database in `file`, or etcdutl's refusal. */
export const readSnapshotFile = (file: Uint8Array, skipHashCheck: boolean): SnapshotFile | string => {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength)
  const hashed = hasChecksum(buf.length)
  if (!hashed && !skipHashCheck) return "snapshot missing hash but --skip-hash-check=false"
  const db = hashed ? buf.subarray(0, buf.length - SHA256_SIZE) : buf
  if (hashed && !skipHashCheck) {
    const expected = buf.subarray(buf.length - SHA256_SIZE)
    const got = createHash("sha256").update(db).digest()
    if (!got.equals(expected)) return `expected sha256 ${goBytes(expected)}, got ${goBytes(got)}`
  }
  if (db.subarray(0, OURS_MAGIC.length).equals(OURS_MAGIC)) {
    // decodeSnapshot checks the hash itself: with --skip-hash-check it is recomputed
    if (!hashed) return { format: "ours", bytes: Buffer.concat([db, createHash("sha256").update(db).digest()]) }
    return { format: "ours", bytes: skipHashCheck ? withOwnHash(db) : buf }
  }
  return { format: "bolt", bytes: db }
}

const withOwnHash = (db: Buffer): Uint8Array => Buffer.concat([db, createHash("sha256").update(db).digest()])
