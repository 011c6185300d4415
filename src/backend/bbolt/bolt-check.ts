/**
 * bbolt's consistency check (tx_check.go), which `etcdctl snapshot status` runs before trusting a
 * file: no page freed twice; every page of every bucket's tree within the high-water mark,
 * referenced once, not free, a branch or leaf; keys ascending within a page and within the range
 * its parent gives it; every page below the high-water mark reachable or free (when the file
 * persists its freelist: without one, as etcd writes them, bbolt takes the unreachable pages as free). Returns the errors
 * found (none: the file is consistent), in bbolt's wording where it has one.
 */
import { BoltError } from "./bolt-error.js"
import { currentMeta, type Meta, NO_FREELIST } from "./bolt-meta.js"
import { readFreelist } from "./bolt-freelist.js"
import { BUCKET_LEAF_FLAG, BRANCH_PAGE, LEAF_PAGE, pageTypeName } from "./bolt-page.js"
import { bucketValue, walkTree } from "./bolt-reader.js"

const MAX_ERRORS = 100

class Checker {
  readonly errors: Array<string> = []
  readonly reachable = new Set<bigint>()
  readonly freed = new Set<bigint>()
  constructor(
    readonly buf: Buffer,
    readonly meta: Meta
  ) {}
  error(e: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push(e)
  }
  /** Checks one bucket's tree (not inline) and, recursively, its sub-buckets. */
  tree(root: bigint): void {
    let previous: Buffer | undefined
    const subs: Array<Buffer> = []
    walkTree(this.buf, this.meta.pageSize, root, {
      page: (pgid, h) => {
        if (h.flags !== BRANCH_PAGE && h.flags !== LEAF_PAGE)
          this.error(`page ${pgid}: invalid type: ${pageTypeName(h.flags)}`)
        for (let i = 0n; i <= BigInt(h.overflow); i++) {
          const id = pgid + i
          if (id >= this.meta.pgid) this.error(`page ${id}: out of bounds: ${this.meta.pgid}`)
          if (this.reachable.has(id)) this.error(`page ${id}: multiple references`)
          if (this.freed.has(id)) this.error(`page ${id}: reachable freed`)
          this.reachable.add(id)
        }
      },
      entry: (e) => {
        if (previous !== undefined && Buffer.compare(previous, e.key) >= 0) {
          this.error(`key ${e.key.toString("hex")} does not follow ${previous.toString("hex")} (bucket root ${root})`)
        }
        previous = e.key
        if ((e.flags & BUCKET_LEAF_FLAG) !== 0) subs.push(e.value)
      }
    })
    for (const v of subs) this.bucket(v, `bucket under page ${root}`)
  }
  bucket(value: Buffer, where: string): void {
    const b = bucketValue(value, where)
    if (b.inline === undefined) return this.tree(b.root)
    for (const e of b.inline) if ((e.flags & BUCKET_LEAF_FLAG) !== 0) this.bucket(e.value, where)
  }
}

/** The errors bbolt's check would find; an unreadable file is one error, its BoltError's message. */
export const checkBolt = (bytes: Uint8Array): ReadonlyArray<string> => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  try {
    const meta = currentMeta(buf)
    if (meta instanceof BoltError) return [meta.message]
    const c = new Checker(buf, meta)
    const free = readFreelist(buf, meta)
    for (const id of free.ids) {
      if (c.freed.has(id)) c.error(`page ${id}: already freed`)
      c.freed.add(id)
    }
    c.reachable.add(0n).add(1n)
    for (let i = 0n; i < BigInt(free.pages); i++) c.reachable.add(meta.freelist + i)
    c.tree(meta.root)
    // without a persisted freelist (etcd's NoFreelistSync), bbolt takes every unreachable page as free
    if (meta.freelist !== NO_FREELIST) {
      for (let i = 0n; i < meta.pgid; i++) {
        if (!c.reachable.has(i) && !c.freed.has(i)) c.error(`page ${i}: unreachable unfreed`)
      }
    }
    if (BigInt(buf.length) < meta.pgid * BigInt(meta.pageSize)) c.error(`file is shorter than its ${meta.pgid} pages`)
    return c.errors
  } catch (e) {
    return [e instanceof BoltError ? e.message : String(e)]
  }
}
