/**
 * Reads a bbolt file (a database or a snapshot without its hash): the current meta, then every
 * top-level bucket's entries in key order. Nested buckets (etcd has none) are counted, not read.
 * Anything out of bounds throws a BoltError naming the page; the structural checks bbolt's
 * `Tx.Check` makes are bolt-check.ts's.
 */
import { BoltError } from "./bolt-error.js"
import { currentMeta, type Meta } from "./bolt-meta.js"
import {
  BRANCH_PAGE,
  BUCKET_LEAF_FLAG,
  ELEMENT_SIZE,
  LEAF_PAGE,
  PAGE_HEADER_SIZE,
  readPageHeader,
  type PageHeader
} from "./bolt-page.js"

export interface BoltEntry {
  readonly key: Buffer
  readonly value: Buffer
  readonly flags: number
}

export interface BoltBucket {
  readonly name: Buffer
  readonly entries: ReadonlyArray<readonly [Buffer, Buffer]>
  /** sub-buckets inside this bucket (skipped) */
  readonly nested: number
}

export interface BoltFile {
  readonly meta: Meta
  readonly buckets: ReadonlyArray<BoltBucket>
}

/** What a walk reports: each page of the tree (with its depth), each leaf entry in order. */
export interface PageVisitor {
  readonly page?: (pgid: bigint, header: PageHeader) => void
  readonly entry: (e: BoltEntry) => void
}

const slice = (buf: Buffer, from: number, length: number, where: string): Buffer => {
  if (from < 0 || length < 0 || from + length > buf.length)
    throw new BoltError({ message: `${where}: element out of bounds` })
  return buf.subarray(from, from + length)
}

/** The leaf entries of one page image at `off` in `buf` (a page of the file or an inline bucket's). */
export const leafEntries = (buf: Buffer, off: number, count: number, where: string): Array<BoltEntry> => {
  const out: Array<BoltEntry> = []
  for (let i = 0; i < count; i++) {
    const el = off + PAGE_HEADER_SIZE + ELEMENT_SIZE * i
    slice(buf, el, ELEMENT_SIZE, where)
    const pos = buf.readUInt32LE(el + 4)
    const ksize = buf.readUInt32LE(el + 8)
    const vsize = buf.readUInt32LE(el + 12)
    out.push({
      flags: buf.readUInt32LE(el),
      key: slice(buf, el + pos, ksize, where),
      value: slice(buf, el + pos + ksize, vsize, where)
    })
  }
  return out
}

/** Walks the tree rooted at `root` (depth first, keys in order); `depth` bounds a cyclic file. */
export const walkTree = (buf: Buffer, pageSize: number, root: bigint, v: PageVisitor, depth = 0): void => {
  if (depth > 64) throw new BoltError({ message: `page ${root}: tree too deep (a cycle)` })
  const off = Number(root) * pageSize
  const where = `page ${root}`
  if (root < 2n || off + PAGE_HEADER_SIZE > buf.length) throw new BoltError({ message: `${where}: out of bounds` })
  const h = readPageHeader(buf, off)
  if (h.id !== root) throw new BoltError({ message: `${where}: invalid page id ${h.id}` })
  if (off + (h.overflow + 1) * pageSize > buf.length)
    throw new BoltError({ message: `${where}: overflow past the file's end` })
  v.page?.(root, h)
  if (h.flags === LEAF_PAGE) {
    for (const e of leafEntries(buf, off, h.count, where)) v.entry(e)
  } else if (h.flags === BRANCH_PAGE) {
    for (let i = 0; i < h.count; i++) {
      const el = off + PAGE_HEADER_SIZE + ELEMENT_SIZE * i
      walkTree(buf, pageSize, buf.readBigUInt64LE(el + 8), v, depth + 1)
    }
  } else {
    throw new BoltError({ message: `${where}: invalid page type ${h.flags}` })
  }
}

/** A bucket value's root (0: inline) and, when inline, its entries. */
export const bucketValue = (
  value: Buffer,
  where: string
): { readonly root: bigint; readonly inline: ReadonlyArray<BoltEntry> | undefined } => {
  if (value.length < 16) throw new BoltError({ message: `${where}: bucket value too short` })
  const root = value.readBigUInt64LE(0)
  if (root !== 0n) return { root, inline: undefined }
  const page = value.subarray(16)
  const h = readPageHeader(page, 0)
  return { root, inline: leafEntries(page, 0, h.count, `${where} (inline)`) }
}

/** Every entry of a bucket whose value is `value` (its header, and inline page if any). */
export const bucketEntries = (buf: Buffer, pageSize: number, value: Buffer, where: string, v: PageVisitor): void => {
  const b = bucketValue(value, where)
  if (b.inline !== undefined) b.inline.forEach(v.entry)
  else walkTree(buf, pageSize, b.root, v)
}

export const readBolt = (bytes: Uint8Array): BoltFile => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < 2 * 1024) throw new BoltError({ message: "file size too small" })
  const meta = currentMeta(buf)
  if (meta instanceof BoltError) throw meta
  const buckets: Array<BoltBucket> = []
  walkTree(buf, meta.pageSize, meta.root, {
    entry: (top) => {
      const where = `bucket ${JSON.stringify(top.key.toString("latin1"))}`
      if ((top.flags & BUCKET_LEAF_FLAG) === 0) throw new BoltError({ message: `${where}: a value in the root bucket` })
      const entries: Array<readonly [Buffer, Buffer]> = []
      let nested = 0
      bucketEntries(buf, meta.pageSize, top.value, where, {
        entry: (e) => {
          if ((e.flags & BUCKET_LEAF_FLAG) !== 0) nested++
          else entries.push([e.key, e.value])
        }
      })
      buckets.push({ name: top.key, entries, nested })
    }
  })
  return { meta, buckets }
}
