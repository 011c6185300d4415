/**
 * A write staged now whose outcome comes later, once its batch is durable and its revision
 * committed: what the store's `putNow`/`deleteRangeNow`/`txnNow` return when the backend has not
 * acknowledged the batch yet. A plain callback object, not an Effect: the server's unary path
 * (server/grpc-bridge.ts) answers the call from `onDone` without a fiber; `toEffect` is the wait for
 * Effect callers.
 */
import { Effect, Exit } from "effect"

export class PendingWrite<A, E> {
  private exit: Exit.Exit<A, E> | undefined = undefined
  // (typed loosely so that a PendingWrite<A> is a PendingWrite<unknown>: it is covariant in use)
  private waiters: Array<(exit: Exit.Exit<any, any>) => void> | undefined = undefined

  /** the outcome, once known */
  poll(): Exit.Exit<A, E> | undefined {
    return this.exit
  }

  /** Calls `f` once with the outcome: now when it is known, else when it is. */
  onDone(f: (exit: Exit.Exit<A, E>) => void): void {
    if (this.exit !== undefined) f(this.exit)
    else (this.waiters ??= []).push(f)
  }

  /** Sets the outcome (the first call wins) and tells the waiters. */
  complete(exit: Exit.Exit<A, E>): void {
    if (this.exit !== undefined) return
    this.exit = exit
    const ws = this.waiters
    this.waiters = undefined
    if (ws === undefined) return
    for (const w of ws) {
      try {
        w(exit)
      } catch (e) {
        // a waiter is the server's answer or an Effect's resumption, neither of which throws: a
        // bug, reported as an uncaught exception rather than lost (the other waiters still run)
        queueMicrotask(() => {
          throw e
        })
      }
    }
  }

  /** The outcome mapped by `f` (a throw: a defect), as a new pending write or an Exit. */
  map<B>(f: (a: A) => B): PendingWrite<B, E> {
    const out = new PendingWrite<B, E>()
    this.onDone((exit) => out.complete(mapExit(exit, f)))
    return out
  }
}

const mapExit = <A, B, E>(exit: Exit.Exit<A, E>, f: (a: A) => B): Exit.Exit<B, E> => {
  if (Exit.isFailure(exit)) return Exit.failCause(exit.cause)
  try {
    return Exit.succeed(f(exit.value))
  } catch (e) {
    return Exit.die(e)
  }
}

/** What the write fast path returns: the outcome now (checks failed, or durable at once), or later. */
export type WriteResult<A, E> = Exit.Exit<A, E> | PendingWrite<A, E>

/** Maps a fast-path result's success value (a throw in `f`: a defect). */
export const mapResult = <A, B, E>(r: WriteResult<A, E>, f: (a: A) => B): WriteResult<B, E> =>
  r instanceof PendingWrite ? r.map(f) : mapExit(r, f)

/**
 * A fast-path result as an Effect. The wait is uninterruptible, as the store's durability wait
 * always was: an interrupted caller still ends only once its write's outcome is known.
 */
export const toEffect = <A, E>(r: WriteResult<A, E>): Effect.Effect<A, E> => {
  if (!(r instanceof PendingWrite)) return r
  const known = r.poll()
  if (known !== undefined) return known
  return Effect.uninterruptible(Effect.async<A, E>((resume) => r.onDone(resume)))
}
