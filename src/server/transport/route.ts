/**
 * A registered method of the lean transport: its definition (codecs, streaming kinds, from
 * src/proto/load.ts through unmarshal-check.ts) and its grpc-js style handler (grpc-bridge.ts), as
 * `Server.addService` takes them.
 */
import type * as grpc from "@grpc/grpc-js"
import type { HttpHandler } from "./http-stream.js"

export type MethodKind = "unary" | "serverStream" | "clientStream" | "bidi"

export interface Route {
  readonly path: string
  readonly kind: MethodKind
  readonly definition: grpc.MethodDefinition<unknown, unknown>
  readonly handler: (...args: Array<any>) => void
}

/** Where a connection's requests go (lean-server.ts' LeanGrpcServer). */
export interface Router {
  route(path: string): Route | undefined
  /** grpc-go's Unimplemented text for a path no service has */
  unknown(path: string): string
  /** a call ran: the count of calls of an unknown method, etc. are the runner's; this is for tests */
  readonly draining: boolean
  /** where a request that is not gRPC goes (etcd's mux: its content-type is not application/grpc) */
  readonly http?: HttpHandler | undefined
}

export const methodKind = (d: { readonly requestStream: boolean; readonly responseStream: boolean }): MethodKind =>
  d.requestStream ? (d.responseStream ? "bidi" : "clientStream") : d.responseStream ? "serverStream" : "unary"

/** grpc-go's words for a path no service has (server.go handleStream). */
export const unknownPathMessage = (path: string, services: ReadonlySet<string>): string => {
  const slash = path.lastIndexOf("/")
  if (!path.startsWith("/") || slash <= 0) return `malformed method name: "${path}"`
  const service = path.slice(1, slash)
  const method = path.slice(slash + 1)
  return services.has(service) ? `unknown method ${method} for service ${service}` : `unknown service ${service}`
}
