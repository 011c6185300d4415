/**
 * pkg/storage/etcd/etcd_watcher.go (seed 001), the apiserver's etcd2-era watcher, on Effect:
 *
 *   etcdWatch     — the producer fiber: at resourceVersion 0 a recursive get whose nodes become
 *                   "get" responses (index from X-Etcd-Index), then long polls from waitIndex,
 *                   each next one from the last event's modifiedIndex + 1
 *   etcdIncoming  — Mailbox(100) of v2 responses; the producer's error (etcdError) fails it, so
 *                   the error arrives after every response queued before it
 *   translate     — the consumer fiber: sendResult per response (sendAdd / sendModify /
 *                   sendDelete), synchronously for a whole batch, then `emit`
 *   outgoing      — Mailbox(100) of watch events, the Stream the caller reads
 *   emit          — offer to outgoing; it suspends while outgoing is full and is interrupted by
 *                   stop (userStop), which is interruption of the stream's scope
 *   incomingHWM / outgoingHWM — high-water marks, logged when they rise and kept as gauges
 *
 * Event index cleared (401) becomes an ERROR event with a 410 Expired Status; other failures a 500
 * InternalError Status, as translate did; a node that does not decode is logged and skipped (as the
 * etcd2 watcher did: a client resuming from its resourceVersion could never get past it), and a
 * list watch leaves out its own directory key (include = exceptKey). A node changed since it was
 * created is MODIFIED even when it comes from the initial list (sendAdd compares ModifiedIndex
 * with CreatedIndex).
 */
import { Chunk, Effect, Either, Mailbox, Option, Schedule, Stream } from "effect"
import { decodeObject } from "../api/codec.js"
import type { KubeObject } from "../api/object-meta.js"
import {
  InternalError,
  newResourceExpired,
  newTooLargeResourceVersion,
  type Status,
  type StatusError,
  isStatusError,
  toStatus
} from "../api/status.js"
import { added, bookmark, deleted, errorEvent, modified, type WatchEvent } from "../api/watch-event.js"
import type { ListOptions } from "../storage/interfaces.js"
import { Everything, matches, type SelectionPredicate } from "../storage/selection-predicate.js"
import { errorText, type KeysError } from "./errors.js"
import { makeWatcherMarks, reportIncoming, reportOutgoing, type WatcherMarks } from "./high-water-mark.js"
import type { KeysClientShape } from "./keys-client.js"
import { leaves, type Node, type Response } from "./node.js"

/** etcdIncoming and outgoing capacities (newEtcdWatcher: "the 100 is mostly arbitrary") */
export const INCOMING_BUF_SIZE = 100
export const OUTGOING_BUF_SIZE = 100

/** actions (etcd_helper.go EtcdGet, EtcdCreate, …) */
export const EtcdGet = "get"
export const EtcdCreate = "create"
export const EtcdSet = "set"
export const EtcdUpdate = "update"
export const EtcdCAS = "compareAndSwap"
export const EtcdDelete = "delete"
export const EtcdCAD = "compareAndDelete"
export const EtcdExpire = "expire"

/** The end of a watch-list's initial events (sendInitialEvents with allowWatchBookmarks). */
export interface InitialEventsEnd {
  readonly action: "initialEventsEnd"
  readonly etcdIndex: number
}

export type Incoming = Response | InitialEventsEnd

/** What an etcd2 watcher works with: the keys client, the bookmarks' type, the poll retry and its high-water marks. */
export interface EtcdWatcherDeps {
  readonly keys: KeysClientShape
  /** apiVersion/kind of BOOKMARK objects and the outgoing log line */
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** how long polls are retried after a transport failure (default: 50 ms doubling to 2 s, for 30 s) */
  readonly retry?: Schedule.Schedule<unknown, KeysError> | undefined
  /** this watcher's high-water marks (default: fresh ones) */
  readonly marks?: WatcherMarks | undefined
  /** which keys' events are the watch's (etcd_helper's include: a list watch leaves out its directory) */
  readonly include?: IncludeFunc | undefined
}

export const defaultRetry: Schedule.Schedule<unknown, KeysError> = Schedule.exponential("50 millis", 2).pipe(
  Schedule.either(Schedule.spaced("2 seconds")),
  Schedule.upTo("30 seconds")
)

/** The Status translate sends for the producer's error (IsEtcdWatchExpired → 410, else 500). */
export const statusOfError = (e: KeysError | StatusError): Status => {
  if (isStatusError(e)) return toStatus(e)
  if (e._tag === "EventIndexCleared") return toStatus(newResourceExpired(errorText(e)))
  return toStatus(new InternalError({ message: errorText(e) }))
}

/**
 * etcdWatch: the producer. `resourceVersion` 0 (or sendInitialEvents) first lists the current state
 * as "get" responses; then one long poll after another from `waitIndex`. A transport failure is
 * retried from the same index, so nothing is lost or repeated; an etcd error ends it.
 */
export const etcdWatch = (
  keys: KeysClientShape,
  key: string,
  resourceVersion: number,
  options: {
    readonly recursive: boolean
    readonly sendInitialEvents?: boolean | undefined
    readonly allowWatchBookmarks?: boolean | undefined
    readonly retry?: Schedule.Schedule<unknown, KeysError> | undefined
  },
  etcdIncoming: Mailbox.Mailbox<Incoming, KeysError | StatusError>
): Effect.Effect<never, KeysError | StatusError> =>
  Effect.gen(function* () {
    const recursive = options.recursive
    let index = resourceVersion
    const wantsInitialEvents =
      options.sendInitialEvents === true || (resourceVersion === 0 && options.sendInitialEvents === undefined)
    if (wantsInitialEvents || resourceVersion === 0) {
      // etcdGetInitialWatchState: the state now, and the index it is at
      // sorted: the initial ADDED events in key order, as the etcd3 watcher's sync lists them
      const r = yield* Effect.either(keys.get(key, { recursive, quorum: true, sorted: true }))
      let current: number
      if (Either.isLeft(r)) {
        if (r.left._tag !== "KeyNotFound") return yield* Effect.fail(r.left)
        current = r.left.index
      } else {
        current = r.right.etcdIndex
        if (wantsInitialEvents) {
          const etcdIndex = current
          yield* etcdIncoming.offerAll(
            leaves(r.right.node).map((node): Response => ({ action: EtcdGet, node, etcdIndex }))
          )
        }
      }
      if (options.sendInitialEvents === true && resourceVersion > current) {
        return yield* Effect.fail(newTooLargeResourceVersion(BigInt(resourceVersion), BigInt(current), 1))
      }
      if (options.sendInitialEvents === true && options.allowWatchBookmarks === true) {
        yield* etcdIncoming.offer({ action: "initialEventsEnd", etcdIndex: current })
      }
      index = current
    }
    const next = (waitIndex: number) =>
      Effect.retry(keys.watch(key, { recursive, waitIndex }), {
        schedule: options.retry ?? defaultRetry,
        while: (e) => e._tag === "V2TransportError"
      })
    for (;;) {
      const r = yield* next(index + 1)
      // an empty answer: etcd closed the poll without an event; ask again from the same index
      if (Option.isNone(r)) continue
      index = r.value.node.modifiedIndex
      yield* etcdIncoming.offer(r.value)
    }
  })

/** etcd_helper.go's includeFunc: whether a key's events are the watch's (a list watch leaves out its directory). */
export type IncludeFunc = (key: string) => boolean

/** exceptKey: every key but the watched directory itself. */
export const exceptKey =
  (except: string): IncludeFunc =>
  (key) =>
    key !== except

/** HandleError: the watcher logs and goes on (what it skips never reaches the client). */
export type ReportSkipped = (message: string) => void

/**
 * sendResult with sendAdd / sendModify / sendDelete: one response → at most one event, plain and
 * synchronous. `undefined`: nothing to send (filtered out, not included, a directory, an
 * unknown action, or a value that does not decode — skipped and reported, as the seed says: "If
 * we stop the watch on a bad value, a client that uses the resourceVersion to resume will never
 * be able to get past a bad value").
 */
export const makeSendResult = (
  pred: SelectionPredicate,
  typeMeta: { readonly apiVersion?: string; readonly kind?: string } = {},
  include?: IncludeFunc,
  report: ReportSkipped = () => {}
): ((res: Incoming) => WatchEvent | undefined) => {
  const encoder = new TextEncoder()
  const included = (key: string) => include === undefined || include(key)

  const decode = (node: Node, index: number): KubeObject | string => {
    const obj = decodeObject(encoder.encode(node.value ?? ""), BigInt(index))
    return Either.isLeft(obj) ? obj.left : obj.right
  }
  const skip = (err: string, node: Node): undefined => {
    report(`failure to decode api object: ${err}\n'${node.value ?? ""}' from key ${JSON.stringify(node.key)}`)
    return undefined
  }

  /** create / get: ADDED, or MODIFIED for a node changed since it was created */
  const sendAdd = (res: Response): WatchEvent | undefined => {
    if (res.node.dir === true || !included(res.node.key)) return undefined
    const obj = decode(res.node, res.node.modifiedIndex)
    if (typeof obj === "string") return skip(obj, res.node)
    if (!matches(pred, obj)) return undefined
    return res.node.modifiedIndex !== res.node.createdIndex ? modified(obj) : added(obj)
  }

  /** set / compareAndSwap: MODIFIED, or ADDED / DELETED when the object enters / leaves the predicate */
  const sendModify = (res: Response): WatchEvent | undefined => {
    if (res.node.dir === true || !included(res.node.key)) return undefined
    const cur = decode(res.node, res.node.modifiedIndex)
    if (typeof cur === "string") return skip(cur, res.node)
    const curPasses = matches(pred, cur)
    const prev =
      res.prevNode !== undefined && res.prevNode.dir !== true && (res.prevNode.value ?? "") !== ""
        ? res.prevNode
        : undefined
    // the old object carries the index of this change, so a client can resume from it; problems reading it are ignored
    const old = prev === undefined ? undefined : decode(prev, res.node.modifiedIndex)
    const oldObj = typeof old === "string" ? undefined : old
    const oldPasses = oldObj !== undefined && matches(pred, oldObj)
    if (curPasses && oldPasses) return modified(cur)
    if (curPasses) return added(cur)
    if (oldPasses) return deleted(oldObj!)
    return undefined
  }

  /** delete / compareAndDelete / expire: the previous object at the deletion's index */
  const sendDelete = (res: Response): WatchEvent | undefined => {
    const prev = res.prevNode
    if (prev === undefined || prev.dir === true || res.node.dir === true || !included(prev.key)) return undefined
    const old = decode(prev, res.node.modifiedIndex)
    if (typeof old === "string") return skip(old, prev)
    return matches(pred, old) ? deleted(old) : undefined
  }

  return (res) => {
    switch (res.action) {
      case "initialEventsEnd":
        return bookmark(BigInt(res.etcdIndex), true, typeMeta)
      case EtcdCreate:
      case EtcdGet:
        return sendAdd(res as Response)
      case EtcdSet:
      case EtcdUpdate:
      case EtcdCAS:
        return sendModify(res as Response)
      case EtcdDelete:
      case EtcdExpire:
      case EtcdCAD:
        return sendDelete(res as Response)
      default:
        report(`unknown action: ${res.action}`)
        return undefined
    }
  }
}

/**
 * translate: takes what etcdIncoming holds (a batch), turns it into events synchronously, and emits
 * them; the producer's error becomes the last event. Ends after an ERROR or when the producer ended.
 */
export const translate = (
  etcdIncoming: Mailbox.ReadonlyMailbox<Incoming, KeysError | StatusError>,
  outgoing: Mailbox.Mailbox<WatchEvent>,
  sendResult: (res: Incoming) => WatchEvent | undefined,
  marks: WatcherMarks,
  kind: string,
  afterBatch: () => Effect.Effect<void> = () => Effect.void
): Effect.Effect<void> => {
  /** emit: into outgoing (suspends while full; stop interrupts it); the outgoing mark as Go measured it before each send */
  const emit = (events: ReadonlyArray<WatchEvent>): Effect.Effect<void> => {
    if (events.length === 0) return Effect.void
    const before = Option.getOrElse(outgoing.unsafeSize(), () => 0)
    const mark = Math.min(before + events.length - 1, OUTGOING_BUF_SIZE)
    const offer = Effect.asVoid(outgoing.offerAll(events))
    return marks.outgoing.update(mark) ? Effect.zipRight(reportOutgoing(kind, mark), offer) : offer
  }
  const loop: Effect.Effect<void> = Effect.flatMap(Effect.either(etcdIncoming.takeAll), (taken) => {
    if (Either.isLeft(taken)) return emit([errorEvent(statusOfError(taken.left))])
    const [batch, done] = taken.right
    const events: Array<WatchEvent> = []
    let failed = false
    for (const res of batch) {
      const e = sendResult(res)
      if (e === undefined) continue
      events.push(e)
      if (e.type === "ERROR") {
        failed = true
        break
      }
    }
    // Go read len(etcdIncoming) after each receive: the most still queued behind the first of the batch
    const queued = Chunk.size(batch) - 1
    const report = marks.incoming.update(queued) ? reportIncoming(queued) : Effect.void
    const sent = Effect.zipRight(Effect.zipRight(afterBatch(), report), emit(events))
    return failed || done ? sent : Effect.zipRight(sent, loop)
  })
  return loop
}

/**
 * newEtcdWatcher + etcdWatch: the watch as a Stream of events. Its scope is the watcher: the
 * producer and translate fibers live in it, and interrupting the consumer (Stop) ends both and
 * the long poll in flight.
 */
export const etcdWatcher = (
  deps: EtcdWatcherDeps,
  key: string,
  resourceVersion: number,
  options: ListOptions
): Stream.Stream<WatchEvent> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const pred = options.predicate ?? Everything
      const typeMeta = deps.typeMeta ?? {}
      const marks = deps.marks ?? makeWatcherMarks()
      const etcdIncoming = yield* Mailbox.make<Incoming, KeysError | StatusError>(INCOMING_BUF_SIZE)
      const outgoing = yield* Mailbox.make<WatchEvent>(OUTGOING_BUF_SIZE)
      yield* Effect.forkScoped(
        etcdWatch(
          deps.keys,
          key,
          resourceVersion,
          {
            recursive: options.recursive === true,
            sendInitialEvents: options.sendInitialEvents,
            allowWatchBookmarks: pred.allowWatchBookmarks,
            retry: deps.retry
          },
          etcdIncoming
        ).pipe(Mailbox.into(etcdIncoming))
      )
      // what was skipped is logged (utilruntime.HandleError) once its batch has been translated
      const skipped: Array<string> = []
      const sendResult = makeSendResult(pred, typeMeta, deps.include, (m) => skipped.push(m))
      yield* Effect.forkScoped(
        translate(etcdIncoming, outgoing, sendResult, marks, typeMeta.kind ?? "object", () =>
          skipped.length === 0 ? Effect.void : Effect.logWarning(skipped.splice(0).join("\n"))
        ).pipe(Mailbox.into(outgoing))
      )
      return Mailbox.toStream(outgoing)
    })
  )
