/**
 * --grpc-keepalive-min-time: grpc-go's keepalive EnforcementPolicy as etcd configures it
 * (MinTime from the flag, PermitWithoutStream false). grpc-js enforces nothing on client pings,
 * so each HTTP/2 session of the server gets this policy:
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

/** Watches one session's pings. */
export const enforcePingPolicy = (session: http2.ServerHttp2Session, minTimeMs: number): void => {
  let lastPingAt = -Infinity
  let strikes = 0
  let open = 0
  /** the socket's bytes written at the last ping: more since then than its ACK means a response went out */
  let writtenAtPing = -1
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    open++
    stream.once("close", () => {
      open--
      strikes = 0
    })
  })
  session.on("ping", () => {
    const written = session.socket?.bytesWritten ?? -1
    if (writtenAtPing >= 0 && written - writtenAtPing > PING_ACK_BYTES) strikes = 0
    writtenAtPing = written
    const now = performance.now()
    const window = open > 0 ? minTimeMs : NO_STREAM_PING_INTERVAL_MS
    if (lastPingAt + window > now) strikes++
    lastPingAt = now
    if (strikes > MAX_PING_STRIKES && !session.destroyed) {
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
