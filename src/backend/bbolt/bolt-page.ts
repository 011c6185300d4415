/**
 * bbolt's page (internal/common/page.go): a 16-byte header — id u64, flags u16, count u16,
 * overflow u32, little endian (host order on amd64/arm64) — then the page's elements. Page n starts
 * at n * pageSize; a page with overflow k spans k more contiguous pages without headers.
 */
import { BoltError } from "./bolt-error.js"

export const PAGE_HEADER_SIZE = 16
export const ELEMENT_SIZE = 16
export const DEFAULT_PAGE_SIZE = 4096

export const BRANCH_PAGE = 0x01
export const LEAF_PAGE = 0x02
export const META_PAGE = 0x04
export const FREELIST_PAGE = 0x10

/** a leaf element's flag: the value is a sub-bucket header */
export const BUCKET_LEAF_FLAG = 0x01

export interface PageHeader {
  readonly id: bigint
  readonly flags: number
  readonly count: number
  readonly overflow: number
}

export const writePageHeader = (buf: Buffer, off: number, h: PageHeader): void => {
  buf.writeBigUInt64LE(h.id, off)
  buf.writeUInt16LE(h.flags, off + 8)
  buf.writeUInt16LE(h.count, off + 10)
  buf.writeUInt32LE(h.overflow, off + 12)
}

export const readPageHeader = (buf: Buffer, off: number): PageHeader => {
  if (off < 0 || off + PAGE_HEADER_SIZE > buf.length)
    throw new BoltError({ message: `page at ${off} is past the file's end` })
  return {
    id: buf.readBigUInt64LE(off),
    flags: buf.readUInt16LE(off + 8),
    count: buf.readUInt16LE(off + 10),
    overflow: buf.readUInt32LE(off + 12)
  }
}

export const pageTypeName = (flags: number): string =>
  flags === BRANCH_PAGE
    ? "branch"
    : flags === LEAF_PAGE
      ? "leaf"
      : flags === META_PAGE
        ? "meta"
        : flags === FREELIST_PAGE
          ? "freelist"
          : `unknown<${flags.toString(16).padStart(2, "0")}>`
