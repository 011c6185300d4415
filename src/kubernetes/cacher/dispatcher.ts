/**
 * cacher.go's dispatchEvents as a service: one fiber takes the reflector's events from `incoming`
 * (chan 100: a full queue holds the reflector back) and hands each to the watchers that may care,
 * non-blocking first; the blocked ones share what is left of the dispatch time budget, and those
 * still blocked when it runs out are terminated. A ~1 s jittered tick gives due watchers their
 * bookmark. Per event the work is plain synchronous calls; the fiber only waits.
 */
import { Context, Duration, Effect, Layer, Metric, Queue, Random } from "effect"
import type { CacheWatcher } from "./cache-watcher.js"
import { IndexedWatchers } from "./indexed-watchers.js"
import { supervised } from "../../supervision/fatal.js"
import { CacherConfig } from "./config.js"
import { TimeBudget } from "./time-budget.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

export interface DispatcherShape {
  /** Cacher.incoming: what the reflector feeds */
  readonly incoming: Queue.Queue<WatchCacheEvent>
  /** the RV of the last event taken (storage bookmarks included) */
  readonly lastProcessedRV: () => bigint
}

/** "pods", "widgets.example.com": the resource a loop's name mentions */
export const qualified = (gr: { readonly group: string; readonly resource: string }): string =>
  gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`

/** cacher.go's incoming channel size */
export const INCOMING_QUEUE_SIZE = 100

const terminatedWatchers = Metric.counter("apiserver_terminated_watchers_total", {
  description: "Counter of watchers closed due to unresponsiveness."
})
const eventsDispatched = Metric.counter("apiserver_watch_cache_events_dispatched_total", {
  description: "Counter of events dispatched in watch cache."
})

export class Dispatcher extends Context.Tag("etcd-effect/kubernetes/cacher/Dispatcher")<Dispatcher, DispatcherShape>() {
  static readonly layer: Layer.Layer<Dispatcher, never, CacherConfig | IndexedWatchers> = Layer.scoped(
    Dispatcher,
    Effect.gen(function* () {
      const config = yield* CacherConfig
      const watchers = yield* IndexedWatchers
      const clock = yield* Effect.clock
      const now = () => clock.unsafeCurrentTimeMillis()
      const gr = config.groupResource
      const tagged = <T extends Metric.Metric<any, any, any>>(m: T) =>
        m.pipe(Metric.tagged("group", gr.group), Metric.tagged("resource", gr.resource)) as T
      const terminatedMetric = tagged(terminatedWatchers)
      const dispatchedMetric = tagged(eventsDispatched)
      const incoming = yield* Queue.bounded<WatchCacheEvent>(INCOMING_QUEUE_SIZE)
      yield* Effect.addFinalizer(() => Queue.shutdown(incoming))
      const budget = new TimeBudget(now)
      let lastProcessedRV = 0n

      /** dispatchEvent: non-blocking to every candidate; the blocked ones get what is left of the budget, together */
      const dispatchEvent = (e: WatchCacheEvent): Effect.Effect<void> | undefined => {
        lastProcessedRV = e.resourceVersion
        if (e.type === "BOOKMARK") return undefined // storage bookmarks only advance lastProcessedRV
        const targets: Array<CacheWatcher> = []
        watchers.candidates(e, targets)
        let blocked: Array<CacheWatcher> | undefined
        for (const w of targets) if (!w.nonblockingAdd(e)) (blocked ??= []).push(w)
        if (blocked === undefined) return undefined
        const timeout = budget.takeAvailable()
        const started = now()
        const done = new Set<CacheWatcher>()
        const waits = blocked.map((w) => Effect.map(w.add(e), () => void done.add(w)))
        return Effect.all(waits, { concurrency: "unbounded", discard: true }).pipe(
          Effect.timeout(Duration.millis(timeout)),
          Effect.ignore,
          Effect.zipRight(
            Effect.suspend(() => {
              const blockedNow = blocked!.filter((w) => !done.has(w))
              budget.returnUnused(timeout - (now() - started))
              if (blockedNow.length === 0) return Effect.void
              for (const w of blockedNow) watchers.terminate(w)
              return Effect.zipRight(
                Metric.incrementBy(terminatedMetric, blockedNow.length),
                Effect.logWarning(`Forcing ${gr.resource} watcher close due to unresponsiveness`).pipe(
                  Effect.annotateLogs({ watchers: blockedNow.length })
                )
              )
            })
          )
        )
      }

      /** the bookmark tick: due watchers get a BOOKMARK at the last processed RV, never blocking */
      const dispatchBookmarks = () => {
        if (lastProcessedRV === 0n) return
        const t = now()
        const e: WatchCacheEvent = {
          type: "BOOKMARK",
          key: "",
          object: { metadata: {} },
          attrs: { labels: {}, fields: {} },
          prevObject: undefined,
          prevAttrs: undefined,
          resourceVersion: lastProcessedRV,
          recordTime: t
        }
        for (const w of watchers.bookmarkWatchers) {
          if (w.nextBookmarkTime > t) continue
          w.nonblockingAdd(e)
          w.scheduleNextBookmark(t)
        }
      }

      const dispatchEvents = Effect.gen(function* () {
        let nextTick = now() + 1000
        for (;;) {
          const wait = Math.max(0, nextTick - now())
          const batch = yield* Effect.option(
            Effect.timeout(Queue.takeBetween(incoming, 1, INCOMING_QUEUE_SIZE), Duration.millis(wait))
          )
          if (batch._tag === "Some") {
            let dispatched = 0
            for (const e of batch.value) {
              const blocked = dispatchEvent(e)
              if (blocked !== undefined) yield* blocked
              if (e.type !== "BOOKMARK") dispatched++
            }
            if (dispatched > 0) yield* Metric.incrementBy(dispatchedMetric, dispatched)
          }
          if (now() >= nextTick) {
            dispatchBookmarks()
            // wait.Jitter(1s, 0.25)
            nextTick = now() + 1000 + Math.floor((yield* Random.next) * 250)
          }
        }
      })
      // a dead dispatcher would freeze every watch of this cache: supervised (fails the program under failOnFatal)
      yield* Effect.forkScoped(supervised(`watch cache dispatcher (${qualified(gr)})`, dispatchEvents))
      return { incoming, lastProcessedRV: () => lastProcessedRV }
    })
  )
}
