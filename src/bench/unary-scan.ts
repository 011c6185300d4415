/**
 * Shallow scans of the unary answers the bench checks: the revision a Put committed at
 * (PutResponse.header(1).revision(3)) and how many kvs(2) a RangeResponse carries.
 */
import { PbReader } from "./pb.js"
import { headerRevision } from "./watch-scan.js"

const reader = new PbReader()

/** header.revision of a PutResponse (or any response whose header is field 1); 0 when absent. */
export const responseRevision = (buf: Uint8Array, start: number, end: number): number => {
  reader.reset(buf, start, end)
  let revision = 0
  while (reader.pos < end) {
    const tag = reader.varint()
    if (tag === 0x0a) revision = headerRevision(reader, reader.delimitedEnd())
    else reader.skip(tag & 7)
  }
  return revision
}

/** The number of kvs in a RangeResponse. */
export const rangeKvCount = (buf: Uint8Array, start: number, end: number): number => {
  reader.reset(buf, start, end)
  let kvs = 0
  while (reader.pos < end) {
    const tag = reader.varint()
    if (tag === 0x12) kvs++
    reader.skip(tag & 7)
  }
  return kvs
}
