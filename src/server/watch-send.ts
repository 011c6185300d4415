/**
 * The send side of a Watch stream (etcd's v3rpc/watch.go, sendLoop's body): what becomes of each
 * response taken from the mvcc WatchStream's channel, and of each control response.
 *
 * Rules of the writes: a response for an id whose created response is not out yet waits in
 * `pending` and is flushed right after it; after an id's cancel response nothing more is sent for
 * it (what is left of it is dropped); a response for watch id -1 (requested progress) is never
 * held. A watcher that asked for fragments gets large responses cut at the stream's limit. prev_kv
 * is looked up at send time: the key's KeyValue at modRevision-1, for every event that is not a
 * create. The progress flags say which watchers were quiet since the last tick of the ticker.
 */
import type { Chunk } from "effect"
import { isCreate } from "../mvcc/key-value.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import type { EventInit, WatchResponseInit } from "../proto/messages.js"
import { serviceDefinition } from "../proto/load.js"
import { WatchIdSet } from "../watch/watch-id-map.js"
import type { WatchStream } from "../watch/watch-stream.js"
import type { WatchId, WatchResponse } from "../watch/watcher.js"
import type { MakeHeader } from "./header.js"
import { eventToPb } from "./kv-pb.js"
import { fragmentResponse } from "./watch-fragments.js"
import { type FrameWriter, type PrevKvLookup, WatchResponseEncoder } from "./watch-wire.js"

/** The id of a response that belongs to no single watcher (requested progress). */
export const INVALID_WATCH_ID = -1

/** WatchResponse's created / canceled flags (fields 3 and 4), after its header and watch_id */
const CREATED_TAIL = Uint8Array.of(0x18, 1)
const CANCELED_TAIL = Uint8Array.of(0x20, 1)

/** created: a watch announced; canceled: a cancel ack; failed: a create that failed (id -1). */
export type CtrlKind = "created" | "canceled" | "failed"

/** proto-loader's WatchResponse encoder, for the rare responses built as objects. */
const serializeWatchResponse = (() => {
  const serialize = serviceDefinition("Watch")["Watch"]!.responseSerialize
  return (r: WatchResponseInit): Uint8Array => serialize(r)
})()

export type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * The per-stream state that etcd guards with `sws.mu` (progress, fragment; prev_kv is the mvcc
 * watcher's own flag) plus the send loop's `ids` and `pending`. JS runs one fiber at a time and
 * every access here is synchronous, so no lock is needed. (The tests drive it directly.)
 */
export class StreamState {
  /** watch id → true when no event response went out for it since the last tick */
  readonly progress = new Map<WatchId, boolean>()
  readonly fragment = new Set<WatchId>()
  /** ids whose created response has been sent and whose cancel response has not (an array slot each) */
  readonly announced = new WatchIdSet()
  /** responses waiting for their id's created response (encoded when they go out) */
  readonly pending = new Map<WatchId, Array<WatchResponse>>()
  readonly encoder: WatchResponseEncoder
  private readonly getAt: PrevKvLookup

  constructor(
    /**
     * The mvcc stream's own view of its watchers. It changes in the same synchronous step that
     * registers or cancels a watcher, so it is never behind the responses in the channel (flags
     * recorded here by the recv side after `watch` returns could be).
     */
    readonly watchers: Pick<WatchStream, "ids" | "prevKv">,
    readonly store: Pick<MvccStoreShape, "getAt">,
    readonly header: MakeHeader,
    readonly fragmentLimit: number,
    serialize: (r: WatchResponseInit) => Uint8Array = serializeWatchResponse
  ) {
    this.encoder = new WatchResponseEncoder(header, serialize)
    this.getAt = (key, rev) => this.store.getAt(key, rev)
  }

  /** mvcc response → wire object (prev_kv looked up now, at send time); for fragmenting. */
  toWire(r: WatchResponse): WatchResponseInit {
    const o: Mutable<WatchResponseInit> = { header: this.header(r.revision) }
    if (r.watchId !== 0) o.watch_id = r.watchId
    if (r.compactRevision !== 0) {
      o.canceled = true
      o.compact_revision = r.compactRevision
    }
    const evs = r.events
    if (evs.length !== 0) {
      const out: Array<EventInit> = new Array(evs.length)
      if (this.watchers.prevKv(r.watchId)) {
        const getAt = this.store.getAt
        for (let i = 0; i < evs.length; i++) {
          const ev = evs[i]!
          out[i] = eventToPb(ev, isCreate(ev) ? undefined : getAt(ev.kv.key, ev.kv.modRevision - 1))
        }
      } else {
        for (let i = 0; i < evs.length; i++) out[i] = eventToPb(evs[i]!, undefined)
      }
      o.events = out
    }
    return o
  }

  /** One response encoded into `out` (prev_kv looked up now, at send time). */
  private send(r: WatchResponse, out: FrameWriter): void {
    this.encoder.response(out, r, this.watchers.prevKv(r.watchId) ? this.getAt : undefined)
  }

  /** One batch from the watch channel, appended to `out` in order. */
  onEvents(batch: Chunk.Chunk<WatchResponse>, out: FrameWriter): void {
    /** the live ids, read once per batch and only when needed (nothing changes within a batch) */
    let live: ReadonlySet<WatchId> | undefined
    for (const r of batch) {
      const id = r.watchId
      if (id !== INVALID_WATCH_ID && !this.announced.has(id)) {
        // Not announced yet: hold it for the created response. Not registered any more: it belongs
        // to a cancelled watcher, whose cancel response has gone or is about to go; drop it.
        live ??= new Set(this.watchers.ids())
        if (live.has(id)) {
          let held = this.pending.get(id)
          if (held === undefined) this.pending.set(id, (held = []))
          held.push(r)
        }
        continue
      }
      if (this.fragment.has(id)) {
        for (const piece of fragmentResponse(this.toWire(r), this.fragmentLimit)) this.encoder.object(out, piece)
      } else {
        this.send(r, out)
      }
      if (r.events.length > 0 && this.progress.get(id) === true) this.progress.set(id, false)
    }
  }

  /** A control response, appended to `out`, then etcd's id bookkeeping. */
  onCtrl(id: WatchId, kind: CtrlKind, response: WatchResponseInit, out: FrameWriter): void {
    this.encoder.object(out, response)
    this.afterCtrl(id, kind, out)
  }

  /** A created or canceled response framed by hand (header, watch_id, the flag: what proto-loader writes). */
  onCtrlFlag(id: WatchId, kind: "created" | "canceled", rev: number, out: FrameWriter): void {
    out.response(this.encoder.headerField(rev), id, kind === "created" ? CREATED_TAIL : CANCELED_TAIL)
    this.afterCtrl(id, kind, out)
  }

  private afterCtrl(id: WatchId, kind: CtrlKind, out: FrameWriter): void {
    if (kind === "canceled") {
      this.announced.delete(id)
      this.pending.delete(id)
    } else if (kind === "created") {
      this.announced.add(id)
      const held = this.pending.get(id)
      if (held !== undefined) {
        // flushed as they are, unfragmented (etcd sends pending responses with a plain Send)
        for (const r of held) this.send(r, out)
        this.pending.delete(id)
      }
    }
  }

  /** The progress ticker: ids to ask for a progress response; every flag is reset to true. */
  onTick(): Array<WatchId> {
    const ids: Array<WatchId> = []
    for (const [id, quiet] of this.progress) {
      if (quiet) ids.push(id)
      this.progress.set(id, true)
    }
    return ids
  }
}
