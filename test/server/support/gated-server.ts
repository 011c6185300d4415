/**
 * An in-process member whose backend's durability the test controls (test/mvcc/gated-backend.ts):
 * writes are staged at once and become durable only when the test releases the gate. Start-up's
 * own writes (the member record) are let through until the server is up.
 */
import { Context, Effect, Exit, Fiber, Layer, Logger, LogLevel, Schedule, Scope } from "effect"
import { layer as lessorLayer } from "../../../src/lease/lessor.js"
import { layer as kvStoreLayer, layerConfig as kvStoreConfig } from "../../../src/mvcc/kvstore.js"
import {
  defaultServerConfig,
  EtcdServer,
  layerAuth,
  layerServer,
  type ServerConfig
} from "../../../src/server/index.js"
import { layer as watchableLayer } from "../../../src/watch/watchable-store.js"
import { gateLayer, makeGate } from "../../mvcc/gated-backend.js"

export const startGatedServer = async (config: Partial<ServerConfig> = {}) => {
  const gate = makeGate()
  const { maxRequestBytes } = defaultServerConfig
  const store = kvStoreLayer.pipe(Layer.provide(kvStoreConfig({ maxRequestBytes })))
  const services = Layer.mergeAll(watchableLayer, lessorLayer, layerAuth(defaultServerConfig)).pipe(
    Layer.provideMerge(store),
    Layer.provideMerge(gateLayer(gate))
  )
  const layer = layerServer({ ...defaultServerConfig, listenClientUrls: ["http://127.0.0.1:0"], ...config }).pipe(
    Layer.provide(services)
  )
  const scope = Effect.runSync(Scope.make())
  const releaser = Effect.runFork(Effect.repeat(gate.release(), Schedule.spaced("5 millis")))
  const ctx = await Effect.runPromise(
    Layer.buildWithScope(layer, scope).pipe(Logger.withMinimumLogLevel(LogLevel.None))
  )
  await Effect.runPromise(Fiber.interrupt(releaser))
  const server = Context.get(ctx, EtcdServer)
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void).pipe(Logger.withMinimumLogLevel(LogLevel.None)))
  return { gate, server, close }
}
