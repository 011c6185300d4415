/**
 * The LMDB environment under the backend (bolt's db in etcd's backend.go): <data-dir>/member/snap/db
 * with a named database per bucket, binary keys in LMDB's bytewise order, and a "wal" database
 * holding the applied mark, the seq of the last WAL batch whose ops are in LMDB. Here: how it is
 * opened, how ops and the mark go into an lmdb-js batch, and the page counts behind the sizes.
 *
 * Durability settings: lmdb-js runs with overlappingSync off (see docs/decisions.md): its write
 * promise then resolves after mdb_txn_commit returned, i.e. after fdatasync of the data pages and
 * the O_DSYNC write of the meta page. LMDB keeps its full-sync settings, so LMDB alone is
 * crash-safe.
 */
import * as fs from "node:fs"
import { type Database, open, type RootDatabase } from "lmdb"
import { errorText } from "../errors.js"
import { BackendError, type BucketName, type WriteOp } from "./backend.js"
import { BUCKETS } from "./snapshot-format.js"
import { sealValue } from "./value-checksum.js"

export type Dbs = Record<BucketName, Database<Buffer, Uint8Array>>

export interface LmdbEnv {
  readonly root: RootDatabase<Buffer, Uint8Array>
  readonly dbs: Dbs
  readonly walDb: Database<Buffer, Uint8Array>
}

/**
 * Opens (creating when missing) the environment at `dbPath` and its databases; throws as lmdb-js
 * does. `noSync` (etcd's --unsafe-no-fsync) skips LMDB's fsyncs: a crash may lose or corrupt data.
 */
export const openEnv = (dbPath: string, pageSize: number | undefined, noSync = false): LmdbEnv => {
  const root: RootDatabase<Buffer, Uint8Array> = open({
    path: dbPath,
    noSubdir: true,
    maxDbs: 8,
    // Durability: see the module comment and docs/decisions.md.
    overlappingSync: false,
    noSync,
    noMetaSync: noSync,
    useWritemap: false,
    // Every write goes through `batch` already; lmdb-js's own event-turn batch would wrap it in a
    // promise nobody handles, which a failed commit (a full disk) rejects: an unhandled rejection.
    eventTurnBatching: false,
    keyEncoding: "binary",
    encoding: "binary",
    ...(pageSize !== undefined ? { pageSize } : {})
  })
  const dbs = {} as Dbs
  for (const name of BUCKETS)
    dbs[name] = root.openDB<Buffer, Uint8Array>(name, { keyEncoding: "binary", encoding: "binary" })
  const walDb = root.openDB<Buffer, Uint8Array>("wal", { keyEncoding: "binary", encoding: "binary" })
  return { root, dbs, walDb }
}

/** The error of a data dir the backend cannot open, read or replay. */
export const unreadable = (dir: string, what: string, e: unknown): BackendError =>
  new BackendError({ reason: "Unreadable", message: `data dir ${dir}: ${what}: ${errorText(e)}`, cause: e })

export const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)

/**
 * Writes ops into the current lmdb-js batch (inside `root.batch`), each value sealed with its
 * checksum (value-checksum.ts). Each put/remove's own promise is the batch's: its caller awaits
 * `root.batch(…)`, so the per-op promises are dropped (`void`).
 */
export const putOps = (dbs: Dbs, ops: ReadonlyArray<WriteOp>): void => {
  for (const op of ops) {
    const db = dbs[op.bucket]
    if (op.value === undefined) void db.remove(asBuffer(op.key))
    else void db.put(asBuffer(op.key), sealValue(op.key, op.value))
  }
}

/** In LMDB's "wal" database: present once every value in the environment carries its checksum. */
const SEALED_KEY = Buffer.from("sealed")

/**
 * Makes sure every stored value carries its checksum: an environment written before checksums
 * (layout 2, no mark) gets all its values sealed and the mark in ONE synced transaction, so a crash
 * leaves it wholly old or wholly new. A new environment just gets the mark. Returns how many values
 * were sealed. Runs before the WAL replay, whose puts are sealed already.
 */
export const ensureSealed = async (env: LmdbEnv): Promise<number> => {
  if (env.walDb.get(SEALED_KEY) !== undefined) return 0
  const entries: Array<readonly [BucketName, Uint8Array, Uint8Array]> = []
  for (const name of BUCKETS) {
    for (const { key, value } of env.dbs[name].getRange({})) entries.push([name, key, value])
  }
  await env.root.batch(() => {
    for (const [name, key, value] of entries) void env.dbs[name].put(asBuffer(key), sealValue(key, value))
    void env.walDb.put(SEALED_KEY, Buffer.from([1]))
  })
  return entries.length
}

/** In LMDB's "wal" database: the seq of the last WAL batch whose ops are in LMDB. */
const APPLIED_KEY = Buffer.from("applied")

/** The applied mark (0 when no batch came through the WAL yet). */
export const readAppliedMark = (env: LmdbEnv): number => {
  const stored = env.walDb.get(APPLIED_KEY)
  return stored === undefined ? 0 : Number(Buffer.from(stored).readBigUInt64BE(0))
}

/** Sets the applied mark in the current lmdb-js batch (settled with the batch, as `putOps`). */
export const putAppliedMark = (env: LmdbEnv, seq: number): void => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(seq), 0)
  void env.walDb.put(APPLIED_KEY, b)
}

interface PageCounts {
  readonly treeBranchPageCount: number
  readonly treeLeafPageCount: number
  readonly overflowPages: number
}

const pageStats = (root: RootDatabase<Buffer, Uint8Array>) =>
  root.getStats() as {
    pageSize: number
    lastPageNumber: number
    root: PageCounts
    free: PageCounts
  }

const pages = (t: PageCounts) => t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages

/** The bytes of the pages in use: reachable from a tree (our buckets, the main db naming them, the freelist itself) and the two metas. */
export const countInUseBytes = (env: LmdbEnv): number => {
  const s = pageStats(env.root)
  let n = 2 + pages(s.root) + pages(s.free)
  for (const name of BUCKETS) n += pages(env.dbs[name].getStats() as PageCounts)
  return n * s.pageSize
}

/** The environment file's size (etcd's db size); from LMDB's last page when the file cannot be stat'ed. */
export const fileSizeBytes = (env: LmdbEnv, dbPath: string): number => {
  try {
    return fs.statSync(dbPath).size
  } catch {
    const s = pageStats(env.root)
    return (s.lastPageNumber + 1) * s.pageSize
  }
}
