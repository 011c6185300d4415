/**
 * Writes a bbolt file from buckets of sorted entries, as `Tx.WriteTo` lays one out: meta 0 (txid
 * T) and meta 1 (T-1), an empty freelist at page 2, then the trees. A bucket that fits in a
 * quarter page is inline (bbolt's inlineable); a larger one is split into leaf pages (a value
 * larger than a page gets overflow pages), under as many levels of branch pages as it needs.
 * The root bucket holds the top-level buckets by name. No page is free, none is unreachable.
 */
import { writeMetaPage } from "./bolt-meta.js"
import { emptyFreelistPage } from "./bolt-freelist.js"
import {
  branchElementSize,
  encodeBranch,
  encodeLeaf,
  leafElementSize,
  type BranchEntry,
  type LeafEntry
} from "./bolt-node.js"
import { BUCKET_LEAF_FLAG, DEFAULT_PAGE_SIZE, PAGE_HEADER_SIZE } from "./bolt-page.js"

export interface BucketInput {
  readonly name: Uint8Array
  /** sorted by key, bytewise, no duplicates */
  readonly entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]>
}

const FIRST_DATA_PAGE = 3n
const TXID = 2n

/** Splits items into runs whose encoded size fits a page (an item larger than a page runs alone). */
const groups = <T>(items: ReadonlyArray<T>, size: (t: T) => number, pageSize: number): Array<Array<T>> => {
  const out: Array<Array<T>> = [[]]
  let used = PAGE_HEADER_SIZE
  for (const t of items) {
    const s = size(t)
    const current = out[out.length - 1]!
    if (current.length > 0 && used + s > pageSize) {
      out.push([t])
      used = PAGE_HEADER_SIZE + s
    } else {
      current.push(t)
      used += s
    }
  }
  return out
}

class Pages {
  next = FIRST_DATA_PAGE
  readonly chunks: Array<Buffer> = []
  constructor(readonly pageSize: number) {}
  add(encode: (id: bigint) => Buffer): bigint {
    const id = this.next
    const buf = encode(id)
    this.chunks.push(buf)
    this.next += BigInt(buf.length / this.pageSize)
    return id
  }
  /** Writes a tree of the entries; its root's pgid. */
  tree(entries: ReadonlyArray<LeafEntry>): bigint {
    let level: Array<BranchEntry> = groups(entries, leafElementSize, this.pageSize).map((g) => ({
      key: g[0]?.key ?? new Uint8Array(0),
      pgid: this.add((id) => encodeLeaf(g, id, this.pageSize))
    }))
    while (level.length > 1) {
      level = groups(level, branchElementSize, this.pageSize).map((g) => ({
        key: g[0]!.key,
        pgid: this.add((id) => encodeBranch(g, id, this.pageSize))
      }))
    }
    return level[0]!.pgid
  }
  /** A bucket's value in its parent: {root, sequence 0}, followed by its page when inline. */
  bucket(entries: ReadonlyArray<LeafEntry>): Buffer {
    const size = entries.reduce((n, e) => n + leafElementSize(e), PAGE_HEADER_SIZE)
    const header = Buffer.alloc(16)
    if (size <= this.pageSize / 4) return Buffer.concat([header, encodeLeaf(entries, 0n, 0)])
    header.writeBigUInt64LE(this.tree(entries), 0)
    return header
  }
}

const compare = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b)

/** The file's bytes in order, page by page as written (`writeBolt` is their concatenation). */
export const writeBoltPages = (buckets: ReadonlyArray<BucketInput>, pageSize = DEFAULT_PAGE_SIZE): Array<Buffer> => {
  const pages = new Pages(pageSize)
  const top: Array<LeafEntry> = [...buckets]
    .sort((a, b) => compare(a.name, b.name))
    .map((b) => ({
      key: b.name,
      flags: BUCKET_LEAF_FLAG,
      value: pages.bucket(b.entries.map(([key, value]) => ({ key, value, flags: 0 })))
    }))
  const root = pages.tree(top)
  const head = Buffer.alloc(2 * pageSize)
  const meta = { pageSize, flags: 0, root, sequence: 0n, freelist: 2n, pgid: pages.next }
  writeMetaPage(head, 0, 0, { ...meta, txid: TXID })
  writeMetaPage(head, pageSize, 1, { ...meta, txid: TXID - 1n })
  return [head, emptyFreelistPage(2n, pageSize), ...pages.chunks]
}

export const writeBolt = (buckets: ReadonlyArray<BucketInput>, pageSize = DEFAULT_PAGE_SIZE): Buffer =>
  Buffer.concat(writeBoltPages(buckets, pageSize))
