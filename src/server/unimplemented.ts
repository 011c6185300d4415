/**
 * Handlers for the rpcs a single member does not serve (cluster membership changes, MoveLeader,
 * …): each answers a clear Unimplemented status naming the method, never a hang or a crash.
 */
import type * as grpc from "@grpc/grpc-js"
import { GrpcCode } from "../errors.js"
import type { ServiceName } from "../proto/load.js"

const unimplementedStatus = (service: string, method: string) => ({
  code: GrpcCode.Unimplemented,
  details: `etcd-effect: ${service}.${method} is not implemented (one member)`
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
