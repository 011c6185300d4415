/**
 * A registered method of the lean transport: its definition (codecs, streaming kinds, from
 * src/proto/load.ts through unmarshal-check.ts) and its grpc-js style handler (grpc-bridge.ts), as
 * `Server.addService` takes them.
 */
import type * as grpc from "@grpc/grpc-js"

export type MethodKind = "unary" | "serverStream" | "clientStream" | "bidi"

export interface Route {
  readonly path: string
  readonly kind: MethodKind
  readonly definition: grpc.MethodDefinition<unknown, unknown>
  readonly handler: (...args: Array<any>) => void
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
