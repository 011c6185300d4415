/**
 * The full check of the LMDB backend's records (etcd's initial and periodic corruption checks
 * read every record; here each value's checksum is checked, value-checksum.ts): every bucket, in
 * chunks, yielding to other fibers between chunks so a large environment does not stall the
 * server. Returns the records whose checksum fails.
 */
import { Effect } from "effect"
import { type BucketName, CorruptRecord } from "./backend.js"
import type { Dbs } from "./lmdb-env.js"
import { BUCKETS } from "./snapshot-format.js"
import { openValue } from "./value-checksum.js"

const CHUNK = 1000

/** The corrupt records of one chunk of `bucket` from `start` (inclusive); `next`: where the following chunk starts. */
const checkChunk = (
  dbs: Dbs,
  bucket: BucketName,
  start: Buffer | undefined
): { readonly bad: Array<CorruptRecord>; readonly next: Buffer | undefined } => {
  const bad: Array<CorruptRecord> = []
  let last: Uint8Array | undefined
  let n = 0
  for (const { key, value } of dbs[bucket].getRange(start === undefined ? { limit: CHUNK } : { start, limit: CHUNK })) {
    const v = openValue(bucket, key, value)
    if (v instanceof CorruptRecord) bad.push(v)
    last = key
    n++
  }
  // the smallest key after `last`: `last` followed by a zero byte
  return { bad, next: n < CHUNK || last === undefined ? undefined : Buffer.concat([last, Buffer.from([0])]) }
}

/** Checks every stored value of every bucket. */
export const verifyAll = (dbs: Dbs): Effect.Effect<ReadonlyArray<CorruptRecord>> =>
  Effect.gen(function* () {
    const bad: Array<CorruptRecord> = []
    for (const bucket of BUCKETS) {
      let start: Buffer | undefined
      for (;;) {
        const chunk = checkChunk(dbs, bucket, start)
        bad.push(...chunk.bad)
        if (chunk.next === undefined) break
        start = chunk.next
        yield* Effect.yieldNow()
      }
    }
    return bad
  })
