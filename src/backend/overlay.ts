/**
 * The overlay: what is staged but not yet in LMDB, per bucket and sorted, so that reads see a batch
 * the moment it is staged (etcd's txReadBuffer, tx_buffer.go). read-tx.ts merges it over LMDB.
 * An entry leaves once the LMDB transaction holding its batch is durable, unless a later batch
 * rewrote the key meanwhile.
 */
import type { BucketName } from "./backend.js"
import { BUCKETS } from "./snapshot-format.js"
import { SortedBucket } from "./sorted-bucket.js"
import type { StagedBatch } from "./staged-batch.js"

export interface OverlayEntry {
  /** the staging seq of the batch that wrote it */
  readonly seq: number
  /** undefined: deleted by a staged batch */
  readonly value: Uint8Array | undefined
}

export class Overlay {
  readonly buckets = Object.fromEntries(BUCKETS.map((b) => [b, new SortedBucket<OverlayEntry>()])) as Record<
    BucketName,
    SortedBucket<OverlayEntry>
  >

  /** Shows the batch's ops to every later read. */
  stage(b: StagedBatch): void {
    const buckets = this.buckets
    if (b.ops.length < 64) {
      for (const op of b.ops) buckets[op.bucket].set(op.key, { seq: b.seq, value: op.value })
      return
    }
    // Long batches (compaction's deletes) are merged per bucket in one pass.
    const per: Partial<Record<BucketName, Array<readonly [Uint8Array, OverlayEntry]>>> = {}
    for (const op of b.ops) (per[op.bucket] ??= []).push([op.key, { seq: b.seq, value: op.value }])
    for (const name of BUCKETS) {
      const changes = per[name]
      if (changes !== undefined) buckets[name].applyBatch(changes, false)
    }
  }

  /** Drops the entries of batches up to staging seq `upTo` (LMDB holds them now). */
  dropThrough(upTo: number): void {
    for (const name of BUCKETS) if (this.buckets[name].size > 0) this.buckets[name].retain((e) => e.seq > upTo)
  }

  clear(): void {
    for (const name of BUCKETS) this.buckets[name].clear()
  }
}
