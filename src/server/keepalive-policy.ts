/**
 * --grpc-keepalive-min-time: grpc-go's keepalive EnforcementPolicy as etcd configures it
 * (MinTime from the flag, PermitWithoutStream false). grpc-js enforces nothing on client pings,
 * so each HTTP/2 session of the server gets this policy (and each connection of the lean transport):
 *
 * - a ping that comes sooner than MinTime after the previous one, while calls are open, is a
 *   strike; with no call open any ping within 2 h of the previous is (grpc-go's
 *   defaultPingTimeout: keepalive should be off without streams);
 * - anything the server sent since the last ping besides that ping's ACK (headers, data: grpc-go
 *   resets the strikes when it writes them) resets the strikes, so a long call that streams, with
 *   a client that pings as data comes (grpc-go's BDP pings), is not refused; so does a call's end;
 * - the third strike (more than maxPingStrikes = 2) ends the connection with GOAWAY
 *   ENHANCE_YOUR_CALM and debug data "too_many_pings", as grpc-go does.
 */
import type * as grpc from "@grpc/grpc-js"
import * as http2 from "node:http2"

const MAX_PING_STRIKES = 2
const NO_STREAM_PING_INTERVAL_MS = 2 * 60 * 60 * 1000
/** at most what a PING ACK takes on the socket: 17 bytes, or one TLS record of them */
const PING_ACK_BYTES = 64

/**
 * The policy's state for one connection, for either transport: the lean transport
 * (src/server/transport/incoming-frames.ts) feeds it directly, grpc-js' sessions through
 * `enforcePingPolicy`.
 */
export class PingStrikes {
  private lastPingAt = -Infinity
  private strikes = 0

  constructor(private readonly minTimeMs: number) {}

  /** Headers or data went out, or a call ended: the strikes start over. */
  reset(): void {
    this.strikes = 0
  }

  /** A client ping; true when it is one too many (GOAWAY ENHANCE_YOUR_CALM "too_many_pings"). */
  onPing(openStreams: number): boolean {
    const now = performance.now()
    const window = openStreams > 0 ? this.minTimeMs : NO_STREAM_PING_INTERVAL_MS
    if (this.lastPingAt + window > now) this.strikes++
    this.lastPingAt = now
    return this.strikes > MAX_PING_STRIKES
  }
}

/** Watches one session's pings. */
export const enforcePingPolicy = (session: http2.ServerHttp2Session, minTimeMs: number): void => {
  const policy = new PingStrikes(minTimeMs)
  let open = 0
  /** the socket's bytes written at the last ping: more since then than its ACK means a response went out */
  let writtenAtPing = -1
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    open++
    stream.once("close", () => {
      open--
      policy.reset()
    })
  })
  session.on("ping", () => {
    const written = session.socket?.bytesWritten ?? -1
    if (writtenAtPing >= 0 && written - writtenAtPing > PING_ACK_BYTES) policy.reset()
    writtenAtPing = written
    if (policy.onPing(open) && !session.destroyed) {
      session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from("too_many_pings"))
      // let the GOAWAY frame out before the connection goes
      setImmediate(() => session.destroy())
    }
  })
}

/**
 * Applies the policy to every session of the grpc-js server's connection injectors. grpc-js keeps
 * the http2 servers behind its injectors in a private map (`http2Servers`); this is the one place
 * that reaches into it (checked: a missing map fails loudly at start-up, not silently).
 */
export const applyPingPolicy = (server: grpc.Server, minTimeMs: number): void => {
  const servers = (server as unknown as { http2Servers?: Map<http2.Http2Server, unknown> }).http2Servers
  if (!(servers instanceof Map)) throw new Error("etcd-effect: grpc-js has no http2Servers map (keepalive policy)")
  for (const h2 of servers.keys()) {
    h2.on("session", (session: http2.ServerHttp2Session) => enforcePingPolicy(session, minTimeMs))
  }
}
