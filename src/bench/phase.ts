/**
 * A phase of a scenario (create the watchers, deliver the events, ...) as one Effect around plain
 * callbacks: `body` starts the work and the callbacks call `finish` when it is done — no Effect per
 * message. The phase fails with a BenchError when
 * - a connection or stream breaks (anything registered with the run's `Breakage` reports it), or
 * - nothing moves: the `progress` counter has not changed for `stallMs` (a server that stops
 *   answering gives a clear reason, never a hang). The counter is polled by a timer, so the hot
 *   path pays nothing for the watchdog.
 * Interruption (or the end of the phase) runs the cleanup `body` returned.
 */
import { Effect } from "effect"
import { BenchError } from "./errors.js"

/** The first breakage of a connection or stream during a run, handed to whichever phase is active. */
export class Breakage {
  reason: string | undefined
  private listener: ((reason: string) => void) | undefined

  report = (reason: string): void => {
    if (this.reason !== undefined) return
    this.reason = reason
    this.listener?.(reason)
  }

  /** @internal the active phase */
  listen(listener: ((reason: string) => void) | undefined): void {
    this.listener = listener
  }
}

export interface PhaseControl<A> {
  readonly finish: (a: A) => void
  readonly fail: (reason: string) => void
}

export interface PhaseOptions {
  /** names the phase in failure reasons: "creating watchers" */
  readonly name: string
  readonly stallMs: number
  readonly breakage: Breakage
  /** any count that grows while the phase makes progress */
  readonly progress: () => number
}

export const phase = <A>(
  options: PhaseOptions,
  body: (control: PhaseControl<A>) => (() => void) | void
): Effect.Effect<A, BenchError> =>
  Effect.async<A, BenchError>((resume) => {
    let settled = false
    let cleanup: (() => void) | void = undefined
    let last = options.progress()
    let lastChange = Date.now()
    const end = () => {
      settled = true
      clearInterval(watchdog)
      options.breakage.listen(undefined)
      cleanup?.()
    }
    const control: PhaseControl<A> = {
      finish: (a) => {
        if (settled) return
        end()
        resume(Effect.succeed(a))
      },
      fail: (reason) => {
        if (settled) return
        end()
        resume(Effect.fail(new BenchError({ reason: `${options.name}: ${reason}` })))
      }
    }
    const watchdog = setInterval(
      () => {
        const now = Date.now()
        const current = options.progress()
        if (current !== last) {
          last = current
          lastChange = now
        } else if (now - lastChange >= options.stallMs) {
          control.fail(`no progress for ${(options.stallMs / 1000).toFixed(1)} s (the server stopped answering?)`)
        }
      },
      Math.max(10, Math.min(1000, options.stallMs / 4))
    )
    if (options.breakage.reason !== undefined) {
      control.fail(options.breakage.reason)
      return
    }
    options.breakage.listen(control.fail)
    try {
      cleanup = body(control)
    } catch (e) {
      control.fail(e instanceof Error ? e.message : String(e))
    }
    // finish may have been called synchronously inside body: clean up what it returned too.
    if (settled) cleanup?.()
    return Effect.sync(() => {
      if (!settled) end()
    })
  })
