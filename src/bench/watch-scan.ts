/**
 * A shallow scan of etcdserverpb.WatchResponse: only what the bench counts. header(1).revision(3),
 * watch_id(2), created(3), canceled(4), compact_revision(5), cancel_reason(6), fragment(7), and for
 * each event(11) its kv(2).mod_revision(3) — plus, when asked, where kv.value(5) sits in the buffer
 * (watch-latency reads its send time there). prev_kv and everything else is skipped by length.
 *
 * One scanner per stream, reused for every message: results are fields and typed arrays that grow
 * once and are overwritten by the next scan, so scanning allocates nothing.
 */
import { PbReader } from "./pb.js"

export class WatchScanner {
  revision = 0
  watchId = 0
  created = false
  canceled = false
  compactRevision = 0
  cancelReason = ""
  fragment = false
  /** events in the last message; their data is in the first `events` slots below */
  events = 0
  modRevisions = new Float64Array(64)
  /** offset of each event's kv.value in the scanned buffer, -1 when it has none (only with `wantValues`) */
  valueStarts: Int32Array
  valueLengths: Int32Array
  private readonly r = new PbReader()

  constructor(readonly wantValues: boolean) {
    // A run may hold thousands of streams, each with a scanner: no value arrays unless asked for.
    this.valueStarts = new Int32Array(wantValues ? 64 : 0)
    this.valueLengths = new Int32Array(wantValues ? 64 : 0)
  }

  scan(buf: Uint8Array, start: number, end: number): void {
    const r = this.r
    r.reset(buf, start, end)
    this.revision = 0
    this.watchId = 0
    this.created = false
    this.canceled = false
    this.compactRevision = 0
    this.cancelReason = ""
    this.fragment = false
    this.events = 0
    while (r.pos < end) {
      const tag = r.varint()
      switch (tag) {
        case 0x0a: // header
          this.revision = headerRevision(r, r.delimitedEnd())
          break
        case 0x10:
          this.watchId = r.varint()
          break
        case 0x18:
          this.created = r.varint() !== 0
          break
        case 0x20:
          this.canceled = r.varint() !== 0
          break
        case 0x28:
          this.compactRevision = r.varint()
          break
        case 0x32: {
          const stop = r.delimitedEnd()
          this.cancelReason = r.utf8(r.pos, stop)
          r.pos = stop
          break
        }
        case 0x38:
          this.fragment = r.varint() !== 0
          break
        case 0x5a:
          this.eventRun(r)
          break
        default:
          r.skip(tag & 7)
      }
    }
    if (r.pos !== end) throw new RangeError("WatchResponse: field overran the message")
  }

  /**
   * A run of consecutive events (the reader stands after the first one's tag). The fast path reads
   * Go's field order — event{type?, kv{key, create_revision, mod_revision, ...}} — with local
   * variables only: this runs millions of times a second. Anything else (and value positions for
   * watch-latency) takes the general path.
   */
  private eventRun(r: PbReader): void {
    const buf = r.buf
    const end = r.end
    const fast = !this.wantValues
    let revisions = this.modRevisions
    let n = this.events
    let p = r.pos
    for (;;) {
      let b = buf[p++]!
      let length = b & 0x7f
      for (let shift = 7; b >= 0x80; shift += 7) {
        b = buf[p++]!
        length |= (b & 0x7f) << shift
      }
      const stop = p + length
      if (stop > end) throw new RangeError("WatchResponse: event beyond message end")
      if (n === revisions.length) {
        this.grow()
        revisions = this.modRevisions
      }
      const revision = fast ? fastModRevision(buf, p, stop) : -1
      if (revision > 0) {
        revisions[n++] = revision
      } else {
        r.pos = p
        this.events = n
        this.eventGeneral(r, stop, n++)
      }
      p = stop
      if (p < end && buf[p] === 0x5a) p++
      else break
    }
    this.events = n
    r.pos = p
  }

  private eventGeneral(r: PbReader, stop: number, i: number): void {
    let modRevision = 0
    let valueStart = -1
    let valueLength = 0
    while (r.pos < stop) {
      const tag = r.varint()
      if (tag !== 0x12) {
        r.skip(tag & 7) // type(1), prev_kv(3)
        continue
      }
      const kvEnd = r.delimitedEnd()
      while (r.pos < kvEnd) {
        const t = r.varint()
        if (t === 0x18) {
          modRevision = r.varint()
          if (!this.wantValues) break
        } else if (t === 0x2a) {
          valueLength = r.varint()
          valueStart = r.pos
          r.pos += valueLength
        } else {
          r.skip(t & 7)
        }
      }
      break // kv read: prev_kv, if any, is not needed
    }
    if (r.pos > stop) throw new RangeError("WatchResponse: event overran its length")
    r.pos = stop
    this.modRevisions[i] = modRevision
    if (this.wantValues) {
      this.valueStarts[i] = valueStart
      this.valueLengths[i] = valueLength
    }
    this.events = i + 1
  }

  private grow(): void {
    const n = this.modRevisions.length * 2
    const revisions = new Float64Array(n)
    revisions.set(this.modRevisions)
    this.modRevisions = revisions
    if (!this.wantValues) return
    const starts = new Int32Array(n)
    starts.set(this.valueStarts)
    this.valueStarts = starts
    const lengths = new Int32Array(n)
    lengths.set(this.valueLengths)
    this.valueLengths = lengths
  }
}

/**
 * kv.mod_revision of the event in buf[p, stop) when it is laid out as Go writes it, else -1 (the
 * caller then takes the general path).
 */
const fastModRevision = (buf: Uint8Array, p: number, stop: number): number => {
  if (buf[p] === 0x08) {
    // type
    p++
    while (buf[p++]! >= 0x80) {}
  }
  if (buf[p] !== 0x12) return -1
  p++
  while (buf[p++]! >= 0x80) {} // kv length: the event's own length bounds it
  if (buf[p] === 0x0a) {
    // key
    p++
    let b = buf[p++]!
    let length = b & 0x7f
    for (let shift = 7; b >= 0x80; shift += 7) {
      b = buf[p++]!
      length |= (b & 0x7f) << shift
    }
    p += length
  }
  if (buf[p] === 0x10) {
    // create_revision
    p++
    while (buf[p++]! >= 0x80) {}
  }
  if (buf[p] !== 0x18 || p >= stop) return -1
  p++
  let b = buf[p++]!
  let revision = b & 0x7f
  for (let scale = 128; b >= 0x80; scale *= 128) {
    b = buf[p++]!
    revision += (b & 0x7f) * scale
  }
  return p <= stop && revision > 0 ? revision : -1
}

/** ResponseHeader.revision(3) of the header that ends at `stop`; leaves the reader at `stop`. */
export const headerRevision = (r: PbReader, stop: number): number => {
  let revision = 0
  while (r.pos < stop) {
    const tag = r.varint()
    if (tag === 0x18) revision = r.varint()
    else r.skip(tag & 7)
  }
  if (r.pos !== stop) throw new RangeError("ResponseHeader: field overran its length")
  return revision
}
