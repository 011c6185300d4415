/**
 * The watch side of the watch scenarios: `streams` Watch streams (stream s on connection
 * s % conns), `perStream` watchers created on each, and per-watcher accounting of what arrives.
 *
 * The hot path is one synchronous callback per gRPC message: a shallow scan (watch-scan.ts), then
 * counters in typed arrays indexed by the watcher's slot — events counted and the last revision
 * seen, which must strictly increase. Slots are given out in `created` order per stream (etcd
 * answers a stream's creates in order) and found from the watch id through an Int32Array (ids are
 * small, counted from 0 per stream by etcd and by us), with a Map for any other id.
 *
 * Errors are counted, never dropped: a refused create, events for an unknown watch id, a revision
 * that does not increase. A watcher canceled by the server or a stream that ends breaks the run
 * (its events would never come): that is reported to the Breakage, which fails the phase.
 */
import type { BidiStream, GrpcConnection } from "../h2/grpc-client.js"
import type { Breakage } from "./phase.js"
import { WATCH } from "./requests.js"
import type { Tally } from "./result.js"
import { WatchScanner } from "./watch-scan.js"

export interface WatcherSetSpec {
  readonly streams: number
  readonly perStream: number
  /** the WatchRequest frame that creates watcher n of stream s */
  readonly create: (stream: number, n: number) => Uint8Array
  /** watch-latency: the scanner also reports where each event's value is */
  readonly wantValues?: boolean
  /** extra work per message with events, after counting (watch-latency's send times) */
  readonly onEvents?: (scanner: WatchScanner, buf: Uint8Array) => void
}

/** Creates are written in batches of about this many bytes: few writes, no giant buffer. */
const WRITE_BATCH = 64 * 1024

export class WatcherSet {
  readonly total: number
  /** create requests answered (created or refused) */
  answered = 0
  created = 0
  /** events counted over all watchers */
  events = 0
  /** events per watcher slot */
  readonly counts: Uint32Array
  /** the last mod_revision per watcher slot */
  readonly lastRevisions: Float64Array
  /** called after every create answer and every message with events: the phase checks its goal */
  notify: () => void = () => {}

  private readonly createdOn: Int32Array
  private readonly fastSlots: Array<Int32Array>
  private readonly slowSlots: Array<Map<number, number>>
  private readonly bidis: Array<BidiStream> = []
  private closing = false

  constructor(
    private readonly spec: WatcherSetSpec,
    private readonly tally: Tally,
    private readonly breakage: Breakage
  ) {
    this.total = spec.streams * spec.perStream
    this.counts = new Uint32Array(this.total)
    this.lastRevisions = new Float64Array(this.total)
    this.createdOn = new Int32Array(spec.streams)
    this.fastSlots = Array.from({ length: spec.streams }, () => new Int32Array(spec.perStream * 2 + 64))
    this.slowSlots = Array.from({ length: spec.streams }, () => new Map())
  }

  /** Opens every stream and writes all its creates. */
  open(conns: ReadonlyArray<GrpcConnection>): void {
    for (let s = 0; s < this.spec.streams; s++) {
      const scanner = new WatchScanner(this.spec.wantValues === true)
      const bidi = conns[s % conns.length]!.bidi(WATCH, {
        onMessage: (buf, start, end) => this.onMessage(s, scanner, buf, start, end),
        onClose: (code, message) => {
          if (!this.closing)
            this.breakage.report(`watch stream ${s} ended: ${message === "" ? `gRPC status ${code}` : message}`)
        }
      })
      this.bidis.push(bidi)
      this.writeCreates(s, bidi)
    }
  }

  /** Resets every stream (the server drops their watchers). */
  close(): void {
    this.closing = true
    for (const b of this.bidis) b.close()
  }

  /** After the phase: every watcher must have exactly `expected` events. */
  verify(expected: number): void {
    for (let slot = 0; slot < this.total; slot++) {
      const n = this.counts[slot]!
      if (n !== expected) this.tally.error(`watcher ${slot} received ${n} events, expected ${expected}`)
    }
  }

  private writeCreates(s: number, bidi: BidiStream): void {
    let batch: Array<Uint8Array> = []
    let bytes = 0
    for (let n = 0; n < this.spec.perStream; n++) {
      const frame = this.spec.create(s, n)
      batch.push(frame)
      bytes += frame.length
      if (bytes >= WRITE_BATCH) {
        bidi.write(Buffer.concat(batch, bytes))
        batch = []
        bytes = 0
      }
    }
    if (bytes > 0) bidi.write(Buffer.concat(batch, bytes))
  }

  private onMessage(s: number, scanner: WatchScanner, buf: Uint8Array, start: number, end: number): void {
    scanner.scan(buf, start, end)
    if (scanner.events > 0) this.onEvents(s, scanner, buf)
    else if (scanner.created) this.onCreated(s, scanner)
    else if (scanner.canceled) {
      this.tally.error(`watch ${scanner.watchId} canceled: ${scanner.cancelReason}`)
      this.breakage.report(
        `watch ${scanner.watchId} on stream ${s} canceled by the server: ${scanner.cancelReason || "no reason given"}` +
          (scanner.compactRevision > 0 ? ` (compact revision ${scanner.compactRevision})` : "")
      )
    }
    // anything else (progress notifications) is not counted
  }

  private onCreated(s: number, scanner: WatchScanner): void {
    this.answered++
    if (scanner.canceled) {
      this.tally.error(`watch create refused: ${scanner.cancelReason || "no reason given"}`)
    } else if (this.createdOn[s]! >= this.spec.perStream) {
      this.tally.error(`stream ${s}: more created responses than creates`)
    } else {
      const slot = s * this.spec.perStream + this.createdOn[s]!++
      const id = scanner.watchId
      const fast = this.fastSlots[s]!
      if (id >= 0 && id < fast.length) fast[id] = slot + 1
      else this.slowSlots[s]!.set(id, slot)
      this.created++
    }
    this.notify()
  }

  private onEvents(s: number, scanner: WatchScanner, buf: Uint8Array): void {
    const id = scanner.watchId
    const fast = this.fastSlots[s]!
    const slot = id >= 0 && id < fast.length ? fast[id]! - 1 : (this.slowSlots[s]!.get(id) ?? -1)
    if (slot < 0) {
      this.tally.error(`stream ${s}: events for watch id ${id}, which was never created`)
      return
    }
    const n = scanner.events
    const revisions = scanner.modRevisions
    let last = this.lastRevisions[slot]!
    for (let i = 0; i < n; i++) {
      const r = revisions[i]!
      if (r <= last) this.tally.error(`watcher ${slot}: revision ${r} after ${last}`)
      last = r
    }
    this.lastRevisions[slot] = last
    this.counts[slot]! += n
    this.events += n
    this.spec.onEvents?.(scanner, buf)
    this.notify()
  }
}
