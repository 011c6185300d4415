/**
 * bbolt's freelist page (freelist.write / internal/freelist/shared.go Write): the free and pending
 * page ids as sorted u64s; a count of 0xFFFF or more is 0xFFFF in the header and the real count in
 * the first u64. Our writer leaves no free pages; the reader needs the list to tell free pages from
 * lost ones.
 */
import { BoltError } from "./bolt-error.js"
import { NO_FREELIST, type Meta } from "./bolt-meta.js"
import { FREELIST_PAGE, PAGE_HEADER_SIZE, readPageHeader, writePageHeader } from "./bolt-page.js"

/** An empty freelist page with id `id`. */
export const emptyFreelistPage = (id: bigint, pageSize: number): Buffer => {
  const buf = Buffer.alloc(pageSize)
  writePageHeader(buf, 0, { id, flags: FREELIST_PAGE, count: 0, overflow: 0 })
  return buf
}

/** The free page ids the meta's freelist names, and how many pages the freelist page spans. */
export const readFreelist = (
  buf: Buffer,
  meta: Meta
): { readonly ids: ReadonlyArray<bigint>; readonly pages: number } => {
  if (meta.freelist === NO_FREELIST) return { ids: [], pages: 0 }
  const off = Number(meta.freelist) * meta.pageSize
  const h = readPageHeader(buf, off)
  if (h.flags !== FREELIST_PAGE) {
    throw new BoltError({ message: `invalid freelist page: ${meta.freelist}, page type is ${h.flags}` })
  }
  let at = off + PAGE_HEADER_SIZE
  let count = h.count
  if (count === 0xffff) {
    if (at + 8 > buf.length) throw new BoltError({ message: "freelist page is past the file's end" })
    count = Number(buf.readBigUInt64LE(at))
    at += 8
  }
  if (at + count * 8 > buf.length) throw new BoltError({ message: "freelist page is past the file's end" })
  const ids: Array<bigint> = []
  for (let i = 0; i < count; i++) ids.push(buf.readBigUInt64LE(at + i * 8))
  return { ids, pages: h.overflow + 1 }
}
