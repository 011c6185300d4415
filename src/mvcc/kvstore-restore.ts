/**
 * kvstore.go's restore: at open, the key bucket is read in revision order to rebuild the index and
 * the live keys' leases, and the revisions (current, compacted, scheduled compaction) come back
 * from the last record and the meta bucket's compaction marks.
 *
 * A record whose checksum fails (CorruptRecord) is reported to `onCorrupt` and indexed from its
 * unverified bytes when they still decode, so that reads of it fail (the backend throws again)
 * rather than serve an older version; one that does not decode cannot be placed, and the
 * restore fails.
 */
import { CorruptRecord } from "../backend/backend.js"
import { CHECKSUM_BYTES } from "../backend/value-checksum.js"
import { describeCorrupt } from "./corrupt-read.js"
import { KeyIndex } from "./key-index.js"
import { keyString } from "./key-string.js"
import { bytesToMain, bytesToSub, decodeKeyValue, isTombstoneKey, revToBytes } from "./kv-codec.js"
import { decodeCompactRev, FINISHED_COMPACT_KEY, SCHEDULED_COMPACT_KEY } from "./kvstore-compaction.js"
import type { StoreCore } from "./kvstore-txn.js"

const RESTORE_CHUNK = 10000

/** The compaction marks found in meta (-1: none). */
export interface CompactionMarks {
  readonly finished: number
  readonly scheduled: number
}

/**
 * Rebuilds the index and leases from the backend and sets the store's revisions; throws when a
 * record cannot be read back.
 */
export const restore = (core: StoreCore, onCorrupt: (e: CorruptRecord) => void = () => {}): CompactionMarks => {
  const restored = readKeyBucket(core, onCorrupt)
  core.compactMainRev = restored.finished
  let currentRev = restored.lastRev
  // revisions up to the watermark may all be compacted away: never report less than it
  if (currentRev < core.compactMainRev) currentRev = core.compactMainRev
  if (restored.scheduled > currentRev) currentRev = restored.scheduled
  core.headRev = currentRev
  core.committedRev = currentRev
  return restored
}

/** Reads the key bucket in revision order and rebuilds the index and the live keys' leases. */
const readKeyBucket = (
  core: StoreCore,
  onCorrupt: (e: CorruptRecord) => void
): { lastRev: number; finished: number; scheduled: number } => {
  const { backend, index, leases } = core
  const finishedBytes = backend.get("meta", FINISHED_COMPACT_KEY)
  const scheduledBytes = backend.get("meta", SCHEDULED_COMPACT_KEY)
  const finished = finishedBytes === undefined ? -1 : decodeCompactRev(finishedBytes)
  const scheduled = scheduledBytes === undefined ? -1 : decodeCompactRev(scheduledBytes)
  let lastRev = 1
  let start: Uint8Array = revToBytes(1, 0)
  for (;;) {
    let entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]>
    let bad: CorruptRecord | undefined
    try {
      entries = backend.range("key", start, undefined, RESTORE_CHUNK)
    } catch (e) {
      if (!(e instanceof CorruptRecord)) throw e
      // The records before it are sound (a range reads in order); the corrupt one comes last,
      // from its unverified bytes.
      bad = e
      onCorrupt(e)
      entries = [...backend.range("key", start, e.key), [e.key, unverified(e)]]
    }
    for (const [rk, v] of entries) {
      const main = bytesToMain(rk)
      const sub = bytesToSub(rk)
      const kv = decodeKeyValue(v)
      const k = keyString(kv.key)
      const ki = index.keyIndex(k)
      lastRev = main
      if (isTombstoneKey(rk)) {
        leases.delete(k)
        if (ki !== undefined) ki.tombstone(main, sub)
        else {
          // the only revision left of this key: its creation was compacted
          const nki = new KeyIndex(kv.key, k)
          nki.restoreTombstone(main, sub)
          index.insert(nki)
        }
        continue
      }
      if (kv.lease !== 0n) leases.set(k, kv.lease)
      else leases.delete(k)
      if (ki !== undefined) ki.put(main, sub)
      else {
        const nki = new KeyIndex(kv.key, k)
        nki.restore({ main: kv.createRevision, sub: 0 }, { main, sub }, kv.version)
        index.insert(nki)
      }
    }
    if (bad === undefined && entries.length < RESTORE_CHUNK) break
    const lastKey = entries[entries.length - 1]![0]
    start = revToBytes(bytesToMain(lastKey), bytesToSub(lastKey) + 1)
  }
  return { lastRev, finished, scheduled }
}

/** A corrupt record's value as stored, checked to decode as a KeyValue; throws naming it when it does not. */
const unverified = (e: CorruptRecord): Uint8Array => {
  const v = e.stored.subarray(0, Math.max(0, e.stored.length - CHECKSUM_BYTES))
  try {
    decodeKeyValue(v)
  } catch {
    throw new Error(`${describeCorrupt(e)}: it cannot be placed in the index`)
  }
  return v
}
