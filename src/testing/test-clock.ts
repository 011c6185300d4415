/**
 * The clock and log level a test Layer's servers run on: Effect's live clock and warnings only,
 * whatever the test around them uses. A test of @effect/vitest runs on the TestClock, which moves
 * only when the test adjusts it; a server on it would never run its time-driven loops (the watch
 * sync loop that catches up watchers from a past revision, lease expiry, keep-alives) and the
 * obvious test — watch from an earlier revision — would hang. Only the fibers the server forks
 * while this region runs get the live clock; the test's own `Effect.sleep` stays on the TestClock.
 */
import { Clock, Effect, Logger, LogLevel } from "effect"

/** Runs `self` (and the fibers it forks) on the live clock, logging warnings and errors only. */
export const onLiveClock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(Effect.withClock(Clock.make()), Logger.withMinimumLogLevel(LogLevel.Warning))
