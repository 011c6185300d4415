/**
 * cacher/progress/watch_progress.go: while a read waits for the watch cache to catch up, ask etcd
 * for a progress notification every 100 ms, so a quiet resource's cache learns the current RV —
 * only where etcd answers such a request safely (storage/etcd3/feature-support.ts).
 */
import { Effect, Layer } from "effect"
import { supervised } from "../../supervision/fatal.js"
import { Storage } from "../storage/interfaces.js"
import { WatchCache } from "./watch-cache.js"

/** progressRequestPeriod */
export const PROGRESS_REQUEST_PERIOD = "100 millis"

export const progressRequesterLayer: Layer.Layer<never, never, Storage | WatchCache> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const storage = yield* Storage
    const watchCache = yield* WatchCache
    yield* Effect.forkScoped(
      supervised(
        "watch cache progress requester",
        Effect.gen(function* () {
          for (;;) {
            yield* Effect.sleep(PROGRESS_REQUEST_PERIOD)
            if (watchCache.waiting === 0) continue
            // an etcd that answers ahead of pending events would advance the cache past them
            if (storage.requestWatchProgressSupported !== undefined && !(yield* storage.requestWatchProgressSupported))
              continue
            yield* Effect.ignore(storage.requestWatchProgress)
          }
        })
      )
    )
  })
)
