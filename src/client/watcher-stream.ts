/**
 * One watch on a shared gRPC stream (clientv3's `watcherStream` + `serveSubstream`): its request,
 * its watch id on the current connection, where it resumes, and the buffer its consumer reads.
 *
 * Everything here runs synchronously inside the stream's dispatch (a grpc-js callback or one
 * Effect.sync); there is no fiber per watch and no Effect per response.
 */
import { Exit } from "effect"
import type { WatchBuffer } from "./watch-buffer.js"
import { encodeCreateRequest } from "./watch-codec.js"
import type { WatchError } from "./watch-errors.js"
import type { WatchSpec } from "./watch-options.js"
import type { WatchResponse, WireWatchResponse } from "./watch-response.js"
import { isProgressNotify } from "./watch-response.js"

export class WatcherStream {
  /** watch id on the current connection; -1 while (re)registering */
  id = -1
  /**
   * The revision a (re)creation starts from: last event's mod_revision + 1, or a progress
   * header revision + 1, or for a start-at-0 watch the created header revision. Never decreases.
   */
  nextRev: bigint
  /** highest revision delivered in an event; later events at or below it are duplicates */
  private deliveredRev = 0n
  private createdOnce = false
  /** responses dispatched in this turn of the event loop, not yet handed to the consumer */
  private pending: Array<WatchResponse> = []
  closed = false

  constructor(
    readonly spec: WatchSpec,
    readonly buffer: WatchBuffer<WatchResponse, WatchError>,
    /** called (synchronously) when `pending` goes from empty to not: schedule a `flush` */
    private readonly onPending: (ws: WatcherStream) => void
  ) {
    this.nextRev = spec.startRevision
    // Nothing before the requested start belongs to this watch (guards against old servers that
    // replay history before a future start revision).
    if (spec.startRevision > 0n) this.deliveredRev = spec.startRevision - 1n
  }

  /** The create request that (re)registers this watch from where it is. */
  createRequest(): Buffer {
    return encodeCreateRequest({ ...this.spec.fields, startRevision: this.nextRev })
  }

  /** The created response for this watch. */
  created(resp: WireWatchResponse): void {
    if (this.createdOnce) return
    this.createdOnce = true
    // A start-at-0 watch begins at the server's revision: resuming must not start any later.
    if (this.nextRev === 0n) this.nextRev = resp.header.revision
    if (this.spec.createdNotify) {
      this.offer({ header: resp.header, events: resp.events, created: true, progressNotify: false })
    }
  }

  /** An event batch or a progress notification (fragments already merged). */
  deliver(resp: WireWatchResponse): void {
    let events = resp.events
    if (events.length > 0) {
      // A server that re-sends what this watch already has (a resume at an inclusive revision)
      // must not make the consumer see it twice. Revisions are whole, so this keeps atomicity.
      if (events[0]!.kv.modRevision <= this.deliveredRev) {
        const after = this.deliveredRev
        events = events.filter((e) => e.kv.modRevision > after)
        if (events.length === 0) return
      }
      const last = events[events.length - 1]!.kv.modRevision
      this.deliveredRev = last
      if (last + 1n > this.nextRev) this.nextRev = last + 1n
      this.offer({ header: resp.header, events, created: false, progressNotify: false })
      return
    }
    if (!isProgressNotify(resp)) return
    // Every event up to the header revision has been delivered (etcd's progress guarantee).
    if (resp.header.revision + 1n > this.nextRev) this.nextRev = resp.header.revision + 1n
    this.offer({ header: resp.header, events, created: false, progressNotify: true })
  }

  private offer(response: WatchResponse): void {
    if (this.closed) return
    if (this.pending.push(response) === 1) this.onPending(this)
  }

  /**
   * Hands the pending responses to the consumer at once. Batched per event-loop turn: every
   * message grpc-js delivers in one I/O phase costs the consumer one wake-up, not one each.
   */
  flush(): void {
    if (this.pending.length === 0) return
    const batch = this.pending
    this.pending = []
    this.buffer.offerAll(batch)
  }

  /** How many responses wait for the consumer. */
  buffered(): number {
    return this.pending.length + this.buffer.size
  }

  /** Ends the consumer's Stream (after what was delivered): with `error`, or normally. */
  finish(error?: WatchError): void {
    this.finishWith(error === undefined ? Exit.void : Exit.fail(error))
  }

  /** Ends the consumer's Stream with any exit (a defect included). */
  finishWith(exit: Exit.Exit<void, WatchError>): void {
    if (this.closed) return
    this.flush()
    this.closed = true
    this.buffer.end(exit)
  }
}
