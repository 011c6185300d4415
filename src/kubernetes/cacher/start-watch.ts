/**
 * Cacher.Watch (cacher.go): a client watch served from the cache. The freshness wait for the RV it
 * must not start before, the watcher's scope for dispatch (namespace, name, trigger value), then
 * its interval (a snapshot, the ring's events since its RV, or nothing) taken and the watcher
 * registered in one synchronous step, so no event can fall in between. The watch's two faces: a
 * Stream of a queue-backed watcher (`watch`), or a sink the dispatcher pushes into (`watchSink`).
 */
import { Effect, Either, Queue, type Scope, Stream } from "effect"
import { type StatusError, toStatus } from "../api/status.js"
import { errorEvent, type WatchEvent } from "../api/watch-event.js"
import type { ListOptions, WatchHandle, WatchSink } from "../storage/interfaces.js"
import { Everything } from "../storage/selection-predicate.js"
import { parseWatchResourceVersion } from "../storage/versioner.js"
import { CacheWatcher, type Consumer, suggestedWatchChannelSize, watcherCapacity } from "./cache-watcher.js"
import { type CacherDeps, filterFor, prepare } from "./cacher-deps.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

/** A watch as registered: a watcher with what it starts with, or an error to deliver as its only event. */
type Started =
  | { readonly _tag: "Watching"; readonly watcher: CacheWatcher; readonly head: ReadonlyArray<WatchEvent> }
  | { readonly _tag: "Failed"; readonly error: StatusError }

/** Cacher.Watch up to registration: the freshness wait, the interval, and the watcher, registered in one step */
const startWatch = (
  d: CacherDeps,
  key: string,
  options: ListOptions,
  wanted: { readonly _tag: "Queue" } | Extract<Consumer, { _tag: "Sink" }>
): Effect.Effect<Started, StatusError> =>
  Effect.gen(function* () {
    const { config, prefix, ready, storage, trigger, watchCache } = d
    const recursive = options.recursive === true
    const k = yield* prepare(d, key, recursive)
    const rv = yield* parseWatchResourceVersion(options.resourceVersion, d.gr)
    if (!ready.isReady) return yield* Effect.fail(ready.notReady())
    const pred = options.predicate ?? Everything
    const S = options.sendInitialEvents
    const B = pred.allowWatchBookmarks
    const rvText = options.resourceVersion ?? ""

    // the RV the watch must not start before (waits for the cache up to 3 s)
    let requiredRV = 0n
    if (S === true)
      requiredRV = rvText === "" ? yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n) : rv
    else if (S === false && rvText === "")
      requiredRV = yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n)
    if (S === true && requiredRV > 0n) {
      const fresh = yield* Effect.either(watchCache.waitUntilFresh(requiredRV))
      if (Either.isLeft(fresh)) return { _tag: "Failed", error: fresh.left } as const
    }

    // the watcher's scope for dispatch: namespace and name from the key or the field selector
    const parts = k.slice(prefix.length).split("/")
    const namespace = pred.field.requiresExactMatch("metadata.namespace") ?? (parts.length >= 2 ? parts[0]! : "")
    const name =
      pred.field.requiresExactMatch("metadata.name") ??
      (!recursive && parts.length >= 1 ? parts[parts.length - 1]! : "")
    const triggerValue = trigger === undefined ? undefined : pred.field.requiresExactMatch(trigger)
    const chanSize = suggestedWatchChannelSize(watchCache.capacity, trigger !== undefined, triggerValue !== undefined)
    const filter = filterFor(k, recursive, pred)

    const consumer: Consumer =
      wanted._tag === "Queue"
        ? { _tag: "Queue", queue: yield* Queue.bounded<WatchCacheEvent>(watcherCapacity(chanSize)) }
        : wanted

    // take the interval and register in one synchronous step: no event can fall in between
    return yield* Effect.sync((): Started => {
      const snapshotWanted = S === true || (rv === 0n && S === undefined)
      let startRV: bigint
      let initial: ReadonlyArray<WatchEvent> = []
      let pending: ReadonlyArray<WatchCacheEvent> = []
      if (snapshotWanted) {
        const selectors = `${pred.label.toString()} ${pred.field.toString()}`
        const list = d.initialEvents.of(watchCache, k, recursive, selectors, filter)
        startRV = list.resourceVersion
        initial = list.events
      } else if (S === false) {
        startRV = rvText === "" ? requiredRV : watchCache.resourceVersion
      } else {
        const interval = watchCache.eventsSince(rv)
        if (interval._tag !== "Events" && interval._tag !== "Snapshot") return { _tag: "Failed", error: interval }
        startRV = rv
        pending = interval._tag === "Events" ? interval.events : []
      }
      const watcher = new CacheWatcher({
        chanSize,
        filter,
        startRV,
        allowWatchBookmarks: B,
        typeMeta: d.typeMeta,
        now: d.now(),
        namespace,
        name: triggerValue === undefined ? name : "",
        triggerValue,
        bookmarkFrequencyMs: config.bookmarkFrequencyMs,
        deadline: options.deadline,
        consumer
      })
      if (pending.length > 0) {
        const converted: Array<WatchEvent> = []
        for (const e of pending) {
          const out = watcher.convert(e)
          if (out !== undefined) converted.push(out)
        }
        initial = converted
      }
      const head = watcher.begin(initial, S === true && B ? watchCache.resourceVersion : undefined)
      d.watchers.add(watcher)
      return { _tag: "Watching", watcher, head }
    })
  })

/** Storage.Watch: the watch as a Stream (a queue-backed watcher), removed when the stream ends. */
export const watch = (
  d: CacherDeps,
  key: string,
  options: ListOptions
): Effect.Effect<Stream.Stream<WatchEvent>, StatusError> =>
  Effect.map(startWatch(d, key, options, { _tag: "Queue" }), (started): Stream.Stream<WatchEvent> => {
    if (started._tag === "Failed") return Stream.succeed(errorEvent(toStatus(started.error)))
    const { head, watcher } = started
    return watcher.stream(head).pipe(Stream.ensuring(Effect.sync(() => d.watchers.remove(watcher))))
  })

/** Storage.WatchSink: the dispatcher pushes into `sink`; the watcher is removed with the scope. */
export const watchSink = (
  d: CacherDeps,
  key: string,
  options: ListOptions,
  sink: WatchSink
): Effect.Effect<WatchHandle, StatusError, Scope.Scope> =>
  Effect.flatMap(startWatch(d, key, options, { _tag: "Sink", sink }), (started) => {
    if (started._tag === "Failed") {
      sink.push([errorEvent(toStatus(started.error))])
      sink.end()
      return Effect.succeed({ resume: () => {} })
    }
    const { watcher } = started
    return Effect.as(
      Effect.addFinalizer(() => Effect.sync(() => d.watchers.remove(watcher))),
      { resume: () => watcher.resume() }
    )
  })
