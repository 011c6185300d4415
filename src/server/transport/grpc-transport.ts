/**
 * The server's gRPC transport, either of two (ServerConfig.grpcTransport, --grpc-transport):
 *
 * - "lean" (the default): our own HTTP/2 server transport (lean-server.ts, connection.ts), as
 *   grpc-go serves gRPC with its own internal/transport/http2_server.go beside net/http2;
 * - "grpc-js": @grpc/grpc-js over node:http2, through `Server.createConnectionInjector`.
 *
 * Both take the same service definitions and grpc-js style handlers (grpc-bridge.ts), and the
 * sockets cmux.ts routes to gRPC (TLS terminated there).
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import type { Duplex } from "node:stream"
import type { ServerConfig } from "../config.js"
import { applyPingPolicy } from "../keepalive-policy.js"
import type { HttpHandler } from "./http-stream.js"
import { LeanGrpcServer } from "./lean-server.js"
import { serveHttpBeside } from "./grpc-js-http.js"

import type { GrpcTransportName } from "../config.js"
export type { GrpcTransportName }

export interface GrpcTransport {
  readonly name: GrpcTransportName
  addService(definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation): void
  /**
   * After the services: returns what takes each HTTP/2 socket. A request on it that is not gRPC
   * (its content-type is not application/grpc) goes to `http`, as etcd's mux sends it to the
   * HTTP handlers.
   */
  listen(http?: HttpHandler): (socket: Duplex) => void
  /** graceful (GOAWAY, calls end), forced after `timeout` */
  close(timeout: Duration.DurationInput): Effect.Effect<void>
}

const millis = (d: Duration.DurationInput): number => Duration.toMillis(Duration.decode(d))

/** etcd: MaxRecvMsgSize = MaxRequestBytes + grpcOverheadBytes */
export const makeGrpcTransport = (config: ServerConfig, maxReceiveMessageBytes: number): GrpcTransport =>
  config.grpcTransport === "grpc-js"
    ? grpcJsTransport(config, maxReceiveMessageBytes)
    : leanTransport(config, maxReceiveMessageBytes)

const leanTransport = (config: ServerConfig, maxReceiveMessageBytes: number): GrpcTransport => {
  const server = new LeanGrpcServer({
    maxConcurrentStreams: config.maxConcurrentStreams ?? Infinity,
    maxReceiveMessageBytes,
    keepaliveIntervalMs: millis(config.keepaliveInterval),
    keepaliveTimeoutMs: millis(config.keepaliveTimeout),
    pingMinTimeMs: millis(config.keepaliveMinTime),
    handshakeTimeoutMs: millis(config.h2HandshakeTimeout)
  })
  return {
    name: "lean",
    addService: (definition, impl) => server.addService(definition, impl),
    listen: (http) => {
      server.http = http
      return (socket) => server.accept(socket)
    },
    close: (timeout) => server.close(timeout)
  }
}

/**
 * etcd's transport flags as grpc-js server options: --grpc-keepalive-interval/-timeout (the
 * server's own pings; 0 turns them off) and --max-concurrent-streams (HTTP/2 SETTINGS). The
 * client ping policy (--grpc-keepalive-min-time) is keepalive-policy.ts's.
 */
const grpcJsOptions = (config: ServerConfig, maxReceiveMessageBytes: number): grpc.ServerOptions => {
  const interval = millis(config.keepaliveInterval)
  const timeout = millis(config.keepaliveTimeout)
  return {
    "grpc.max_receive_message_length": maxReceiveMessageBytes,
    "grpc.max_send_message_length": -1,
    // grpc-js' "never" is its maximum (~24.8 days)
    "grpc.keepalive_time_ms": interval > 0 ? interval : 2 ** 31 - 1,
    ...(timeout > 0 ? { "grpc.keepalive_timeout_ms": timeout } : {}),
    ...(config.maxConcurrentStreams === undefined ? {} : { "grpc.max_concurrent_streams": config.maxConcurrentStreams })
  }
}

const grpcJsTransport = (config: ServerConfig, maxReceiveMessageBytes: number): GrpcTransport => {
  const server = new grpc.Server(grpcJsOptions(config, maxReceiveMessageBytes))
  return {
    name: "grpc-js",
    addService: (definition, impl) => server.addService(definition, impl),
    listen: (http) => {
      if (http !== undefined) serveHttpBeside(server, http)
      // one connection injector for every listener: grpc-js closes its sessions at shutdown
      const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure())
      applyPingPolicy(server, millis(config.keepaliveMinTime))
      return (socket) => injector.injectConnection(socket)
    },
    // the wait is interruptible: this runs as a scope finalizer (uninterruptible), where the
    // timeout could not interrupt it, and a session node never closes would hang shutdown
    close: (timeout) =>
      Effect.async<void>((resume) => {
        server.tryShutdown(() => resume(Effect.void))
      }).pipe(
        Effect.interruptible,
        Effect.timeoutOption(timeout),
        Effect.zipRight(Effect.sync(() => server.forceShutdown()))
      )
  }
}
