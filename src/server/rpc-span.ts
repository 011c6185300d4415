/**
 * A span per unary RPC when distributed tracing is on (etcd's
 * --experimental-enable-distributed-tracing, its otelgrpc server interceptor): named as
 * OpenTelemetry names RPCs (`etcdserverpb.KV/Put`), kind server, the child of the caller's W3C
 * `traceparent` metadata, ended when the call is answered. Plain synchronous code around grpc-js'
 * handler and callback, so the handler's fast paths (an Exit, a PendingWrite) stay fiber-free;
 * with tracing off the handler is not wrapped at all.
 */
import type * as grpc from "@grpc/grpc-js"
import * as Headers from "@effect/platform/Headers"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import { type Clock, Context, Exit, Option, type Tracer } from "effect"
import { packageDefinition } from "../proto/load.js"

export interface RpcTracing {
  readonly tracer: Tracer.Tracer
  readonly clock: Clock.Clock
}

/** `Range` → `etcdserverpb.KV/Range`, from the loaded protos (the first service with the method). */
const spanNameOf = (method: string): string => {
  for (const [name, def] of Object.entries(packageDefinition)) {
    if (typeof def === "object" && def !== null && method in def && name.startsWith("etcdserverpb.")) {
      return `${name}/${method}`
    }
  }
  return method
}

/** The caller's span from its `traceparent` (and `tracestate`) metadata, if any. */
const parentOf = (metadata: grpc.Metadata | undefined): Option.Option<Tracer.AnySpan> => {
  const traceparent = metadata?.get("traceparent")[0]
  if (typeof traceparent !== "string") return Option.none()
  return HttpTraceContext.w3c(Headers.fromInput({ traceparent }))
}

/** `handler` wrapped in a server span per call. */
export const tracedUnary = <Req, Res>(
  tracing: RpcTracing,
  method: string,
  handler: grpc.handleUnaryCall<Req, Res>
): grpc.handleUnaryCall<Req, Res> => {
  const name = spanNameOf(method)
  const [service, rpc] = name.includes("/") ? name.split("/") : ["", method]
  return (call, callback) => {
    const { clock, tracer } = tracing
    const span = tracer.span(
      name,
      parentOf(call.metadata),
      Context.empty(),
      [],
      clock.unsafeCurrentTimeNanos(),
      "server"
    )
    span.attribute("rpc.system", "grpc")
    span.attribute("rpc.service", service)
    span.attribute("rpc.method", rpc)
    handler(call, (error, value, ...rest) => {
      const code = error === null || error === undefined ? 0 : (error.code ?? 2)
      span.attribute("rpc.grpc.status_code", code)
      span.end(clock.unsafeCurrentTimeNanos(), code === 0 ? Exit.void : Exit.fail(error))
      callback(error, value, ...rest)
    })
  }
}
