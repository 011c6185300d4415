/**
 * WatchResponses straight to gRPC frames (etcd-watch.md §3.14 shapes, proto3 encoding).
 *
 * The fan-out hot path: one put to a key watched 10,000 times becomes 10,000 responses that differ
 * only in watch_id. So the parts are encoded once and copied: the header field once per revision,
 * an events array once (responses of one revision share the store's array), and each response is
 * `[0][len:u32be] header watch_id events` appended to one growing buffer — a whole send batch
 * becomes ONE write to the HTTP/2 stream (grpc-go coalesces its writes the same way). Rare shapes
 * (control responses, fragments) go through the proto-loader serializer into the same buffer.
 */
import { isCreate, type Event, type KeyValue } from "../mvcc/key-value.js"
import { encodeKeyValue, varintSizeNum } from "../mvcc/kv-codec.js"
import type { ResponseHeaderInit, WatchResponseInit } from "../proto/messages.js"
import type { WatchResponse } from "../watch/watcher.js"
import type { MakeHeader } from "./header.js"

/** Field tags of etcdserverpb.WatchResponse and mvccpb.Event (wire type in the low 3 bits). */
const TAG_HEADER = 0x0a
const TAG_WATCH_ID = 0x10
const TAG_CANCELED = 0x20
const TAG_COMPACT_REVISION = 0x28
const TAG_EVENTS = 0x5a
const TAG_EVENT_TYPE = 0x08
const TAG_EVENT_KV = 0x12
const TAG_EVENT_PREV_KV = 0x1a

/** gRPC's message prefix: compressed flag + big-endian length. */
export const FRAME_PREFIX_BYTES = 5

const putVarint = (b: Uint8Array, p: number, n: number): number => {
  while (n >= 0x80) {
    b[p++] = (n % 0x80) | 0x80
    n = Math.floor(n / 0x80)
  }
  b[p++] = n
  return p
}

/** int64 varint bytes (negative ids take ten bytes, as proto3 encodes them). */
const int64Varint = (n: number | bigint | string): Uint8Array => {
  let v = BigInt.asUintN(64, BigInt(n))
  const out: Array<number> = []
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
  return Uint8Array.from(out)
}

const field = (tag: number, body: Uint8Array): Uint8Array => {
  const b = new Uint8Array(1 + varintSizeNum(body.length) + body.length)
  b[0] = tag
  b.set(body, putVarint(b, 1, body.length))
  return b
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let n = 0
  for (const p of parts) n += p.length
  const b = new Uint8Array(n)
  let o = 0
  for (const p of parts) {
    b.set(p, o)
    o += p.length
  }
  return b
}

/** ResponseHeader as WatchResponse field 1 (zero fields left out). */
export const encodeHeaderField = (h: ResponseHeaderInit): Uint8Array => {
  const parts: Array<Uint8Array> = []
  const scalar = (tag: number, v: number | bigint | string | null | undefined) => {
    if (v === undefined || v === null || BigInt(v) === 0n) return
    parts.push(Uint8Array.of(tag), int64Varint(v))
  }
  scalar(0x08, h.cluster_id)
  scalar(0x10, h.member_id)
  scalar(0x18, h.revision)
  scalar(0x20, h.raft_term)
  return field(TAG_HEADER, concat(parts))
}

/** One mvccpb.Event as WatchResponse field 11. */
export const encodeEventField = (ev: Event, prevKv: KeyValue | undefined): Uint8Array => {
  const parts: Array<Uint8Array> = []
  if (ev.type !== 0) parts.push(Uint8Array.of(TAG_EVENT_TYPE, ev.type))
  parts.push(field(TAG_EVENT_KV, encodeKeyValue(ev.kv)))
  if (prevKv !== undefined) parts.push(field(TAG_EVENT_PREV_KV, encodeKeyValue(prevKv)))
  return field(TAG_EVENTS, concat(parts))
}

/** The previous KeyValue of an event (prev_kv), looked up at send time. */
export type PrevKvLookup = (key: Uint8Array, rev: number) => KeyValue | undefined

/**
 * A growing buffer of gRPC frames. `take()` hands the bytes over (for one stream write) and
 * starts a fresh buffer, since the HTTP/2 stream keeps a reference until it is flushed.
 */
export class FrameWriter {
  private buf: Buffer
  private len = 0
  /** frames written since the last take */
  count = 0
  /** start offsets of those frames (for writers that need them one by one) */
  private readonly starts: Array<number> = []

  constructor(private readonly initial = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(initial)
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.len + n) size *= 2
    const next = Buffer.allocUnsafe(size)
    this.buf.copy(next, 0, 0, this.len)
    this.buf = next
  }

  /** Appends one message given as encoded bytes. */
  message(payload: Uint8Array): void {
    this.reserve(FRAME_PREFIX_BYTES + payload.length)
    const b = this.buf
    const p = this.len
    this.starts.push(p)
    b[p] = 0
    b.writeUInt32BE(payload.length, p + 1)
    b.set(payload, p + FRAME_PREFIX_BYTES)
    this.len = p + FRAME_PREFIX_BYTES + payload.length
    this.count++
  }

  /** Appends `[0][len] a b c` without building the payload first (the hot path). */
  parts3(a: Uint8Array, b2: Uint8Array | undefined, c: Uint8Array | undefined): void {
    const n = a.length + (b2?.length ?? 0) + (c?.length ?? 0)
    this.reserve(FRAME_PREFIX_BYTES + n)
    const b = this.buf
    let p = this.len
    this.starts.push(p)
    b[p] = 0
    b.writeUInt32BE(n, p + 1)
    p += FRAME_PREFIX_BYTES
    b.set(a, p)
    p += a.length
    if (b2 !== undefined) {
      b.set(b2, p)
      p += b2.length
    }
    if (c !== undefined) {
      b.set(c, p)
      p += c.length
    }
    this.len = p
    this.count++
  }

  get byteLength(): number {
    return this.len
  }

  /** All frames as one buffer; the writer starts over. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.len)
    this.buf = Buffer.allocUnsafe(Math.max(this.initial, Math.min(this.len, 4 << 20)))
    this.len = 0
    this.count = 0
    this.starts.length = 0
    return out
  }

  /** The payloads one by one (prefix left out); the writer starts over. */
  takeMessages(): Array<Buffer> {
    const all = this.buf.subarray(0, this.len)
    const out: Array<Buffer> = new Array(this.starts.length)
    for (let i = 0; i < this.starts.length; i++) {
      const s = this.starts[i]!
      const n = all.readUInt32BE(s + 1)
      out[i] = all.subarray(s + FRAME_PREFIX_BYTES, s + FRAME_PREFIX_BYTES + n)
    }
    this.buf = Buffer.allocUnsafe(this.initial)
    this.len = 0
    this.count = 0
    this.starts.length = 0
    return out
  }
}

/**
 * Encodes one stream's responses into a FrameWriter. Caches: the header of the last revision, the
 * events bytes of the last events array seen (every watcher of a revision gets the same array
 * unless a filter or batch cut it), and watch_id fields by id.
 */
export class WatchResponseEncoder {
  private headerRev = -1
  private headerBytes: Uint8Array = new Uint8Array(0)
  private lastEvents: ReadonlyArray<Event> | undefined
  private lastEventsBytes: Uint8Array | undefined
  private readonly idFields = new Map<number, Uint8Array>()

  constructor(
    private readonly header: MakeHeader,
    private readonly serializeObject: (r: WatchResponseInit) => Uint8Array
  ) {}

  headerField(rev: number): Uint8Array {
    if (rev !== this.headerRev) {
      this.headerBytes = encodeHeaderField(this.header(rev))
      this.headerRev = rev
    }
    return this.headerBytes
  }

  private idField(id: number): Uint8Array | undefined {
    if (id === 0) return undefined
    let f = this.idFields.get(id)
    if (f === undefined) {
      f = concat([Uint8Array.of(TAG_WATCH_ID), int64Varint(id)])
      // ids are small and reused; a stream holding many watchers keeps one entry per watcher
      this.idFields.set(id, f)
    }
    return f
  }

  forget(id: number): void {
    this.idFields.delete(id)
  }

  private eventsBytes(evs: ReadonlyArray<Event>, prev: PrevKvLookup | undefined): Uint8Array | undefined {
    if (evs.length === 0) return undefined
    if (prev === undefined) {
      if (evs === this.lastEvents) return this.lastEventsBytes
      const parts: Array<Uint8Array> = new Array(evs.length)
      for (let i = 0; i < evs.length; i++) parts[i] = encodeEventField(evs[i]!, undefined)
      const bytes = evs.length === 1 ? parts[0]! : concat(parts)
      this.lastEvents = evs
      this.lastEventsBytes = bytes
      return bytes
    }
    const parts: Array<Uint8Array> = new Array(evs.length)
    for (let i = 0; i < evs.length; i++) {
      const ev = evs[i]!
      parts[i] = encodeEventField(ev, isCreate(ev) ? undefined : prev(ev.kv.key, ev.kv.modRevision - 1))
    }
    return concat(parts)
  }

  /** An mvcc response (events, progress or compaction) as one frame. */
  response(out: FrameWriter, r: WatchResponse, prev: PrevKvLookup | undefined): void {
    const head = this.headerField(r.revision)
    const id = this.idField(r.watchId)
    if (r.compactRevision !== 0) {
      const tail = concat([
        Uint8Array.of(TAG_CANCELED, 1, TAG_COMPACT_REVISION),
        int64Varint(r.compactRevision)
      ])
      out.parts3(head, id, tail)
      return
    }
    out.parts3(head, id, this.eventsBytes(r.events, prev))
  }

  /** A response built as an object (control responses, fragments). */
  object(out: FrameWriter, r: WatchResponseInit): void {
    out.message(this.serializeObject(r))
  }
}
