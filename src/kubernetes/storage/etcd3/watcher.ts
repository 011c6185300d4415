/**
 * etcd3/watcher.go (seed 000): the watchChan behind every storage watch.
 *
 *   startWatching  — a stream: [sync(): a paged consistent list as synthetic creates]
 *                    [the initial-events-end bookmark] then the etcd watch from initialRev+1
 *                    (prev_kv, prefix when recursive, progress notify on request, require leader)
 *   incomingEventChan (100) — `Stream.bufferChunks`: the producer runs ahead in its own fiber
 *   processEvents / transform — synchronous per chunk, in the consumer's pull: decrypt, decode,
 *                    set RV, filter
 *   resultChan     — none: the transform runs when the consumer pulls, so decoded objects exist
 *                    only while they are being handed over (see below, INCOMING_BUF_SIZE)
 *   run()          — the stream's scope: interrupting the consumer stops the producer fiber and the
 *                    etcd watch; an error ends the stream with one ERROR event after what came before.
 *
 * The buffer counts etcd responses (chunks), not single events: a response holds whole revisions.
 */
import { Chunk, Effect, Either, Option, Random, Stream } from "effect"
import { prefixEnd } from "../../../client/key-range.js"
import { toBytes } from "../../../client/key-value.js"
import type { EtcdClientShape } from "../../../client/client.js"
import type { WatchResponse } from "../../../client/watch-response.js"
import type { WatchError } from "../../../client/watch-errors.js"
import { decodeObject } from "../../api/codec.js"
import type { KubeObject } from "../../api/object-meta.js"
import {
  type GroupResource,
  newInternalError,
  newTooLargeResourceVersion,
  type StatusError,
  StoreReadError,
  toStatus
} from "../../api/status.js"
import { added, bookmark, deleted, errorEvent, modified, type WatchEvent } from "../../api/watch-event.js"
import type { ListOptions } from "../interfaces.js"
import { Everything, isEmpty, matches, type SelectionPredicate } from "../selection-predicate.js"
import type { ValueTransformer } from "../value/transformer.js"
import { compactedWatch, fromEtcd } from "./errors.js"
import { parseEvent, parseKV, progressNotifyEvent, type WatchChanEvent } from "./event.js"

/** incomingBufSize (etcd3/watcher.go) */
export const INCOMING_BUF_SIZE = 100
/*
 * outgoingBufSize (etcd3/watcher.go) has no twin here. In Go, resultChan hands transformed events from
 * the processEvents goroutine to the consumer. Here the transform is synchronous code run in the
 * consumer's pull, and one thread does all of it, so a second buffer only lets the transform run
 * ahead of the consumer: up to 100 responses (100,000 events in a catch-up) of decoded objects
 * stay alive at once. That cost 3 µs per event in garbage collection (docs/benchmarks.md,
 * bench:kube-storage). The raw responses wait in the incoming buffer instead, off the V8 heap.
 */

/** maxLimit: page size of the initial sync */
export const SYNC_PAGE_SIZE = 10000

export interface WatcherDeps {
  readonly client: EtcdClientShape
  readonly transformer: ValueTransformer
  readonly groupResource: GroupResource
  readonly typeMeta: { readonly apiVersion?: string; readonly kind?: string }
  /** GetCurrentResourceVersion of the store (a quorum read) */
  readonly getCurrentResourceVersion: Effect.Effect<bigint, StatusError>
}

/** The etcd watch's own failures as the apiserver reports them (interpretWatchError). */
const interpretWatchError = (e: WatchError): StatusError => {
  switch (e._tag) {
    case "WatchCompacted":
      return compactedWatch()
    case "EtcdError":
      return fromEtcd(e)
    default:
      return newInternalError(e.message)
  }
}

/** sync(): the current state under `key` as creates, page by page at one revision. */
const sync = (
  deps: WatcherDeps,
  key: string,
  recursive: boolean,
  onRevision: (rev: bigint) => void
): Stream.Stream<WatchChanEvent, StatusError> => {
  if (!recursive) {
    return Stream.unwrap(
      Effect.map(Effect.mapError(deps.client.kv.get(key), fromEtcd), (r) => {
        onRevision(r.header.revision)
        return Stream.fromIterable(r.kvs.map(parseKV))
      })
    )
  }
  const rangeEnd = prefixEnd(toBytes(key))
  type Page = { readonly from: string; readonly rev: bigint }
  return Stream.paginateChunkEffect<Page, WatchChanEvent, StatusError, never>({ from: key, rev: 0n }, (page) =>
    Effect.map(
      Effect.mapError(deps.client.kv.get(page.from, { rangeEnd, limit: SYNC_PAGE_SIZE, revision: page.rev }), fromEtcd),
      (r) => {
        // later pages are pinned to the first page's revision: one consistent snapshot
        const rev = page.rev === 0n ? r.header.revision : page.rev
        if (page.rev === 0n) onRevision(rev)
        const events = r.kvs.map(parseKV)
        const last = events[events.length - 1]
        const next: Option.Option<Page> =
          r.more && last !== undefined ? Option.some({ from: last.key + "\x00", rev }) : Option.none()
        return [Chunk.unsafeFromArray(events), next] as const
      }
    )
  )
}

/** A response that could not be parsed: the transform turns it into the ERROR that ends the watch. */
class ParseFailure {
  constructor(readonly error: StatusError) {}
}

type Incoming = WatchChanEvent | ParseFailure

/**
 * The etcd watch's responses as internal events, a chunk of responses at a time (no Effect per
 * response); an update or delete without its prev_kv becomes a ParseFailure and nothing after it.
 */
const fromResponses = (responses: Chunk.Chunk<WatchResponse>): Chunk.Chunk<Incoming> => {
  const out: Array<Incoming> = []
  for (const r of responses) {
    if (r.progressNotify) {
      out.push(progressNotifyEvent(r.header.revision))
      continue
    }
    for (const e of r.events) {
      const parsed = parseEvent(e)
      if (typeof parsed === "string") {
        out.push(new ParseFailure(newInternalError(parsed)))
        return Chunk.unsafeFromArray(out)
      }
      out.push(parsed)
    }
  }
  return Chunk.unsafeFromArray(out)
}

/**
 * Watch: the storage watch stream from `rev` (0: with initial events, unless sendInitialEvents is
 * false). `preparedKey` is the full etcd key (or prefix, ending in "/", when recursive).
 */
export const watchChan = (
  deps: WatcherDeps,
  preparedKey: string,
  rev: bigint,
  options: ListOptions
): Stream.Stream<WatchEvent> => {
  const pred = options.predicate ?? Everything
  const recursive = options.recursive === true
  const sendInitialEvents = options.sendInitialEvents
  let initialRev = rev

  const initial: Stream.Stream<WatchChanEvent, StatusError> = Stream.unwrap(
    Effect.gen(function* () {
      if (sendInitialEvents === true && rev > 0n) {
        const current = yield* deps.getCurrentResourceVersion
        if (rev > current) {
          // the apiserver asks the client to retry in 1–3 s (wait.Jitter(1s, 3))
          const retry = Math.trunc(1 + (yield* Random.next) * 3)
          return yield* Effect.fail(newTooLargeResourceVersion(rev, current, retry))
        }
      }
      const wantsInitialEvents = sendInitialEvents === true || (rev === 0n && sendInitialEvents === undefined)
      if (!wantsInitialEvents) {
        if (rev === 0n) initialRev = yield* deps.getCurrentResourceVersion
        return Stream.empty
      }
      const synced = sync(deps, preparedKey, recursive, (r) => {
        initialRev = r
      })
      if (sendInitialEvents === true && pred.allowWatchBookmarks) {
        return Stream.concat(
          synced,
          Stream.suspend(() => Stream.succeed(progressNotifyEvent(initialRev, true)))
        )
      }
      return synced
    })
  )

  const live: Stream.Stream<Incoming, StatusError> = Stream.suspend(() =>
    deps.client
      .watch(preparedKey, {
        prefix: recursive,
        startRevision: initialRev + 1n,
        prevKv: true,
        progressNotify: options.progressNotify === true,
        requireLeader: true
      })
      .pipe(Stream.mapError(interpretWatchError), Stream.mapChunks(fromResponses))
  )

  const startWatching: Stream.Stream<Incoming, StatusError> = Stream.concat(initial, live)

  const transformer = makeTransform(deps, pred)
  return startWatching.pipe(
    Stream.bufferChunks({ capacity: INCOMING_BUF_SIZE }),
    Stream.mapChunks((chunk) => transformChunk(transformer, chunk)),
    Stream.catchAll((e) => Stream.succeed(errorEvent(toStatus(e)))),
    Stream.takeUntil((e) => e.type === "ERROR")
  )
}

type Transform = (e: WatchChanEvent) => WatchEvent | undefined

/** processEvents: one chunk at a time, synchronously; the first error ends the chunk with ERROR. */
const transformChunk = (transform: Transform, chunk: Chunk.Chunk<Incoming>): Chunk.Chunk<WatchEvent> => {
  const out: Array<WatchEvent> = []
  for (const e of chunk) {
    const res = e instanceof ParseFailure ? errorEvent(toStatus(e.error)) : transform(e)
    if (res === undefined) continue
    out.push(res)
    if (res.type === "ERROR") break
  }
  return Chunk.unsafeFromArray(out)
}

class TransformFailure {
  constructor(readonly error: StatusError) {}
}

/**
 * A DELETE whose previous value does not decrypt or decode (transformIfCorruptObjectError):
 * 500 StoreReadError `saw a DELETED event, but object data is corrupt - <corruptObjectError>`.
 */
const corruptDelete = (what: "transform" | "decode", rev: bigint, err: string): StatusError =>
  new StoreReadError({
    message: `saw a DELETED event, but object data is corrupt - ${
      what === "transform"
        ? "data from the storage is not transformable revision=0"
        : `object not decodable revision=${rev}`
    }: ${err}`
  })

/** transform(): decrypt, decode, set the event's RV, and derive the event type through the predicate. */
const makeTransform = (deps: WatcherDeps, pred: SelectionPredicate): Transform => {
  const acceptAll = isEmpty(pred)
  const decode = (data: Uint8Array, key: string, rev: bigint, deleted = false): KubeObject => {
    const plain = deps.transformer.fromStorage(data, key)
    if (!plain.ok)
      throw new TransformFailure(deleted ? corruptDelete("transform", rev, plain.error) : newInternalError(plain.error))
    const obj = decodeObject(plain.data, rev)
    if (Either.isLeft(obj))
      throw new TransformFailure(deleted ? corruptDelete("decode", rev, obj.left) : newInternalError(obj.left))
    return obj.right
  }
  return (e) => {
    if (e.isProgressNotify) return bookmark(e.rev, e.isInitialEventsEndBookmark, deps.typeMeta)
    try {
      const cur = e.isDeleted || e.value === undefined ? undefined : decode(e.value, e.key, e.rev)
      const old =
        e.prevValue !== undefined && (e.isDeleted || !acceptAll)
          ? decode(e.prevValue, e.key, e.rev, e.isDeleted)
          : undefined
      if (e.isDeleted) return old !== undefined && matches(pred, old) ? deleted(old) : undefined
      if (cur === undefined) return undefined
      if (e.isCreated) return matches(pred, cur) ? added(cur) : undefined
      if (acceptAll) return modified(cur)
      const curPasses = matches(pred, cur)
      const oldPasses = old !== undefined && matches(pred, old)
      if (curPasses && oldPasses) return modified(cur)
      if (curPasses) return added(cur)
      if (oldPasses) return deleted(old!)
      return undefined
    } catch (error) {
      if (error instanceof TransformFailure) return errorEvent(toStatus(error.error))
      return errorEvent(toStatus(newInternalError(String(error))))
    }
  }
}
