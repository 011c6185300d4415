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
 * TLS (https client URLs) sits in front of the sniff, as etcd's TLS listener sits in front of its
 * mux: the accepted socket goes through a node:tls server that never listens (the options from a
 * TlsSource, swapped when the certificate files change), then the negotiated ALPN protocol decides
 * ("h2" → gRPC, "http/1.1" → HTTP/1), and the sniff decides when the client offered none.
 */
import { Effect, type Scope } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import type { Duplex } from "node:stream"
import type { ListenAddress } from "./config.js"
import { listenError } from "./listener.js"
import type { ServeError } from "./serve-error.js"
import type { TlsSource } from "./tls-context.js"

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
  if (socket instanceof tls.TLSSocket && socket.alpnProtocol === false) {
    // node's http2 server drops TLS connections without a negotiated protocol ("unknownProtocol");
    // a client that spoke the h2 preface without ALPN is still gRPC, as for etcd's sniffing mux
    const original = handlers
    handlers = {
      grpc: (s) => {
        ;(socket as { alpnProtocol: string | false }).alpnProtocol = "h2"
        original.grpc(s)
      },
      http1: original.http1
    }
  }
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

/**
 * TLS termination for one listener: `accept` takes a raw socket; after the handshake the socket
 * goes to its protocol by ALPN, or through the sniff. A failed handshake (no or a foreign client
 * certificate with --client-cert-auth, a plain-text client) just closes the connection.
 */
const tlsTerminator = (source: TlsSource) => {
  const server = tls.createServer(source.options())
  let generation = source.generation()
  // the raw connections in handshake, by peer address (unique among open connections), with
  // where each goes once secure
  const pending = new Map<string, ProtocolHandlers>()
  const peer = (s: net.Socket) => `${s.remoteAddress}:${s.remotePort}`
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    const key = peer(socket)
    const handlers = pending.get(key)
    pending.delete(key)
    if (handlers === undefined) return socket.destroy()
    if (socket.alpnProtocol === "h2") handlers.grpc(socket)
    else if (socket.alpnProtocol === "http/1.1") handlers.http1(socket)
    else route(socket, handlers)
  })
  server.on("tlsClientError", (_e, socket) => socket.destroy())
  return {
    accept: (socket: net.Socket, handlers: ProtocolHandlers) => {
      const options = source.options()
      if (source.generation() !== generation) {
        generation = source.generation()
        server.setSecureContext(options)
      }
      const key = peer(socket)
      pending.set(key, handlers)
      socket.once("close", () => {
        if (pending.get(key) === handlers) pending.delete(key)
      })
      server.emit("connection", socket)
    }
  }
}

/**
 * Listens on `addr` (port 0 picks one) and routes every connection, through TLS first when a
 * source is given; closed with the scope.
 */
export const listenClient = (
  addr: ListenAddress,
  handlers: ProtocolHandlers,
  tlsSource?: TlsSource,
  /** a connection not handed over (TLS handshake and sniff) within this is closed: slowloris */
  sniffTimeoutMs?: number
): Effect.Effect<ClientListener, ServeError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<ClientListener, ServeError>((resume) => {
      const sniffing = new Set<net.Socket>()
      const secure = tlsSource === undefined ? undefined : tlsTerminator(tlsSource)
      const server = net.createServer({ noDelay: true }, (socket) => {
        sniffing.add(socket)
        const timer =
          sniffTimeoutMs === undefined ? undefined : setTimeout(() => socket.destroy(), sniffTimeoutMs).unref()
        const done = () => {
          sniffing.delete(socket)
          if (timer !== undefined) clearTimeout(timer)
        }
        socket.once("close", done)
        const handOver: ProtocolHandlers = {
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
        }
        if (secure === undefined) route(socket, handOver)
        else secure.accept(socket, handOver)
      })
      const onError = (e: unknown) => resume(Effect.fail(listenError(addr, e)))
      server.once("error", onError)
      // URL hostnames keep IPv6 brackets ("[::1]"); listen() wants the bare address
      server.listen({ host: addr.host.replace(/^\[(.*)\]$/, "$1"), port: addr.port }, () => {
        server.removeListener("error", onError)
        // after start-up an accept error is the connection's business, not the process's
        server.on("error", () => {})
        const port = (server.address() as net.AddressInfo).port
        resume(
          Effect.succeed({
            port,
            close: () => {
              server.close()
              for (const s of sniffing) s.destroy()
              sniffing.clear()
            }
          })
        )
      })
    }),
    (listener) => Effect.sync(() => listener.close())
  )
