/**
 * A read that met a record whose checksum fails (the backend throws a CorruptRecord,
 * value-checksum.ts): the request fails with etcd's data-loss error ("etcdserver: corrupt
 * cluster", DataLoss) and the record is logged with its key and revision; the bytes are never
 * served. The server raises the CORRUPT alarm when it sees that error (src/server/corrupt-check.ts).
 */
import { CorruptRecord } from "../backend/backend.js"
import { EtcdError, Errors } from "../errors.js"
import { bytesToMain, bytesToSub, decodeKeyValue } from "./kv-codec.js"
import { CHECKSUM_BYTES } from "../backend/value-checksum.js"

/** The key a corrupt KeyValue names, as far as its (unverified) bytes still decode; undefined when not. */
const guessKey = (stored: Uint8Array): string | undefined => {
  try {
    return JSON.stringify(
      Buffer.from(decodeKeyValue(stored.subarray(0, stored.length - CHECKSUM_BYTES)).key).toString()
    )
  } catch {
    return undefined
  }
}

/** One line naming the record: for the key bucket its revision and (unverified) key. */
export const describeCorrupt = (e: CorruptRecord): string => {
  if (e.bucket === "key" && e.key.length >= 17) {
    const key = guessKey(e.stored)
    return `corrupt record (checksum mismatch) at revision ${bytesToMain(e.key)}.${bytesToSub(e.key)}, key ${key ?? "unreadable"} (as stored, unverified)`
  }
  return `corrupt record (checksum mismatch) in bucket ${e.bucket} at key ${Buffer.from(e.key).toString("hex")}`
}

/**
 * The error a read fails with for `e`: etcd's corrupt-cluster error for a corrupt record (logged
 * through `log`), the EtcdError itself, or undefined for anything else (a defect).
 */
export const readError = (e: unknown, log: (message: string, cause: unknown) => void): EtcdError | undefined => {
  if (e instanceof EtcdError) return e
  if (e instanceof CorruptRecord) {
    log(`mvcc: ${describeCorrupt(e)}; the request fails, nothing is served`, e.message)
    return Errors.corrupt()
  }
  return undefined
}
