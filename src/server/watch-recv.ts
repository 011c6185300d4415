/**
 * recv: etcd's recvLoop (v3rpc/watch.go) as a 'readable' callback on the call. It reads the
 * requests buffered and handles them in order (`watch-requests.ts`): what needs no Effect at once,
 * the rest of a batch in one fiber of the stream's FiberSet. A request that goes async holds the
 * next ones (and the reading: the client is throttled by HTTP/2 flow control) until it is done;
 * so does a full stream buffer after a write of control responses (as a full ctrlStream blocks
 * etcd's recvLoop), until 'drain'. The end of the inbound side (client half-close) ends only the
 * reading: the stream keeps serving until the client cancels it, as etcd's does.
 */
import { Cause, Effect, Exit } from "effect"
import { EtcdError } from "../errors.js"
import { takeBatch } from "./grpc-bridge.js"
import { defect, type ServerWatchStream } from "./server-watch-stream.js"
import { handle, handleNow } from "./watch-requests.js"

/** false when the request's Effect failed (the stream is ending) */
const handled = (s: ServerWatchStream, exit: Exit.Exit<void>): boolean => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return true
  s.end(defect("recv", Cause.squash(exit.cause)))
  return false
}

/** Reads and handles requests until none is buffered, then writes the control responses of the turn. */
export const recv = (s: ServerWatchStream): void => {
  try {
    read(s)
    s.flushSoon()
  } catch (e) {
    s.end(defect("recv", e))
  }
}

/**
 * Each batch's Effect runs at once and is synchronous in practice; one that goes async is
 * `waiting`, and recv resumes when it is done.
 */
const read = (s: ServerWatchStream): void => {
  while (s.holds === 0 && s.endCause === undefined) {
    // what needs no Effect is handled at once, in order
    while (s.next < s.backlog.length && handleNow(s, s.backlog[s.next]!)) s.next++
    if (s.next < s.backlog.length) {
      // one fiber for the rest of the batch read, not one per request (a create is a few µs of work)
      const requests = s.next === 0 ? s.backlog : s.backlog.slice(s.next)
      s.next = s.backlog.length
      const fiber = s.runFork(Effect.forEach(requests, (req) => handle(s, req), { discard: true }))
      const exit = fiber.unsafePoll()
      if (exit !== null) {
        if (!handled(s, exit)) return
        continue
      }
      s.holds++
      s.waiting = fiber
      fiber.addObserver((exit) => {
        s.waiting = undefined
        s.holds--
        if (handled(s, exit)) s.resume()
      })
      return
    }
    if (s.inboundEnded) return
    const batch = takeBatch(s.call)
    if (batch === undefined) return
    if (batch === null) {
      s.inboundEnded = true
      return
    }
    // a request etcd cannot decode ends the stream with grpc-go's INTERNAL status
    if (batch instanceof EtcdError) return s.end(Cause.fail(batch))
    s.backlog = batch
    s.next = 0
  }
}
