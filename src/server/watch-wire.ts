/**
 * WatchResponses straight to gRPC frames (the WatchResponse of proto/rpc.proto, proto3 encoding).
 *
 * The fan-out hot path: one put to a key watched 10,000 times becomes 10,000 responses that differ
 * only in watch_id. So the parts are encoded once and copied: the header field once per revision,
 * an events array once (responses of one revision share the store's array), and each response is
 * `[0][len:u32be] header watch_id events` appended to 64 KiB chunks — a whole send batch becomes
 * a few large writes to the HTTP/2 stream (grpc-go coalesces its writes the same way). Rare shapes
 * (control responses, fragments) go through the proto-loader serializer into the same buffer.
 */
import { isCreate, type Event, type KeyValue } from "../mvcc/key-value.js"
import {
  encodeKeyValue,
  putVarintBig,
  putVarintNum as putVarint,
  varintSizeBig,
  varintSizeNum
} from "../mvcc/kv-codec.js"
import type { ResponseHeaderInit, WatchResponseInit } from "../proto/messages.js"
import type { WatchId, WatchResponse } from "../watch/watcher.js"
import type { MakeHeader } from "./header.js"
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "../h2/grpc-message-prefix.js"

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
export const FRAME_PREFIX_BYTES = GRPC_PREFIX_BYTES

/** int64 varint bytes (negative ids take ten bytes, as proto3 encodes them). */
const int64Varint = (n: number | bigint | string): Uint8Array => {
  const v = BigInt(n)
  const b = new Uint8Array(varintSizeBig(v))
  putVarintBig(b, 0, v)
  return b
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

/** One mvccpb.Event as WatchResponse field 11, in one allocation. */
export const encodeEventField = (ev: Event, prevKv: KeyValue | undefined): Uint8Array => {
  const kv = encodeKeyValue(ev.kv)
  const prev = prevKv === undefined ? undefined : encodeKeyValue(prevKv)
  const body =
    (ev.type !== 0 ? 2 : 0) +
    1 +
    varintSizeNum(kv.length) +
    kv.length +
    (prev === undefined ? 0 : 1 + varintSizeNum(prev.length) + prev.length)
  const b = new Uint8Array(1 + varintSizeNum(body) + body)
  b[0] = TAG_EVENTS
  let p = putVarint(b, 1, body)
  if (ev.type !== 0) {
    b[p++] = TAG_EVENT_TYPE
    b[p++] = ev.type
  }
  b[p++] = TAG_EVENT_KV
  p = putVarint(b, p, kv.length)
  b.set(kv, p)
  p += kv.length
  if (prev !== undefined) {
    b[p++] = TAG_EVENT_PREV_KV
    p = putVarint(b, p, prev.length)
    b.set(prev, p)
  }
  return b
}

/**
 * Events are immutable and shared: by every watcher of a revision, by the batches held for
 * victims, by the watchers of one catch-up round. Their bytes (without prev_kv) are kept with them.
 */
const eventFields = new WeakMap<Event, Uint8Array>()

export const eventField = (ev: Event): Uint8Array => {
  let b = eventFields.get(ev)
  if (b === undefined) {
    b = encodeEventField(ev, undefined)
    eventFields.set(ev, b)
  }
  return b
}

/**
 * An events array's bytes (without prev_kv), kept with the array: the watchers of one key caught
 * up together share one array (watch/watchable-store.ts, SyncRound), as do the victims of one
 * revision, but other streams' responses come in between.
 */
const eventsFields = new WeakMap<ReadonlyArray<Event>, Uint8Array>()

/**
 * Catch-up batches are built per watcher, so watchers of one round hold equal arrays that are not
 * the same array; comparing element identities is far cheaper than encoding them again.
 */
const sameEvents = (a: ReadonlyArray<Event>, b: ReadonlyArray<Event> | undefined): boolean => {
  if (b === undefined || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The previous KeyValue of an event (prev_kv), looked up at send time. */
export type PrevKvLookup = (key: Uint8Array, rev: number) => KeyValue | undefined

/** Frames are appended to chunks of this size (a larger frame gets a chunk of its own). */
const CHUNK_BYTES = 64 * 1024

/**
 * A response's events of at least this many bytes are not copied into a chunk: the frame's
 * prefix, header and watch_id go to the chunk and the events bytes follow as a piece of their own
 * (the same bytes for every watcher of a catch-up round; the socket's writev gathers them).
 * Copying them was a third of the fan-out's server CPU: catch-up and victim responses carry up to
 * 1,000 revisions, and a frame larger than a chunk took a fresh buffer of its own, page faults,
 * external memory and the GC it brings (bench:compare --only watch --cpu-prof, 2026-11-26).
 */
const REF_BYTES = 1024

/**
 * The chunk frames are written to, shared by every FrameWriter that has no chunk size of its own
 * (all of a server's watch streams): a writer writes at `used` and hands what it wrote over as a
 * window on the chunk, so a batch of a few control responses takes a few bytes of a chunk, not a
 * 64 KiB chunk of its own (watch-create wrote one response per turn per stream), and an idle stream
 * holds no buffer. JS runs one writer at a time; a writer continues where it left off only when no
 * other wrote after it.
 */
class Slab {
  buf: Buffer | undefined = undefined
  used = 0
  constructor(readonly size: number) {}
}

const sharedSlab = new Slab(CHUNK_BYTES)

/**
 * gRPC frames appended to a list of pieces: windows on 64 KiB chunks (`Slab`) that are never
 * regrown (growing one buffer copied every byte again at each doubling: a tenth of the fan-out's
 * CPU), and large events bytes by reference (`REF_BYTES`); a frame's own bytes never span two
 * chunks. `take()` hands the pieces over (for the HTTP/2 stream, which keeps them until flushed)
 * and starts over with nothing held.
 */
export class FrameWriter {
  private readonly full: Array<Buffer> = []
  private readonly slab: Slab
  private buf: Buffer | undefined
  private len = 0
  /** where the part of `buf` not handed to `full` yet starts */
  private from = 0
  /** frames written since the last take */
  count = 0

  /** `chunkBytes`: chunks of this writer's own (tests); without it, the shared 64 KiB chunks */
  constructor(
    chunkBytes?: number,
    private readonly refBytes = REF_BYTES
  ) {
    this.slab = chunkBytes === undefined ? sharedSlab : new Slab(chunkBytes)
  }

  /** Room for `n` contiguous bytes; returns the chunk to write them at offset `this.len`. */
  private reserve(n: number): Buffer {
    const slab = this.slab
    const b = this.buf
    if (b !== undefined && b === slab.buf && this.len === slab.used && slab.used + n <= b.length) return b
    this.cut()
    if (n > slab.size) {
      // a frame larger than a chunk gets a buffer of its own; the shared chunk stays as it is
      this.buf = Buffer.allocUnsafe(n)
      this.len = this.from = 0
      return this.buf
    }
    if (slab.buf === undefined || slab.used + n > slab.buf.length) {
      slab.buf = Buffer.allocUnsafe(slab.size)
      slab.used = 0
    }
    this.buf = slab.buf
    this.len = this.from = slab.used
    return slab.buf
  }

  /** The frame's bytes end at `p`. */
  private advance(p: number): void {
    this.len = p
    if (this.buf === this.slab.buf) this.slab.used = p
  }

  /** What was written to the chunk since the last cut becomes a piece. */
  private cut(): void {
    if (this.buf !== undefined && this.len > this.from) {
      this.full.push(this.buf.subarray(this.from, this.len))
      this.from = this.len
    }
  }

  /** Appends one message given as encoded bytes. */
  message(payload: Uint8Array): void {
    const b = this.reserve(FRAME_PREFIX_BYTES + payload.length)
    const p = this.len
    this.count++
    writeGrpcPrefix(b, p, payload.length)
    b.set(payload, p + FRAME_PREFIX_BYTES)
    this.advance(p + FRAME_PREFIX_BYTES + payload.length)
  }

  /** Appends `[0][len] head watch_id tail` without building the payload first (the hot path). */
  response(head: Uint8Array, watchId: WatchId, tail: Uint8Array | undefined): void {
    // ids beyond ±(2^53 − 1) are bigints (see WatchId): rare, one typeof apart from the number path
    const big = typeof watchId !== "number"
    const idLen = watchId === 0 ? 0 : 1 + (big ? varintSizeBig(watchId) : varintSizeNum(watchId))
    const tailLen = tail === undefined ? 0 : tail.length
    const n = head.length + idLen + tailLen
    const byRef = tailLen >= this.refBytes
    const b = this.reserve(FRAME_PREFIX_BYTES + n - (byRef ? tailLen : 0))
    this.count++
    let p = this.len
    writeGrpcPrefix(b, p, n)
    p += FRAME_PREFIX_BYTES
    b.set(head, p)
    p += head.length
    if (idLen !== 0) {
      b[p++] = TAG_WATCH_ID
      p = big ? putVarintBig(b, p, watchId) : putVarint(b, p, watchId)
    }
    if (byRef) {
      this.advance(p)
      this.cut()
      this.full.push(Buffer.isBuffer(tail) ? tail : Buffer.from(tail!.buffer, tail!.byteOffset, tailLen))
      return
    }
    if (tail !== undefined) {
      b.set(tail, p)
      p += tailLen
    }
    this.advance(p)
  }

  /** bytes written since the last take */
  get byteLength(): number {
    let n = this.len - this.from
    for (const c of this.full) n += c.length
    return n
  }

  /** All frames, as the pieces they were written to; the writer starts over. */
  take(): Array<Buffer> {
    this.cut()
    const out = this.full.splice(0)
    this.buf = undefined
    this.len = this.from = 0
    this.count = 0
    return out
  }

  /** The payloads one by one (prefix left out); the writer starts over. */
  takeMessages(): Array<Buffer> {
    const pieces = this.take()
    const all = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
    const out: Array<Buffer> = []
    for (let p = 0; p < all.length;) {
      const n = all.readUInt32BE(p + 1)
      out.push(all.subarray(p + FRAME_PREFIX_BYTES, p + FRAME_PREFIX_BYTES + n))
      p += FRAME_PREFIX_BYTES + n
    }
    return out
  }
}

/**
 * Encodes one stream's responses into a FrameWriter. Caches: the header of the last revision and
 * the events bytes of the last events array seen (every watcher of a revision gets the same array
 * unless a filter or batch cut it); each event's own bytes live in `eventFields`.
 */
export class WatchResponseEncoder {
  private headerRev = -1
  private headerBytes: Uint8Array = new Uint8Array(0)
  /** more header fields, by revision: victim retries and catch-ups of one batch carry several */
  private readonly headers = new Map<number, Uint8Array>()
  private lastEvents: ReadonlyArray<Event> | undefined
  private lastEventsBytes: Uint8Array | undefined

  constructor(
    private readonly header: MakeHeader,
    private readonly serializeObject: (r: WatchResponseInit) => Uint8Array
  ) {}

  headerField(rev: number): Uint8Array {
    if (rev !== this.headerRev) {
      let b = this.headers.get(rev)
      if (b === undefined) {
        if (this.headers.size >= 64) this.headers.clear()
        b = encodeHeaderField(this.header(rev))
        this.headers.set(rev, b)
      }
      this.headerBytes = b
      this.headerRev = rev
    }
    return this.headerBytes
  }

  private eventsBytes(evs: ReadonlyArray<Event>, prev: PrevKvLookup | undefined): Uint8Array | undefined {
    if (evs.length === 0) return undefined
    if (prev === undefined) {
      if (evs === this.lastEvents || sameEvents(evs, this.lastEvents)) return this.lastEventsBytes
      let bytes: Uint8Array | undefined
      if (evs.length === 1) bytes = eventField(evs[0]!)
      else if ((bytes = eventsFields.get(evs)) === undefined) {
        const parts: Array<Uint8Array> = new Array(evs.length)
        for (let i = 0; i < evs.length; i++) parts[i] = eventField(evs[i]!)
        bytes = concat(parts)
        eventsFields.set(evs, bytes)
      }
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
    if (r.compactRevision !== 0) {
      const tail = concat([Uint8Array.of(TAG_CANCELED, 1, TAG_COMPACT_REVISION), int64Varint(r.compactRevision)])
      out.response(head, r.watchId, tail)
      return
    }
    out.response(head, r.watchId, this.eventsBytes(r.events, prev))
  }

  /** A response built as an object (control responses, fragments). */
  object(out: FrameWriter, r: WatchResponseInit): void {
    out.message(this.serializeObject(r))
  }
}
