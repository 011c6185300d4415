/**
 * The lean gRPC transport's server: the registered methods (`addService`, grpc-js' shape, so the
 * same definitions and handlers serve both transports) and the open connections
 * (connection.ts). The server layer (server.ts) owns its lifetime: `close` sends GOAWAY on every
 * connection and closes them when their calls have ended, forcibly after the timeout.
 */
import type * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import type { Duplex } from "node:stream"
import { type ConnectionOptions, H2ServerConnection } from "./connection.js"
import type { HttpHandler } from "./http-stream.js"
import { methodKind, type Route, type Router, unknownPathMessage } from "./route.js"

export class LeanGrpcServer implements Router {
  private readonly routes = new Map<string, Route>()
  private readonly services = new Set<string>()
  readonly connections = new Set<H2ServerConnection>()
  draining = false
  /** the HTTP handlers of the client port, for requests that are not gRPC */
  http: HttpHandler | undefined = undefined

  constructor(private readonly options: ConnectionOptions) {}

  addService(definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation): void {
    for (const [name, def] of Object.entries(definition)) {
      const handler = impl[name]
      if (typeof handler !== "function") continue
      const path = def.path
      this.services.add(path.slice(1, path.lastIndexOf("/")))
      this.routes.set(path, {
        path,
        kind: methodKind(def),
        definition: def as grpc.MethodDefinition<unknown, unknown>,
        handler: handler as (...args: Array<any>) => void
      })
    }
  }

  route(path: string): Route | undefined {
    return this.routes.get(path)
  }

  unknown(path: string): string {
    return unknownPathMessage(path, this.services)
  }

  /** A socket whose next bytes are the client preface (cmux.ts put them back). */
  accept(socket: Duplex): void {
    if (this.draining) {
      socket.destroy()
      return
    }
    const c = new H2ServerConnection(socket, this, this.options, (closed) => this.connections.delete(closed))
    this.connections.add(c)
    c.start()
  }

  /** GOAWAY everywhere; the connections close as their calls end, all of them after `timeout`. */
  close(timeout: Duration.DurationInput): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.draining = true
      for (const c of this.connections) c.goaway()
      const allClosed = Effect.async<void>((resume) => {
        const poll = setInterval(() => {
          if (this.connections.size === 0) {
            clearInterval(poll)
            resume(Effect.void)
          }
        }, 10)
        return Effect.sync(() => clearInterval(poll))
      })
      // interruptible: this runs as a scope finalizer, where the timeout could not interrupt it otherwise
      return allClosed.pipe(
        Effect.interruptible,
        Effect.timeoutOption(timeout),
        Effect.zipRight(
          Effect.sync(() => {
            for (const c of [...this.connections]) c.destroy()
          })
        )
      )
    })
  }
}
