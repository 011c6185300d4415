/**
 * Closed-loop unary load: `clients` requesters, each sending its next request when the previous
 * one was answered, until `total` were sent; requester i uses connection i % conns. The same loop
 * with n requesters is a pipelined writer with n requests in flight (the putter of the watch
 * scenarios, the preloads).
 *
 * Plain callbacks: per request a frame is built and a latency sample taken; a non-zero gRPC status
 * counts as an error and the first message is kept.
 */
import type { GrpcConnection } from "../h2/grpc-client.js"
import type { LatencyHistogram } from "./latency.js"
import type { Tally } from "./result.js"

export interface UnaryLoad {
  readonly path: string
  /** the i-th request frame */
  readonly frame: (i: number) => Uint8Array
  /** Checks a successful answer's protobuf bytes; a string is an error to count. */
  readonly check?: (body: Uint8Array) => string | undefined
}

export class ClosedLoop {
  sent = 0
  answered = 0
  ok = 0
  private stopped = false
  private onDone: (() => void) | undefined

  constructor(
    private readonly conns: ReadonlyArray<GrpcConnection>,
    private readonly clients: number,
    readonly total: number,
    private readonly load: UnaryLoad,
    private readonly tally: Tally,
    private readonly latency?: LatencyHistogram
  ) {}

  /** Starts every requester; `onDone` runs once all `total` are answered. */
  start(onDone: () => void): void {
    this.onDone = onDone
    if (this.total === 0) onDone()
    const n = Math.min(this.clients, this.total)
    for (let c = 0; c < n; c++) this.next(c)
  }

  /** Sends nothing more (answers still arriving are ignored). */
  stop(): void {
    this.stopped = true
  }

  get done(): boolean {
    return this.answered === this.total
  }

  private next(client: number): void {
    if (this.stopped || this.sent >= this.total) return
    const i = this.sent++
    const conn = this.conns[client % this.conns.length]!
    const sentAt = performance.now()
    conn.call(this.load.path, this.load.frame(i), (code, message, body) => {
      if (this.stopped) return
      this.latency?.record(performance.now() - sentAt)
      if (code !== 0) {
        this.tally.error(message)
      } else {
        const problem = this.load.check?.(body!)
        if (problem === undefined) this.ok++
        else this.tally.error(problem)
      }
      this.answered++
      if (this.answered === this.total) this.onDone?.()
      else this.next(client)
    })
  }
}
