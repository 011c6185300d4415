/**
 * bbolt's leaf and branch pages as bytes (node.write): the header, then every element's 16 bytes,
 * then each element's key (and a leaf's value) in order. An element's `pos` is the distance from
 * the element itself to its key.
 *
 *   leaf element:   flags u32 · pos u32 · ksize u32 · vsize u32
 *   branch element: pos u32 · ksize u32 · pgid u64
 */
import { BRANCH_PAGE, ELEMENT_SIZE, LEAF_PAGE, PAGE_HEADER_SIZE, writePageHeader } from "./bolt-page.js"

export interface LeafEntry {
  readonly key: Uint8Array
  readonly value: Uint8Array
  /** BUCKET_LEAF_FLAG for a sub-bucket, else 0 */
  readonly flags: number
}

export interface BranchEntry {
  /** the child's first key */
  readonly key: Uint8Array
  readonly pgid: bigint
}

export const leafElementSize = (e: LeafEntry): number => ELEMENT_SIZE + e.key.length + e.value.length
export const branchElementSize = (e: BranchEntry): number => ELEMENT_SIZE + e.key.length

/** A leaf node's bytes: `pages` whole pages (pageSize 0: exactly its size, an inline bucket's page). */
export const encodeLeaf = (entries: ReadonlyArray<LeafEntry>, id: bigint, pageSize: number): Buffer => {
  const size = entries.reduce((n, e) => n + leafElementSize(e), PAGE_HEADER_SIZE)
  const pages = pageSize === 0 ? 0 : Math.ceil(size / pageSize)
  const buf = Buffer.alloc(pageSize === 0 ? size : pages * pageSize)
  writePageHeader(buf, 0, { id, flags: LEAF_PAGE, count: entries.length, overflow: Math.max(0, pages - 1) })
  let data = PAGE_HEADER_SIZE + ELEMENT_SIZE * entries.length
  entries.forEach((e, i) => {
    const el = PAGE_HEADER_SIZE + ELEMENT_SIZE * i
    buf.writeUInt32LE(e.flags, el)
    buf.writeUInt32LE(data - el, el + 4)
    buf.writeUInt32LE(e.key.length, el + 8)
    buf.writeUInt32LE(e.value.length, el + 12)
    buf.set(e.key, data)
    buf.set(e.value, data + e.key.length)
    data += e.key.length + e.value.length
  })
  return buf
}

export const encodeBranch = (entries: ReadonlyArray<BranchEntry>, id: bigint, pageSize: number): Buffer => {
  const size = entries.reduce((n, e) => n + branchElementSize(e), PAGE_HEADER_SIZE)
  const pages = Math.ceil(size / pageSize)
  const buf = Buffer.alloc(pages * pageSize)
  writePageHeader(buf, 0, { id, flags: BRANCH_PAGE, count: entries.length, overflow: pages - 1 })
  let data = PAGE_HEADER_SIZE + ELEMENT_SIZE * entries.length
  entries.forEach((e, i) => {
    const el = PAGE_HEADER_SIZE + ELEMENT_SIZE * i
    buf.writeUInt32LE(data - el, el)
    buf.writeUInt32LE(e.key.length, el + 4)
    buf.writeBigUInt64LE(e.pgid, el + 8)
    buf.set(e.key, data)
    data += e.key.length
  })
  return buf
}
