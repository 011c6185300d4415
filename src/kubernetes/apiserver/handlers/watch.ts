/**
 * endpoints/handlers/watch.go serveWatch: the storage's watch as a chunked NDJSON stream, or
 * length-prefixed protobuf WatchEvents (`application/vnd.kubernetes.protobuf;stream=watch`). Errors
 * before the watch exists are ordinary Status responses; afterwards an error is one ERROR event
 * and the stream ends. The headers go out before the first event, the stream ends at
 * `timeoutSeconds` (default 1800 s × (1 + rand), as minRequestTimeout), when the apiserver begins to
 * shut down (graceful-shutdown.ts), on client disconnect (the
 * platform interrupts the handler, whose scope ends the storage watch), when the storage ends the
 * watch (a watcher too slow for the cache is closed, or the resource stops being served).
 *
 * The watch goes straight into the response: a `WatchSink` (storage/watch-sink.ts) that the
 * Cacher's dispatcher pushes to in its own pass, no fiber woken per event per watcher. Each event's
 * bytes are shared by every watcher (watch-encoder.ts); writes made in one tick go out corked
 * together; when the socket's buffer is full the sink says so, and the watcher waits for `drain`
 * (the cache closes it if that takes longer than its budget allows).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Clock, Duration, Effect, Either } from "effect"
import type { StatusError } from "../../api/status.js"
import type { WatchEvent } from "../../api/watch-event.js"
import type { WatchHandle, WatchSink } from "../../storage/interfaces.js"
import { watchInto } from "../../storage/watch-sink.js"
import type { Cell } from "../metrics.js"
import type { ListQuery } from "../query.js"
import { asObjectRepresentation, partialObjectMetadata } from "../negotiation.js"
import { encodeProtobuf, PROTOBUF_WATCH_TYPE, watchFrame } from "../../api/protobuf/envelope.js"
import { JSON_TYPE } from "../response.js"
import { includeObjectOf, tableOf } from "../table.js"
import { eventBytesAs, protobufEventBytesAs } from "../watch-encoder.js"
import { predicateOf } from "./list.js"
import { listKey, type RequestScope } from "./scope.js"

/** minRequestTimeout: a watch without timeoutSeconds lasts 30–60 minutes. */
export const MIN_REQUEST_TIMEOUT_SECONDS = 1800

const encoder = new TextEncoder()

const tableEvent = (s: RequestScope, e: WatchEvent): Uint8Array => {
  if (e.type === "ERROR" || e.type === "BOOKMARK") return eventBytesAs(e, s.apiVersion)
  const t = tableOf(
    s.info,
    [e.object],
    { resourceVersion: e.object.metadata.resourceVersion ?? "" },
    includeObjectOf(s.url.searchParams),
    s.version
  )
  return encoder.encode(`{"type":"${e.type}","object":${JSON.stringify(t)}}\n`)
}

const partialEvent = (s: RequestScope, e: WatchEvent): Uint8Array => {
  if (e.type === "ERROR") return eventBytesAs(e, s.apiVersion)
  const o = partialObjectMetadata(e.object, s.output.metaVersion)
  return encoder.encode(`{"type":"${e.type}","object":${JSON.stringify(o)}}\n`)
}

/** PartialObjectMetadata events in protobuf (ERROR events carry their Status). */
const partialProtobufEvent = (s: RequestScope, e: WatchEvent): Uint8Array => {
  if (e.type === "ERROR") return protobufEventBytesAs(e, s.apiVersion)
  return watchFrame(e.type, encodeProtobuf(partialObjectMetadata(e.object, s.output.metaVersion)))
}

const encoderOf = (s: RequestScope): ((e: WatchEvent) => Uint8Array) => {
  if (s.output.as === "Table") return (e) => tableEvent(s, e)
  if (s.output.protobuf)
    return s.output.as === "PartialObjectMetadata"
      ? (e) => partialProtobufEvent(s, e)
      : (e) => protobufEventBytesAs(e, s.apiVersion)
  return s.output.as === "PartialObjectMetadata" ? (e) => partialEvent(s, e) : (e) => eventBytesAs(e, s.apiVersion)
}

export const watch = (
  s: RequestScope,
  q: ListQuery,
  longrunning: Cell,
  shutdown: Effect.Effect<void>
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const predicate = yield* predicateOf(s, q)
      const timeoutSeconds =
        q.timeoutSeconds !== undefined && q.timeoutSeconds > 0
          ? q.timeoutSeconds
          : MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random())
      const counter = s.metrics.watchEventsCell(s.info.group, s.version, s.info.plural)
      if (s.output.as === "PartialObjectMetadataList") {
        const r = asObjectRepresentation(s.info, s.output, { metadata: {} })
        if (Either.isLeft(r)) return yield* Effect.fail(r.left)
      }
      const encode = encoderOf(s)
      // the watch's context deadline (cacheWatcher sends its last bookmark 2 s before it)
      const deadline = (yield* Clock.currentTimeMillis) + timeoutSeconds * 1000
      const res = NodeHttpServerRequest.toServerResponse(s.request)

      let started = false
      const start = () => {
        if (started) return
        started = true
        res.writeHead(200, {
          "content-type": s.output.protobuf ? PROTOBUF_WATCH_TYPE : JSON_TYPE,
          "cache-control": "no-cache, private"
        })
        res.flushHeaders()
      }
      let corked = false
      const uncork = () => {
        corked = false
        res.uncork()
      }
      let handle: WatchHandle | undefined
      const resume = () => handle?.resume()
      let ended = false
      let wake: (() => void) | undefined
      const sink: WatchSink = {
        push: (events) => {
          if (res.writableEnded) return true
          start()
          if (!corked) {
            corked = true
            res.cork()
            process.nextTick(uncork)
          }
          counter.n += events.length
          let room = true
          for (const e of events) room = res.write(encode(e))
          if (!room) res.once("drain", resume)
          return room
        },
        end: () => {
          ended = true
          wake?.()
        }
      }
      // a failure here is the request's Status (nothing is written before the watch exists)
      handle = yield* watchInto(
        s.served.storage,
        listKey(s),
        {
          resourceVersion: q.resourceVersion,
          resourceVersionMatch: q.resourceVersionMatch === "NotOlderThan" ? "NotOlderThan" : "",
          predicate,
          recursive: true,
          sendInitialEvents: q.sendInitialEvents,
          deadline
        },
        sink
      )
      longrunning.n++
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          longrunning.n--
          res.removeListener("drain", resume)
          if (!res.writableEnded) res.end()
        })
      )
      start()
      const watchEnded = Effect.async<void>((done) => {
        if (ended) return done(Effect.void)
        wake = () => done(Effect.void)
      })
      yield* Effect.ignore(
        Effect.timeout(Effect.raceFirst(watchEnded, shutdown), Duration.millis(timeoutSeconds * 1000))
      )
      // already written and ended: the platform sends nothing more (the status is what the metrics count)
      return HttpServerResponse.empty({ status: 200 })
    })
  )
