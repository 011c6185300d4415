/**
 * etcdutl's `snapshot status` (v3_snapshot.go Status): bbolt's consistency check first, then a
 * CRC-32C over every bucket's name, keys and values in order; the revision of the key bucket's
 * last record; the keys alive at it (a put adds its key, a tombstone removes it); the file's size
 * in pages (bbolt's Tx.Size); and meta's storageVersion (etcd 3.6; "" before).
 *
 * Our old snapshot format (snapshot-format.ts) gets the same figures over its buckets, with no
 * version: etcdutl cannot read that format at all.
 */
import { BoltError, checkBolt, readBolt } from "../../backend/bbolt/index.js"
import { crc32cUpdate } from "../../backend/crc32c.js"
import { decodeSnapshot } from "../../backend/snapshot-format.js"
import { bytesToMain, decodeKeyValue, isTombstoneKey } from "../../mvcc/kv-codec.js"

/** etcdutl's snapshot.Status, its JSON field names */
export interface SnapshotStatus {
  readonly hash: number
  readonly revision: number
  readonly totalKey: number
  readonly totalSize: number
  readonly version: string
}

/** what semver.NewVersion takes, as etcdutl prints it back */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/

type Bucket = { readonly name: Uint8Array; readonly entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]> }

const figures = (buckets: ReadonlyArray<Bucket>): { hash: number; revision: number; totalKey: number } => {
  let hash = 0
  let revision = 0
  const live = new Set<string>()
  for (const b of buckets) {
    hash = crc32cUpdate(hash, b.name)
    const isKey = Buffer.from(b.name).toString("latin1") === "key"
    for (const [k, v] of b.entries) {
      hash = crc32cUpdate(crc32cUpdate(hash, k), v)
      if (!isKey) continue
      if (k.length < 17)
        throw new Error(`cannot parse revision key: ${JSON.stringify(Buffer.from(k).toString("latin1"))}`)
      revision = bytesToMain(k)
      const key = Buffer.from(decodeKeyValue(v).key).toString("latin1")
      if (isTombstoneKey(k)) live.delete(key)
      else live.add(key)
    }
  }
  return { hash, revision, totalKey: live.size }
}

/** The status of a bbolt database (without its hash), or etcdutl's refusal. */
export const boltStatus = (db: Uint8Array): SnapshotStatus | string => {
  const buf = Buffer.from(db.buffer, db.byteOffset, db.byteLength)
  // bbolt reads meta 0 before it looks at the size: a file too short to hold one is not a database
  if (buf.length < 80) return "invalid database"
  const errors = checkBolt(db)
  // a file bbolt cannot open at all fails its Open, before any check
  if (
    errors.length === 1 &&
    ["invalid database", "file size too small", "version mismatch", "checksum error"].includes(errors[0]!)
  )
    return errors[0]!
  if (errors.length > 0)
    return `snapshot file integrity check failed. ${errors.length} errors found.\n${errors.join("\n")}`
  try {
    const file = readBolt(db)
    const meta = file.buckets.find((b) => b.name.toString("latin1") === "meta")
    const stored = meta?.entries.find(([k]) => k.toString("latin1") === "storageVersion")?.[1].toString("latin1") ?? ""
    return {
      ...figures(file.buckets),
      totalSize: Number(file.meta.pgid) * file.meta.pageSize,
      version: SEMVER.test(stored) ? stored : ""
    }
  } catch (e) {
    return e instanceof BoltError || e instanceof Error ? e.message : String(e)
  }
}

/** The status of our old format's snapshot (the whole file, its hash checked). */
export const oursStatus = (file: Uint8Array): SnapshotStatus | string => {
  try {
    const byBucket = new Map<string, Array<readonly [Uint8Array, Uint8Array]>>()
    for (const e of decodeSnapshot(file)) {
      const list = byBucket.get(e.bucket) ?? []
      list.push([e.key, e.value])
      byBucket.set(e.bucket, list)
    }
    const buckets = [...byBucket]
      .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .map(([name, entries]) => ({ name: new Uint8Array(Buffer.from(name, "latin1")), entries }))
    return { ...figures(buckets), totalSize: file.byteLength - 32, version: "" }
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}
