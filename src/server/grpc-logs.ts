import * as grpc from "@grpc/grpc-js"

/** grpc-js logs to stderr on its own (e.g. a failed bind); the serve program reports those failures itself. */
export const silenceGrpcLogs = (): void => grpc.setLogVerbosity(grpc.logVerbosity.NONE)
