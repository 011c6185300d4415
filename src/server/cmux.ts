/**
 * One port, two protocols — etcd's cmux (embed/serve.go): every client URL is one TCP listener
 * whose connections are told apart by their first bytes. A connection that opens with the HTTP/2
 * preface ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", what every gRPC client sends first) goes to
 * grpc-js through `Server.createConnectionInjector`; anything else is HTTP/1.x and goes to a
 * node:http server (the JSON gateway and etcd's /metrics, /health, /version, /livez, /readyz).
 *
 * The sniff reads at most the preface's 24 bytes, puts them back (`unshift`) and hands the socket
 * over; from then on the protocol's own parser reads it natively (http2 sessions take the bytes
 * already buffered first), so the gRPC path has no copy or listener of ours per message.
 *
 * TLS (later) fits in front of the sniff: wrap the accepted socket, then decide by the negotiated
 * ALPN protocol ("h2" → gRPC) and fall back to the sniff when none was negotiated — `route` takes
 * any socket, not only the listener's.
 */
import { Effect, type Scope } from "effect"
import * as net from "node:net"
import type { Duplex } from "node:stream"
import type { ListenAddress } from "./config.js"
import { ServeError } from "./serve-error.js"

/** RFC 7540 §3.5: the client connection preface. */
export const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1")

export type Protocol = "grpc" | "http1"

/** Where each kind of connection goes. Both take ownership of the socket. */
export interface ProtocolHandlers {
  readonly grpc: (socket: Duplex) => void
  readonly http1: (socket: Duplex) => void
}

/** The protocol the bytes read so far decide, or undefined while they are a strict preface prefix. */
export const classify = (head: Uint8Array): Protocol | undefined => {
  const n = Math.min(head.length, HTTP2_PREFACE.length)
  for (let i = 0; i < n; i++) if (head[i] !== HTTP2_PREFACE[i]) return "http1"
  return n === HTTP2_PREFACE.length ? "grpc" : undefined
}

/**
 * Reads a socket's first bytes until they tell the protocol, puts them back and hands the socket
 * to its handler. A connection closed before that is dropped.
 */
export const route = (socket: net.Socket, handlers: ProtocolHandlers): void => {
  let head: Buffer = Buffer.alloc(0)
  const cleanup = () => {
    socket.removeListener("data", onData)
    socket.removeListener("error", onError)
    socket.removeListener("end", onError)
  }
  const onError = () => {
    cleanup()
    socket.destroy()
  }
  const onData = (chunk: Buffer) => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
    const protocol = classify(head)
    if (protocol === undefined) return
    cleanup()
    socket.pause()
    socket.unshift(head)
    handlers[protocol](socket)
  }
  socket.on("data", onData)
  socket.once("error", onError)
  socket.once("end", onError)
}

/** A bound client listener. */
export interface ClientListener {
  readonly port: number
  /** Stops accepting and drops connections still being sniffed (handed-over ones are the handlers'). */
  readonly close: () => void
}

const errorText = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

/** The one-line start-up error of a failed listen, as etcd words it. */
export const listenError = (addr: ListenAddress, cause: unknown): ServeError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return new ServeError({
    reason: "Listen",
    message: code === "EADDRINUSE"
      ? `listen tcp ${addr.host}:${addr.port}: bind: address already in use`
      : `listen tcp ${addr.host}:${addr.port}: ${errorText(cause).split("\n")[0]}`
  })
}

/** Listens on `addr` (port 0 picks one) and routes every connection; closed with the scope. */
export const listenClient = (
  addr: ListenAddress,
  handlers: ProtocolHandlers
): Effect.Effect<ClientListener, ServeError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<ClientListener, ServeError>((resume) => {
      const sniffing = new Set<net.Socket>()
      const server = net.createServer({ noDelay: true }, (socket) => {
        sniffing.add(socket)
        const done = () => sniffing.delete(socket)
        socket.once("close", done)
        route(socket, {
          grpc: (s) => {
            done()
            socket.removeListener("close", done)
            handlers.grpc(s)
          },
          http1: (s) => {
            done()
            socket.removeListener("close", done)
            handlers.http1(s)
          }
        })
      })
      const onError = (e: unknown) => resume(Effect.fail(listenError(addr, e)))
      server.once("error", onError)
      // URL hostnames keep IPv6 brackets ("[::1]"); listen() wants the bare address
      server.listen({ host: addr.host.replace(/^\[(.*)\]$/, "$1"), port: addr.port }, () => {
        server.removeListener("error", onError)
        // after start-up an accept error is the connection's business, not the process's
        server.on("error", () => {})
        const port = (server.address() as net.AddressInfo).port
        resume(Effect.succeed({
          port,
          close: () => {
            server.close()
            for (const s of sniffing) s.destroy()
            sniffing.clear()
          }
        }))
      })
    }),
    (listener) => Effect.sync(() => listener.close())
  )
