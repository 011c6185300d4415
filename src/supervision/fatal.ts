/**
 * Supervision of a member's background loops: the watch sync and victim loops, the lease expiry
 * loop, the store's compaction worker and the auto-compactor. Each runs forever in its layer's scope;
 * one that ends for any reason other than that scope closing leaves the member running without it
 * (no catch-up, no expiry, compactions that never finish). etcd panics in such cases; here the loop
 * reports to the `Fatal` service and the member's program fails with a `LoopDied` error, through
 * the Effect error channel — the CLI prints it as one line and exits non-zero.
 *
 * `Fatal` is a Context.Reference: layers need not list it, and a program that provides none (a test,
 * a benchmark) gets the default, which logs the death at error level. `failOnFatal` provides one that
 * fails the program it wraps.
 */
import { Cause, Context, Deferred, Effect, Exit, Schema } from "effect"

/** A background loop of the member ended: the member cannot go on without it. */
export class LoopDied extends Schema.TaggedError<LoopDied>()("LoopDied", {
  /** which loop, e.g. "watch sync loop" */
  loop: Schema.String,
  message: Schema.String
}) {}

/** What a background loop reports its death to. */
export interface FatalShape {
  /** Called once by a loop that ended other than by interruption. */
  readonly loopDied: (error: LoopDied) => Effect.Effect<void>
}

/** Where the member's background loops report their death; the default logs it, `failOnFatal`'s fails the program. */
export class Fatal extends Context.Reference<Fatal>()("etcd-effect/Fatal", {
  // nobody to fail: at least not silent (the runtime reports a dead forked fiber at debug level)
  defaultValue: (): FatalShape => ({ loopDied: (e) => Effect.logError(e.message) })
}) {}

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  return e instanceof Error ? e.message : String(e)
}

/**
 * The loop, reporting to `Fatal` when it ends other than by interruption (its scope closing).
 * Fork it with `Effect.forkScoped`; the service is resolved once, here.
 */
export const supervised = <A, E, R>(loop: string, body: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  Effect.flatMap(Fatal, (fatal) =>
    body.pipe(
      Effect.onExit((exit) => {
        if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return Effect.void
        const why = Exit.isFailure(exit) ? describeCause(exit.cause) : "it returned"
        return fatal.loopDied(new LoopDied({ loop, message: `${loop} died: ${why}` }))
      }),
      // reported above: the fiber itself ends quietly
      Effect.catchAllCause(() => Effect.void)
    )
  )

/**
 * Runs `program` with a `Fatal` that fails it: the first loop to die interrupts the program (its
 * scopes close, layers release) and the result is that loop's `LoopDied`.
 */
export const failOnFatal = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E | LoopDied, R> =>
  Effect.flatMap(Deferred.make<never, LoopDied>(), (died) =>
    Effect.raceFirst(
      Effect.provideService(program, Fatal, { loopDied: (e) => Effect.asVoid(Deferred.fail(died, e)) }),
      Deferred.await(died)
    )
  )
