/**
 * The HTTP side of the client port: the connections cmux.ts finds are not HTTP/2 (`accept`), and
 * the HTTP/2 requests that are not gRPC (`handle`: the gRPC transport passes them on, as etcd's
 * mux does): the JSON gateway under /v3/ and /v3beta/, and etcd's /metrics, /health, /livez,
 * /readyz and /version for everything else.
 *
 * etcd wraps its client mux in a CORS handler whose default (--cors "*") allows any origin: every
 * response carries the Access-Control-Allow-* headers and OPTIONS answers 200 with no body.
 *
 * The node:http server never listens itself; it is closed with the scope: idle keep-alive
 * connections at once, the rest (a gateway watch ends with the gRPC streams) after a second.
 */
import { Effect, type Scope } from "effect"
import * as Http from "node:http"
import type { Duplex } from "node:stream"

export type RequestHandler = (req: Http.IncomingMessage, res: Http.ServerResponse) => void
export type Middleware = (req: Http.IncomingMessage, res: Http.ServerResponse, next: () => void) => void

const CORS_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["access-control-allow-headers", "accept, content-type, authorization"],
  ["access-control-allow-methods", "POST, GET, OPTIONS, PUT, DELETE"],
  ["access-control-allow-origin", "*"]
]

export interface ClientHttpServer {
  /** takes over an HTTP/1 connection (cmux's http1 handler) */
  readonly accept: (socket: Duplex) => void
  /** answers one request (an HTTP/2 one from the gRPC transport) */
  readonly handle: RequestHandler
}

export const makeClientHttpServer = (
  gateway: Middleware,
  endpoints: RequestHandler
): Effect.Effect<ClientHttpServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const sockets = new Set<Duplex>()
      const handle: RequestHandler = (req, res) => {
        for (const [name, value] of CORS_HEADERS) res.setHeader(name, value)
        if (req.method === "OPTIONS") {
          res.writeHead(200, { "content-length": 0 })
          return res.end()
        }
        gateway(req, res, () => endpoints(req, res))
      }
      const server = Http.createServer(handle)
      // malformed HTTP: a 400 and close, as Go's server does; never an error out of the process
      server.on("clientError", (_e, socket) => {
        if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
        else socket.destroy()
      })
      return {
        server,
        sockets,
        handle,
        accept: (socket: Duplex) => {
          sockets.add(socket)
          socket.once("close", () => sockets.delete(socket))
          server.emit("connection", socket)
          // the sniffer paused it to put its bytes back; the HTTP parser reads from here
          socket.resume()
        }
      }
    }),
    ({ sockets }) =>
      Effect.sync(() => {
        for (const s of sockets) {
          // a connection with no request in flight goes now, others get a second
          const idle = (s as { _httpMessage?: unknown })._httpMessage == null
          if (idle) s.destroy()
        }
        if (sockets.size > 0) {
          const force = setTimeout(() => {
            for (const s of sockets) s.destroy()
          }, 1000)
          force.unref()
        }
      })
  ).pipe(Effect.map(({ accept, handle }) => ({ accept, handle })))
