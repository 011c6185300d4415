/**
 * endpoints/handlers/watch.go serveWatch: the storage's watch as a chunked NDJSON stream. Errors
 * before the watch exists are ordinary Status responses; afterwards an error is one ERROR event
 * and the stream ends. The headers go out before the first event (an empty first write), the
 * stream ends at `timeoutSeconds` (default 1800 s × (1 + rand), as minRequestTimeout), on client
 * disconnect (the platform interrupts the fiber, which ends the storage watch), or when the
 * resource stops being served.
 *
 * Per event per watcher this does no Effect of its own: each chunk the watch's Stream yields is
 * mapped synchronously to the events' shared bytes (watch-encoder.ts) and counted in a plain cell.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Chunk, Duration, Effect, Stream } from "effect"
import type { StatusError } from "../../api/status.js"
import type { WatchEvent } from "../../api/watch-event.js"
import type { Cell } from "../metrics.js"
import type { ListQuery } from "../query.js"
import { JSON_TYPE } from "../response.js"
import { includeObjectOf, tableOf } from "../table.js"
import { eventBytesAs } from "../watch-encoder.js"
import { predicateOf } from "./list.js"
import { listKey, type RequestScope } from "./scope.js"

/** minRequestTimeout: a watch without timeoutSeconds lasts 30–60 minutes. */
export const MIN_REQUEST_TIMEOUT_SECONDS = 1800

const EMPTY = new Uint8Array(0)
const encoder = new TextEncoder()

const tableEvent = (s: RequestScope, e: WatchEvent): Uint8Array => {
  if (e.type === "ERROR" || e.type === "BOOKMARK") return eventBytesAs(e, s.apiVersion)
  const t = tableOf(s.info, [e.object], { resourceVersion: e.object.metadata.resourceVersion ?? "" }, includeObjectOf(s.url.searchParams))
  return encoder.encode(`{"type":"${e.type}","object":${JSON.stringify(t)}}\n`)
}

export const watch = (
  s: RequestScope,
  q: ListQuery,
  longrunning: Cell
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function*() {
    const predicate = yield* predicateOf(s, q)
    const events = yield* s.served.storage.watch(listKey(s), {
      resourceVersion: q.resourceVersion,
      resourceVersionMatch: q.resourceVersionMatch === "NotOlderThan" ? "NotOlderThan" : "",
      predicate,
      recursive: true,
      sendInitialEvents: q.sendInitialEvents
    })
    const timeoutSeconds = q.timeoutSeconds !== undefined && q.timeoutSeconds > 0
      ? q.timeoutSeconds
      : MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random())
    const counter = s.metrics.watchEventsCell(s.info.group, s.version, s.info.plural)
    const encode = s.table ? (e: WatchEvent) => tableEvent(s, e) : (e: WatchEvent) => eventBytesAs(e, s.apiVersion)
    const body = Stream.concat(
      Stream.succeed(EMPTY),
      events.pipe(
        Stream.mapChunks((chunk) => {
          counter.n += chunk.length
          const out = new Array<Uint8Array>(chunk.length)
          let i = 0
          for (const e of chunk) out[i++] = encode(e)
          return Chunk.unsafeFromArray(out)
        })
      )
    ).pipe(
      Stream.interruptAfter(Duration.millis(timeoutSeconds * 1000)),
      Stream.ensuring(Effect.sync(() => void longrunning.n--))
    )
    longrunning.n++
    return HttpServerResponse.stream(body, { contentType: JSON_TYPE, headers: { "cache-control": "no-cache, private" } })
  })
