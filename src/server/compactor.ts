/**
 * Auto-compaction (etcd's v3compactor), a fiber in the server's scope:
 *
 * - periodic (retention T): every T/10 (T capped at 1 h) it samples the revision; once T has passed
 *   since the last success (the first time: T itself, later: min(T, 1 h)), it compacts at the
 *   revision sampled T ago. So history younger than T is always kept.
 * - revision (retention N): every 5 minutes, compacts at current revision - N unless that is <= 0
 *   or the same as last time.
 *
 * "required revision has been compacted" counts as success (someone compacted further already);
 * other failures are logged and retried at the next check; the loop itself dying fails the member
 * (src/supervision/fatal.ts). Time is Effect's Clock.
 */
import { Clock, Duration, Effect } from "effect"
import { Errors } from "../errors.js"
import { supervised } from "../supervision/fatal.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import type { AutoCompaction } from "./config.js"

/** etcd's revInterval for the revision compactor. */
export const REVISION_CHECK_INTERVAL = Duration.minutes(5)

const compactedText = Errors.compacted().message

const compactAt = (store: MvccStoreShape, rev: number): Effect.Effect<boolean> =>
  Effect.logInfo("starting auto-compaction").pipe(
    Effect.annotateLogs({ revision: rev }),
    Effect.zipRight(store.compact(rev)),
    Effect.as(true),
    Effect.catchAll((e) =>
      e.message === compactedText
        ? Effect.succeed(true)
        : Effect.logWarning("auto-compaction failed; will retry", e.message).pipe(
            Effect.annotateLogs({ revision: rev }),
            Effect.as(false)
          )
    )
  )

const periodic = (store: MvccStoreShape, period: Duration.Duration): Effect.Effect<never> =>
  Effect.gen(function* () {
    const periodMs = Duration.toMillis(period)
    const compactIntervalMs = Math.min(periodMs, 3_600_000)
    const retryMs = Math.max(1, compactIntervalMs / 10)
    const retentions = Math.floor(periodMs / retryMs) + 1
    const revs: Array<number> = []
    let lastSuccess = yield* Clock.currentTimeMillis
    let baseInterval = periodMs
    while (true) {
      revs.push(store.rev())
      if (revs.length > retentions) revs.shift()
      yield* Effect.sleep(Duration.millis(retryMs))
      const now = yield* Clock.currentTimeMillis
      if (now - lastSuccess < baseInterval) continue
      // after the first wait of a whole period, compact every compactInterval
      if (baseInterval === periodMs) baseInterval = compactIntervalMs
      if (yield* compactAt(store, revs[0]!)) lastSuccess = yield* Clock.currentTimeMillis
    }
  })

const byRevision = (store: MvccStoreShape, retention: number): Effect.Effect<never> =>
  Effect.gen(function* () {
    let prev = 0
    while (true) {
      yield* Effect.sleep(REVISION_CHECK_INTERVAL)
      const rev = store.rev() - retention
      if (rev <= 0 || rev === prev) continue
      if (yield* compactAt(store, rev)) prev = rev
    }
  })

/** The compactor loop for `config`, supervised (runs until interrupted; fork it in a scope). */
export const runCompactor = (store: MvccStoreShape, config: AutoCompaction): Effect.Effect<void> =>
  supervised(
    "auto-compaction loop",
    config.mode === "periodic" ? periodic(store, config.retention) : byRevision(store, config.retention)
  )
