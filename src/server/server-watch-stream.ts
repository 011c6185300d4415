/**
 * etcd's serverWatchStream struct (v3rpc/watch.go): what one Watch stream's parts share — the mvcc
 * WatchStream, the send rules' StreamState, the frames queued for the call — and the stream's
 * mutable state, kept here in one place: its end, what holds recv, recv's place in the requests
 * read, the pending write of control responses, the progress ticker.
 *
 * The parts: recv (`watch-recv.ts`, etcd's recvLoop) reads requests and handles them
 * (`watch-requests.ts`); control responses go out once per turn of the event loop (`flushSoon`);
 * the send loop (`sendLoop` in watch-server.ts) writes what the watchers produce
 * (`watch-send.ts`); the ticker asks for the progress of quiet watchers.
 *
 * Supervision: a failure or defect of recv or the ticker (callbacks, not fibers) ends the stream
 * through `end`: the mvcc WatchStream is closed at once (its watchers leave the store and its
 * channel ends, so the send loop stops) and the call's fiber fails with the cause — for a defect a
 * WatchStreamDefect, so the bridge logs it once at error level and answers Internal (a defect's
 * status, as grpc-go's recovery interceptor answers a handler panic; clientv3 treats Internal as
 * transient and resumes its watches on a new stream). A defect of the send loop (or of the channel
 * take, "pump") fails the call's fiber the same way.
 */
import type * as grpc from "@grpc/grpc-js"
import { Cause, Deferred, type Effect, Exit, type Fiber, FiberId } from "effect"
import type { EtcdError } from "../errors.js"
import type { WatchRequest, WatchResponseInit } from "../proto/messages.js"
import type { WatchStream } from "../watch/watch-stream.js"
import type { AuthGuard } from "./auth-guard.js"
import type { FrameSink } from "./grpc-raw-writer.js"
import type { MakeHeader } from "./header.js"
import type { StreamState } from "./watch-send.js"
import { FrameWriter } from "./watch-wire.js"

/** A fiber of a watch stream stopped on a defect; the defect is its `cause`. */
export class WatchStreamDefect extends Error {
  constructor(
    readonly fiber: string,
    cause: unknown
  ) {
    super(`watch stream ${fiber} fiber: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = "WatchStreamDefect"
  }
}

/** A defect of one of the stream's parts, as the cause the stream ends with. */
export const defect = (part: string, cause: unknown): Cause.Cause<never> =>
  Cause.die(new WatchStreamDefect(part, cause))

/** Forks into the stream's own FiberSet: interrupted with the stream's scope, never left behind it. */
export type RunFork = <A>(effect: Effect.Effect<A>) => Fiber.RuntimeFiber<A>

export class ServerWatchStream {
  /** the frames to write: control responses queued by recv, a batch of the send loop */
  readonly out = new FrameWriter()
  /** set once, by `end`: the stream is over, nothing more is read or written */
  endCause: Cause.Cause<EtcdError> | undefined = undefined
  /** reasons recv waits (a request's Effect went async, the stream's buffer is full) */
  holds = 0
  /** the requests read and not yet handled from `next` on */
  backlog: Array<WatchRequest> = []
  next = 0
  /** the client half-closed: nothing more to read (the stream goes on serving) */
  inboundEnded = false
  /** a request whose Effect went async; interrupted if the stream ends first */
  waiting: Fiber.RuntimeFiber<void> | undefined = undefined
  /** the write of the control responses queued in this turn of the event loop */
  private flushing: ReturnType<typeof setImmediate> | undefined = undefined
  /** the progress ticker, once a watcher asked for progress_notify */
  private ticker: ReturnType<typeof setTimeout> | undefined = undefined
  /** recv, as the call's listeners and a hold's end call it */
  readonly resume: () => void

  constructor(
    readonly call: grpc.ServerDuplexStream<WatchRequest, WatchResponseInit>,
    readonly ws: WatchStream,
    readonly state: StreamState,
    readonly header: MakeHeader,
    /** auth: a create needs READ on its range; absent: no auth */
    readonly guard: AuthGuard | undefined,
    readonly sink: FrameSink,
    /** the stream's end, decided outside the send loop (recv, ticker): wakes a send loop waiting for 'drain' */
    readonly ended: Deferred.Deferred<never, EtcdError>,
    readonly runFork: RunFork,
    /** the progress ticker's interval, ms */
    private readonly interval: number,
    recv: (s: ServerWatchStream) => void
  ) {
    this.resume = () => recv(this)
  }

  /** Ends the stream with `cause` (the first end wins); see Supervision above. */
  end(cause: Cause.Cause<EtcdError>): void {
    if (this.endCause !== undefined) return
    // what was answered before the end goes out before it, as etcd's sendLoop sends it
    if (this.flushing !== undefined) this.flush()
    this.endCause = cause
    Deferred.unsafeDone(this.ended, Exit.failCause(cause))
    this.ws.unsafeClose()
  }

  /** recv waits for `wait`, then reads on. */
  hold(wait: Effect.Effect<unknown>): void {
    this.holds++
    this.runFork(wait).addObserver(() => {
      this.holds--
      this.resume()
    })
  }

  /**
   * Writes the queued control responses once per turn of the event loop, so the responses to
   * requests read in one turn (one per 'readable' when a client writes each on its own) go out in
   * one write (etcd's ctrlStream, without a queue of its own).
   */
  flushSoon(): void {
    if (this.flushing === undefined && this.out.count > 0) this.flushing = setImmediate(this.flush)
  }

  /** Like etcd's ctrlStream filling up, recv stops reading until the client takes what was sent. */
  private readonly flush = (): void => {
    this.flushing = undefined
    if (this.endCause === undefined && this.out.count > 0 && this.sink.write(this.out)) this.hold(this.sink.drain)
  }

  /** A timer every interval, with a jitter of up to a tenth of it drawn once per stream. */
  startTicker(): void {
    if (this.ticker !== undefined) return
    const jitter = Math.floor(Math.random() * Math.max(1, Math.floor(this.interval / 10)))
    const tick = () => {
      try {
        for (const id of this.state.onTick()) this.ws.unsafeRequestProgress(id)
        this.ticker = setTimeout(tick, this.interval + jitter)
      } catch (e) {
        this.end(defect("ticker", e))
      }
    }
    this.ticker = setTimeout(tick, this.interval + jitter)
  }

  /** At the stream's end: no timer left, no request left waiting. */
  release(): void {
    if (this.ticker !== undefined) clearTimeout(this.ticker)
    this.ticker = undefined
    if (this.flushing !== undefined) clearImmediate(this.flushing)
    this.waiting?.unsafeInterruptAsFork(FiberId.none)
  }
}
