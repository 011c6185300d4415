/**
 * bbolt's meta page (internal/common/meta.go), at offset 16 of pages 0 and 1: magic, version,
 * page size, flags, the root bucket {root pgid, sequence}, the freelist's pgid (all ones: not
 * persisted), the high-water pgid, the txid, and an FNV-1a 64 checksum of the 56 bytes before it.
 * The valid meta with the higher txid is the current one; a file opens when either is valid.
 */
import { BoltError } from "./bolt-error.js"
import { META_PAGE, PAGE_HEADER_SIZE, writePageHeader } from "./bolt-page.js"

export const MAGIC = 0xed0cdaed
export const VERSION = 2
export const NO_FREELIST = 0xffffffffffffffffn
const CHECKSUM_AT = 56

export interface Meta {
  readonly pageSize: number
  readonly flags: number
  readonly root: bigint
  readonly sequence: bigint
  readonly freelist: bigint
  readonly pgid: bigint
  readonly txid: bigint
}

const FNV_OFFSET = 0xcbf29ce484222325n
const FNV_PRIME = 0x100000001b3n

/** FNV-1a 64 (Go's hash/fnv New64a). */
export const fnv1a64 = (bytes: Uint8Array): bigint => {
  let h = FNV_OFFSET
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * FNV_PRIME)
  return h
}

/** Writes a whole meta page (header id = pageId) at `off`. */
export const writeMetaPage = (buf: Buffer, off: number, pageId: number, m: Meta): void => {
  writePageHeader(buf, off, { id: BigInt(pageId), flags: META_PAGE, count: 0, overflow: 0 })
  const p = off + PAGE_HEADER_SIZE
  buf.writeUInt32LE(MAGIC, p)
  buf.writeUInt32LE(VERSION, p + 4)
  buf.writeUInt32LE(m.pageSize, p + 8)
  buf.writeUInt32LE(m.flags, p + 12)
  buf.writeBigUInt64LE(m.root, p + 16)
  buf.writeBigUInt64LE(m.sequence, p + 24)
  buf.writeBigUInt64LE(m.freelist, p + 32)
  buf.writeBigUInt64LE(m.pgid, p + 40)
  buf.writeBigUInt64LE(m.txid, p + 48)
  buf.writeBigUInt64LE(fnv1a64(buf.subarray(p, p + CHECKSUM_AT)), p + CHECKSUM_AT)
}

/** The meta at page offset `off`, or bbolt's error for it (Meta.Validate's order). */
export const readMeta = (buf: Buffer, off: number): Meta | BoltError => {
  const p = off + PAGE_HEADER_SIZE
  if (p + CHECKSUM_AT + 8 > buf.length) return new BoltError({ message: "file size too small" })
  if (buf.readUInt32LE(p) !== MAGIC) return new BoltError({ message: "invalid database" })
  if (buf.readUInt32LE(p + 4) !== VERSION) return new BoltError({ message: "version mismatch" })
  if (buf.readBigUInt64LE(p + CHECKSUM_AT) !== fnv1a64(buf.subarray(p, p + CHECKSUM_AT))) {
    return new BoltError({ message: "checksum error" })
  }
  return {
    pageSize: buf.readUInt32LE(p + 8),
    flags: buf.readUInt32LE(p + 12),
    root: buf.readBigUInt64LE(p + 16),
    sequence: buf.readBigUInt64LE(p + 24),
    freelist: buf.readBigUInt64LE(p + 32),
    pgid: buf.readBigUInt64LE(p + 40),
    txid: buf.readBigUInt64LE(p + 48)
  }
}

/**
 * The current meta: meta 0's page size tells where meta 1 is (else the probe bbolt does, 1024 << i);
 * the valid one with the higher txid wins; when neither is valid, meta 0's error.
 */
export const currentMeta = (buf: Buffer): Meta | BoltError => {
  const m0 = readMeta(buf, 0)
  const sizes = m0 instanceof BoltError ? [4096, 1024, 2048, 8192, 16384, 32768, 65536] : [m0.pageSize]
  let m1: Meta | BoltError = new BoltError({ message: "invalid database" })
  for (const size of sizes) {
    if (size < 1024 || size * 2 > buf.length) continue
    m1 = readMeta(buf, size)
    if (!(m1 instanceof BoltError)) break
  }
  if (m0 instanceof BoltError) return m1 instanceof BoltError ? m0 : m1
  if (m1 instanceof BoltError || m1.pageSize !== m0.pageSize) return m0
  return m1.txid > m0.txid ? m1 : m0
}
