/**
 * etcd's sendFragments (v3rpc/watch.go): a response for a watcher that asked for fragments is split
 * when its encoded size reaches the limit (MaxRequestBytes + 512 KiB) and it has at least two
 * events. Every piece copies the header, id and flags, carries at least one event, and all but
 * the last are marked `fragment`; the client reassembles them.
 *
 * Sizes are computed exactly from the encodable objects (protobuf wire sizes), without encoding.
 */
import type { EventInit, KeyValueInit, ResponseHeaderInit, WatchResponseInit } from "../proto/messages.js"

/** etcd's grpcOverheadBytes: the fragment limit is MaxRequestBytes plus this. */
export const GRPC_OVERHEAD_BYTES = 512 * 1024

const varintSize = (n: number): number => {
  if (n < 0) return 10
  let s = 1
  while (n >= 128) {
    n = Math.floor(n / 128)
    s++
  }
  return s
}

const int64Size = (v: string | number | bigint): number => {
  if (typeof v === "number") return varintSize(v)
  const b = typeof v === "bigint" ? v : BigInt(v)
  if (b < 0n) return 10
  let s = 1
  let x = b
  while (x >= 128n) {
    x >>= 7n
    s++
  }
  return s
}

const bytesField = (len: number): number => 1 + varintSize(len) + len
const int64Field = (v: string | number | bigint | null | undefined): number =>
  v === undefined || v === null ? 0 : 1 + int64Size(v)
const boolField = (v: boolean | null | undefined): number => (v === undefined || v === null ? 0 : 2)
const messageField = (size: number | undefined): number => (size === undefined ? 0 : 1 + varintSize(size) + size)

const byteLength = (b: Uint8Array | null | undefined): number | undefined =>
  b === undefined || b === null ? undefined : b.byteLength

export const keyValueSize = (kv: KeyValueInit): number => {
  const key = byteLength(kv.key)
  const value = byteLength(kv.value)
  return (
    (key === undefined ? 0 : bytesField(key)) +
    int64Field(kv.create_revision) +
    int64Field(kv.mod_revision) +
    int64Field(kv.version) +
    (value === undefined ? 0 : bytesField(value)) +
    int64Field(kv.lease)
  )
}

export const eventSize = (ev: EventInit): number =>
  (ev.type === undefined || ev.type === null ? 0 : 1 + varintSize(ev.type)) +
  messageField(ev.kv === undefined || ev.kv === null ? undefined : keyValueSize(ev.kv)) +
  messageField(ev.prev_kv === undefined || ev.prev_kv === null ? undefined : keyValueSize(ev.prev_kv))

const headerSize = (h: ResponseHeaderInit): number =>
  int64Field(h.cluster_id) + int64Field(h.member_id) + int64Field(h.revision) + int64Field(h.raft_term)

/** The size of everything but the events. */
const baseSize = (r: WatchResponseInit): number =>
  messageField(r.header === undefined || r.header === null ? undefined : headerSize(r.header)) +
  int64Field(r.watch_id) +
  boolField(r.created) +
  boolField(r.canceled) +
  int64Field(r.compact_revision) +
  (r.cancel_reason === undefined || r.cancel_reason === null ? 0 : bytesField(Buffer.byteLength(r.cancel_reason))) +
  boolField(r.fragment)

/** The encoded size of a WatchResponse. */
export const watchResponseSize = (r: WatchResponseInit): number => {
  let size = baseSize(r)
  for (const ev of r.events ?? []) size += messageField(eventSize(ev))
  return size
}

/** The pieces to send for `r` (just `[r]` when it needs no splitting). */
export const fragmentResponse = (r: WatchResponseInit, limit: number): ReadonlyArray<WatchResponseInit> => {
  const events = r.events ?? []
  if (events.length < 2) return [r]
  const sizes = events.map((ev) => messageField(eventSize(ev)))
  let total = baseSize(r)
  for (const s of sizes) total += s
  if (total < limit) return [r]

  const base = baseSize({ ...r, fragment: true })
  const pieces: Array<WatchResponseInit> = []
  let idx = 0
  for (;;) {
    const start = idx
    let size = base
    while (idx < events.length) {
      size += sizes[idx]!
      if (idx - start + 1 > 1 && size >= limit) break
      idx++
    }
    const last = idx === events.length
    const piece: { -readonly [K in keyof WatchResponseInit]: WatchResponseInit[K] } = {
      ...r,
      events: events.slice(start, idx)
    }
    if (last) delete piece.fragment
    else piece.fragment = true
    pieces.push(piece)
    if (last) return pieces
  }
}
