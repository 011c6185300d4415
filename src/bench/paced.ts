/**
 * Open-loop unary load at a fixed rate: request i is due at start + i/rate, whether or not earlier
 * ones were answered (a slow server must show up as latency, not as a slower schedule). Timers fire
 * at millisecond granularity; every request already due is sent on each tick.
 */
import type { GrpcConnection } from "../h2/grpc-client.js"
import type { UnaryLoad } from "./requesters.js"
import type { Tally } from "./result.js"

export class PacedLoop {
  sent = 0
  answered = 0
  ok = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private start0 = 0
  private onDone: (() => void) | undefined

  constructor(
    private readonly conn: GrpcConnection,
    private readonly rate: number,
    readonly total: number,
    private readonly load: UnaryLoad,
    private readonly tally: Tally
  ) {}

  start(onDone: () => void): void {
    this.onDone = onDone
    this.start0 = performance.now()
    this.tick()
  }

  stop(): void {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
  }

  get done(): boolean {
    return this.answered === this.total
  }

  private tick = (): void => {
    this.timer = undefined
    if (this.stopped) return
    const elapsed = performance.now() - this.start0
    const due = Math.min(this.total, Math.floor((elapsed * this.rate) / 1000) + 1)
    while (this.sent < due) this.send(this.sent++)
    if (this.sent < this.total) {
      const nextAt = (this.sent * 1000) / this.rate
      this.timer = setTimeout(this.tick, Math.max(0, nextAt - elapsed))
    }
  }

  private send(i: number): void {
    this.conn.call(this.load.path, this.load.frame(i), (code, message, body) => {
      if (this.stopped) return
      if (code !== 0) {
        this.tally.error(message)
      } else {
        const problem = this.load.check?.(body!)
        if (problem === undefined) this.ok++
        else this.tally.error(problem)
      }
      this.answered++
      if (this.answered === this.total) this.onDone?.()
    })
  }
}
