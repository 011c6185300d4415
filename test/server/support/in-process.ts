/**
 * Our server in the test process: an in-memory member on a free loopback port (or an LMDB data
 * dir when given), plus raw grpc-js clients of its services.
 */
import * as grpc from "@grpc/grpc-js"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { MvccStore } from "../../../src/mvcc/kv.js"
import { etcdserverpb, type ServiceName } from "../../../src/proto/load.js"
import { EtcdServer, type EtcdServerShape, layerMember, serve, type ServerConfig } from "../../../src/server/index.js"
import { WatchableStore } from "../../../src/watch/watchable-store.js"

export interface InProcessServer {
  readonly endpoint: string
  readonly server: EtcdServerShape
  /** shuts the member down (graceful) */
  close(): Promise<void>
}

export const startInProcess = async (options: Partial<ServerConfig> = {}): Promise<InProcessServer> => {
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(
    Scope.extend(serve({ listenClientUrls: ["http://127.0.0.1:0"], ...options }), scope).pipe(
      Logger.withMinimumLogLevel(LogLevel.Error)
    )
  )
  let closed = false
  return {
    endpoint: server.endpoints[0]!,
    server,
    close: async () => {
      if (closed) return
      closed = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

/** A raw grpc-js client of one service (decoded with the project's loader options). */
export const rawClient = (service: ServiceName, endpoint: string): grpc.Client & Record<string, any> =>
  new etcdserverpb[service](endpoint, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>

/** The outcome of a unary call: the response, or the status error. */
export type UnaryResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: number; readonly details: string }

export const unaryCall = <T = any>(
  client: grpc.Client & Record<string, any>,
  method: string,
  request: unknown,
  options: grpc.CallOptions = {}
): Promise<UnaryResult<T>> =>
  new Promise((resolve) => {
    client[method](request, new grpc.Metadata(), options, (err: grpc.ServiceError | null, value: T) => {
      if (err) resolve({ ok: false, code: err.code, details: err.details })
      else resolve({ ok: true, value })
    })
  })

/** Like unaryCall, but rejects on an error status. */
export const call = async <T = any>(
  client: grpc.Client & Record<string, any>,
  method: string,
  request: unknown,
  options: grpc.CallOptions = {}
): Promise<T> => {
  const r = await unaryCall<T>(client, method, request, options)
  if (!r.ok) throw new Error(`${method}: code ${r.code}: ${r.details}`)
  return r.value
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `f` until it returns true or `timeoutMs` passes. */
export const eventually = async (
  f: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = "condition"
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await f()) return
    await sleep(10)
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Like startInProcess, with the member's watchable store and store at hand. */
export const startMember = async (options: Partial<ServerConfig> = {}) => {
  const scope = Effect.runSync(Scope.make())
  const ctx = await Effect.runPromise(
    Scope.extend(
      Layer.buildWithScope(layerMember({ listenClientUrls: ["http://127.0.0.1:0"], ...options }), scope),
      scope
    ).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
  )
  const server = Context.get(ctx, EtcdServer)
  return {
    endpoint: server.endpoints[0]!,
    server,
    watchable: Context.get(ctx, WatchableStore),
    store: Context.get(ctx, MvccStore),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
