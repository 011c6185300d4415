/**
 * Handlers for the rpcs a single member without auth does not serve: each answers a clear
 * Unimplemented status naming the method, never a hang or a crash.
 *
 * Two Auth rpcs answer as an etcd with auth disabled does, because clients call them on connect:
 * Authenticate ("authentication is not enabled", which clientv3 tolerates) and AuthStatus
 * (enabled: false).
 */
import type * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { EtcdError, GrpcCode } from "../errors.js"
import type { ServiceName } from "../proto/load.js"
import type { CallRunner } from "./grpc-bridge.js"
import type { MakeHeader } from "./header.js"

const unimplementedStatus = (service: string, method: string) => ({
  code: GrpcCode.Unimplemented,
  details: `etcd-effect: ${service}.${method} is not implemented (one member, no auth)`
})

/** One handler per method of `definition` that `implemented` lacks. */
export const unimplementedHandlers = (
  service: ServiceName,
  definition: grpc.ServiceDefinition,
  implemented: Record<string, unknown>
): grpc.UntypedServiceImplementation => {
  const out: grpc.UntypedServiceImplementation = {}
  for (const [method, def] of Object.entries(definition)) {
    if (method in implemented) continue
    const status = unimplementedStatus(service, method)
    if (!def.responseStream) {
      out[method] = ((_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
        callback(status)) as grpc.handleUnaryCall<unknown, unknown>
    } else {
      out[method] = ((call: { emit(event: "error", e: unknown): boolean }) => {
        call.emit("error", status)
      }) as grpc.handleServerStreamingCall<unknown, unknown>
    }
  }
  return out
}

/** etcd's ErrGRPCAuthNotEnabled. */
export const authNotEnabled = () =>
  new EtcdError({ code: GrpcCode.FailedPrecondition, message: "etcdserver: authentication is not enabled" })

export const makeAuthService = (runner: CallRunner, header: MakeHeader, rev: () => number) => ({
  Authenticate: runner.unary<unknown, object>("Authenticate", () => Effect.fail(authNotEnabled())),
  AuthStatus: runner.unary<unknown, object>("AuthStatus", () =>
    Effect.sync(() => ({ header: header(rev()), enabled: false })))
})
