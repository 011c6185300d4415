/**
 * cacher/ready.go: Pending ⇄ Ready → Stopped. While pending, watches and lists get 429 with a
 * Retry-After that grows with the downtime: clamp(e^(0.06 · seconds down), 1, 30).
 */
import { Context, Effect, Layer } from "effect"
import { newTooManyRequests, type TooManyRequests } from "../api/status.js"

/** ready.go's ready as the Cacher's parts see it */
export interface ReadyShape {
  readonly isReady: boolean
  /** bumped on every transition to Ready (a watch registered across a relist is closed) */
  readonly generation: number
  setReady(): void
  /** back to Pending with the reason (a relist failed or the watch broke) */
  setError(err: string | undefined): void
  stop(): void
  /** the 429 a request gets while the cache is not ready */
  notReady(): TooManyRequests
}

class ReadyState implements ReadyShape {
  private state: "Pending" | "Ready" | "Stopped" = "Pending"
  private since: number
  private lastError: string | undefined
  /** bumped on every transition to Ready (a watch registered across a relist is closed) */
  generation = 0

  constructor(private readonly now: () => number) {
    this.since = now()
  }

  get isReady(): boolean {
    return this.state === "Ready"
  }

  setReady(): void {
    if (this.state === "Stopped") return
    this.state = "Ready"
    this.generation++
    this.lastError = undefined
  }

  setError(err: string | undefined): void {
    if (this.state === "Stopped") return
    if (this.state === "Ready") this.since = this.now()
    this.state = "Pending"
    this.lastError = err
  }

  stop(): void {
    this.state = "Stopped"
  }

  /** the 429 a request gets while the cache is not ready */
  notReady(): TooManyRequests {
    const down = (this.now() - this.since) / 1000
    const retry = Math.min(30, Math.max(1, Math.round(Math.exp(0.06 * down))))
    if (this.state === "Stopped") return newTooManyRequests("apiserver cacher is stopped", retry)
    return newTooManyRequests(
      `storage is (re)initializing${this.lastError === undefined ? "" : `: ${this.lastError}`}`,
      retry
    )
  }
}

/** The Cacher's ready state as a service; stopped when the Cacher's scope closes. */
export class Ready extends Context.Tag("etcd-effect/kubernetes/cacher/Ready")<Ready, ReadyShape>() {
  static readonly layer: Layer.Layer<Ready> = Layer.scoped(
    Ready,
    Effect.gen(function* () {
      const clock = yield* Effect.clock
      const ready = new ReadyState(() => clock.unsafeCurrentTimeMillis())
      yield* Effect.addFinalizer(() => Effect.sync(() => ready.stop()))
      return ready
    })
  )
}
