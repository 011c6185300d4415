/**
 * The server's own keepalive pings on one connection of the lean transport (grpc-go's
 * http2Server.keepalive, `--grpc-keepalive-interval/-timeout`): a PING every interval, and the
 * connection ends when one is unanswered for the timeout. The client's pings are another matter:
 * keepalive-policy.ts' PingStrikes judges them.
 */
import type { FrameOutput } from "./frame-output.js"

const PING_DATA = Buffer.alloc(8)

export class KeepalivePings {
  private interval: ReturnType<typeof setInterval> | undefined
  private ackTimer: ReturnType<typeof setTimeout> | undefined
  private stopped = false

  constructor(
    private readonly output: FrameOutput,
    /** 0: no pings */
    private readonly intervalMs: number,
    /** 0: an unanswered ping never ends the connection */
    private readonly timeoutMs: number,
    private readonly onTimeout: () => void
  ) {}

  start(): void {
    if (this.intervalMs > 0) this.interval = setInterval(() => this.ping(), this.intervalMs)
  }

  /** The client's PING ACK. */
  acked(): void {
    if (this.ackTimer !== undefined) clearTimeout(this.ackTimer)
    this.ackTimer = undefined
  }

  stop(): void {
    this.stopped = true
    this.acked()
    if (this.interval !== undefined) clearInterval(this.interval)
  }

  private ping(): void {
    if (this.ackTimer !== undefined || this.stopped) return
    this.output.ping(0, PING_DATA, 0)
    if (this.timeoutMs > 0) this.ackTimer = setTimeout(this.onTimeout, this.timeoutMs)
  }
}
