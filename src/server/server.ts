/**
 * The etcd-compatible server: one gRPC transport (the lean one, transport/, or grpc-js: see
 * transport/grpc-transport.ts) with the KV, Watch, Lease, Maintenance, Cluster and Auth services,
 * as a scoped service. Each client URL is one TCP listener shared, as etcd's
 * cmux shares it, by gRPC (HTTP/2) and HTTP/1.1 — the JSON gateway (gateway/) and etcd's
 * /metrics, /health, /version, /livez, /readyz (metrics/); see cmux.ts.
 *
 * Start-up: the member identity is read (and its term advanced, durably), every client URL is
 * bound (port 0 picks a free port; the bound ports are in `EtcdServer.endpoints`), the
 * auto-compactor is forked, and any --listen-metrics-urls listeners start last. Any failure is
 * one `ServeError`/`BackendError`/`RecoveryError` line.
 *
 * Shutdown (scope close), in order: the metrics listeners close, stop listening, refuse new
 * calls, end every stream with Unavailable "etcdserver: server stopped" (gateway streams too), let
 * unary calls finish for a grace period, close the HTTP/1 connections, close the gRPC transport
 * (forcibly after a second); then the layers below close: lessor, watchable store, store, and the
 * backend, which flushes.
 */
import * as grpc from "@grpc/grpc-js"
import { Context, Duration, Effect, Layer } from "effect"
import { Backend, type BackendError } from "../backend/backend.js"
import { faultyWalIo, WAL_FAULT_ENV, walFaultFromEnv } from "../backend/fault-io.js"
import { nodeWalIo, noFsyncWalIo } from "../backend/wal.js"
import { layerLmdb } from "../backend/lmdb.js"
import { layerMemory } from "../backend/memory.js"
import { Lessor, layer as lessorLayer } from "../lease/lessor.js"
import { MvccStore } from "../mvcc/kv.js"
import { layer as kvStoreLayer, layerConfig as kvStoreConfig } from "../mvcc/kvstore.js"
import type { RecoveryError } from "../mvcc/recovery-error.js"
import { Errors } from "../errors.js"
import { packageDefinition, serviceDefinition, type ServiceName } from "../proto/load.js"
import { WatchableStore, layer as watchableLayer } from "../watch/watchable-store.js"
import { runCompactor } from "./compactor.js"
import {
  DEFAULT_QUOTA_BYTES,
  defaultServerConfig,
  type ListenAddress,
  parseClientUrl,
  parseGoDuration,
  parseMetricsUrl,
  parsePeerUrl,
  type ServerConfig
} from "./config.js"
import { makeCallRunner } from "./grpc-bridge.js"
import { makeHeader } from "./header.js"
import { makeKvService } from "./kv-server.js"
import { makeLeaseService } from "./lease-server.js"
import { API_VERSION, makeClusterService, makeMaintenanceService, type MemberInfo } from "./maintenance-server.js"
import { startMember } from "./member.js"
import { GrpcServerMetrics, startHttpEndpoints } from "./metrics/index.js"
import { listenClient } from "./cmux.js"
import { boundUrl } from "./listener.js"
import { makeClientHttpServer } from "./client-http.js"
import { makeGatewayHandler } from "./gateway/gateway.js"
import { unimplementedHandlers } from "./unimplemented.js"
import { makeAuthService } from "./auth-server.js"
import { type AuthGuard, peerCommonName } from "./auth-guard.js"
import { AuthStore, layer as authStoreLayer } from "../auth/auth-store.js"
import { jwtTokenProvider } from "../auth/jwt-token.js"
import { parseTokenOptions, simpleTokenProvider, type TokenProvider } from "../auth/token-provider.js"
import { GRPC_OVERHEAD_BYTES } from "./watch-fragments.js"
import { makeWatchService } from "./watch-server.js"
import { passThroughSerializer } from "./grpc-raw-writer.js"
import { ServeError } from "./serve-error.js"
import { setupClientTls } from "./client-tls.js"
import { makeGrpcTransport } from "./transport/grpc-transport.js"
import { alarmName, makeAlarms } from "./alarms.js"
import { makeQuota } from "./quota.js"
import { initialCheck, makeCorruptGuard, periodicCheck } from "./corrupt-check.js"
import { refuseMalformed, withUnmarshalChecks } from "./unmarshal-check.js"
import { withKvWire } from "./kv-wire.js"

export { ServeError }

/** A running member: its name and ids, where it listens, and the calls in flight. */
export interface EtcdServerShape {
  readonly name: string
  readonly clusterId: bigint
  readonly memberId: bigint
  /** the bound listeners as "host:port" (etcdctl's --endpoints form), in --listen-client-urls order */
  readonly endpoints: ReadonlyArray<string>
  /** the port of the first listener */
  readonly port: number
  /** the advertised client URLs (MemberList) */
  readonly clientUrls: ReadonlyArray<string>
  /** the bound metrics listeners ("http://host:port"), in --listen-metrics-urls order; empty: none */
  readonly metricsUrls: ReadonlyArray<string>
  /** calls in flight */
  readonly calls: () => { readonly unary: number; readonly streams: number }
}

/** The running member as a service (`Server.layer` provides it): its ids, endpoints and URLs. */
export class EtcdServer extends Context.Tag("etcd-effect/EtcdServer")<EtcdServer, EtcdServerShape>() {}

/** The gRPC server over the store, watch and lease services in context. */
export const layerServer = (
  config: ServerConfig
): Layer.Layer<
  EtcdServer,
  ServeError | BackendError | RecoveryError,
  MvccStore | WatchableStore | Lessor | Backend | AuthStore
> =>
  Layer.scoped(
    EtcdServer,
    Effect.gen(function* () {
      const addrs: Array<ListenAddress> = []
      for (const url of config.listenClientUrls) {
        const a = parseClientUrl(url)
        if (typeof a === "string") return yield* new ServeError({ reason: "BadConfig", message: a })
        addrs.push(a)
      }
      if (addrs.length === 0) {
        return yield* new ServeError({ reason: "BadConfig", message: "--listen-client-urls is empty" })
      }
      for (const url of config.advertiseClientUrls) {
        const a = parseClientUrl(url)
        if (typeof a === "string") return yield* new ServeError({ reason: "BadConfig", message: a })
      }
      for (const url of config.advertisePeerUrls) {
        const a = parsePeerUrl(url)
        if (typeof a === "string") return yield* new ServeError({ reason: "BadConfig", message: a })
      }
      const metricsAddrs: Array<ListenAddress> = []
      for (const url of config.listenMetricsUrls) {
        const a = parseMetricsUrl(url)
        if (typeof a === "string") return yield* new ServeError({ reason: "BadConfig", message: a })
        metricsAddrs.push(a)
      }

      const tlsSource = yield* setupClientTls(config.tls, addrs, metricsAddrs, config.dataDir)

      const store = yield* MvccStore
      const watchable = yield* WatchableStore
      const lessor = yield* Lessor
      const backend = yield* Backend
      const authStore = yield* AuthStore
      const guard: AuthGuard = { store: authStore, commonName: peerCommonName(config.tls.clientCertAuth) }
      const identity = yield* startMember
      const header = makeHeader(identity)

      const grpcMetrics = new GrpcServerMetrics()
      const tracing = config.distributedTracing
        ? { tracer: yield* Effect.tracer, clock: yield* Effect.clock }
        : undefined
      const runner = yield* makeCallRunner(grpcMetrics, tracing)
      // etcd: MaxRecvMsgSize = MaxRequestBytes + grpcOverheadBytes; MaxSendMsgSize unlimited
      const server = makeGrpcTransport(config, config.maxRequestBytes + GRPC_OVERHEAD_BYTES)
      yield* Effect.addFinalizer(() => server.close(Duration.seconds(1)))

      const advertised: Array<string> = []
      const member: MemberInfo = {
        identity,
        name: config.name,
        clientUrls: advertised,
        peerUrls: config.advertisePeerUrls
      }
      const alarms = yield* makeAlarms(backend)
      const quota = makeQuota(
        backend,
        alarms,
        config.quotaBackendBytes > 0 ? config.quotaBackendBytes : DEFAULT_QUOTA_BYTES,
        identity.memberId
      )
      if (config.dataDir !== undefined && walFaultFromEnv() !== undefined) {
        yield* Effect.logWarning(`${WAL_FAULT_ENV} is set: the write-ahead log fails on purpose (tests only)`)
      }
      const corrupt = makeCorruptGuard(alarms, identity.memberId)
      // under CORRUPT an expired lease keeps its keys: etcd's corrupt applier refuses the lessor's LeaseRevoke
      lessor.guardRevocations(() => (corrupt.up() ? Errors.corrupt() : undefined))
      yield* initialCheck(backend, corrupt, config.initialCorruptCheck)
      if (Duration.greaterThan(config.corruptCheckTime, Duration.zero)) {
        yield* Effect.forkScoped(periodicCheck(backend, corrupt, config.corruptCheckTime))
      }
      const services: Record<ServiceName, Record<string, unknown>> = {
        KV: makeKvService(runner, store, header, guard, lessor, quota, config.maxTxnOps, corrupt),
        Watch: makeWatchService(runner, {
          watchable,
          store,
          header,
          config: { maxRequestBytes: config.maxRequestBytes, progressNotifyInterval: config.progressNotifyInterval },
          guard
        }),
        Lease: makeLeaseService(runner, lessor, header, guard, quota, corrupt),
        Maintenance: makeMaintenanceService(runner, store, backend, member, header, alarms, guard),
        Cluster: makeClusterService(runner, member, header),
        Auth: makeAuthService(runner, guard, header, store.rev)
      }
      for (const [name, impl] of Object.entries(services) as Array<[ServiceName, Record<string, unknown>]>) {
        const base = serviceDefinition(name)
        // Watch responses leave pre-encoded (src/server/watch-wire.ts); its serializer passes bytes through.
        const checked = withUnmarshalChecks(base, packageDefinition) as grpc.ServiceDefinition
        // KV responses are encoded by src/server/kv-wire.ts (protobufjs' bytes, without its fromObject)
        const definition =
          name === "Watch"
            ? { ...checked, Watch: passThroughSerializer(checked["Watch"]!) }
            : name === "KV"
              ? withKvWire(checked)
              : checked
        server.addService(definition, {
          ...(refuseMalformed(
            definition,
            grpcMetrics.countUnimplemented(unimplementedHandlers(name, definition, impl))
          ) as grpc.UntypedServiceImplementation),
          ...(impl as grpc.UntypedServiceImplementation)
        })
      }

      // etcd's HTTP endpoints for the client port (metrics/); the metrics listeners start last
      const http = yield* startHttpEndpoints({
        grpc: grpcMetrics,
        watchable,
        store,
        backend,
        version: API_VERSION,
        memberId: identity.memberId,
        alarms: () => alarms.list(0).map((a) => alarmName(a.alarm))
      })
      const gateway = makeGatewayHandler(services, {
        maxRequestBytes: config.maxRequestBytes + GRPC_OVERHEAD_BYTES
      })
      const http1 = yield* makeClientHttpServer(gateway, http.handler)
      // HTTP/2 requests that are not gRPC go to the same HTTP handlers (etcd's mux)
      const acceptGrpc = server.listen(http1.handle)

      const endpoints: Array<string> = []
      const ports: Array<number> = []
      const listeners: Array<{ readonly close: () => void }> = []
      for (const addr of addrs) {
        const listener = yield* listenClient(
          addr,
          {
            grpc: acceptGrpc,
            http1: http1.accept
          },
          addr.https ? tlsSource : undefined,
          Duration.toMillis(Duration.decode(config.h2HandshakeTimeout))
        )
        listeners.push(listener)
        ports.push(listener.port)
        endpoints.push(`${addr.host}:${listener.port}`)
      }
      if (config.advertiseClientUrls.length > 0) advertised.push(...config.advertiseClientUrls)
      else addrs.forEach((a, i) => advertised.push(boundUrl(a, ports[i]!)))

      // Runs first at scope close: stop listening, then end the calls (see the module comment).
      let served = false
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const listener of listeners) listener.close()
        }).pipe(
          Effect.zipRight(runner.shutdown(config.shutdownGrace)),
          // a start-up that failed says only why (one line), not that it stopped
          Effect.zipRight(served ? Effect.logInfo("server stopped") : Effect.void)
        )
      )

      if (config.autoCompaction !== undefined) {
        yield* Effect.forkScoped(runCompactor(store, config.autoCompaction))
      }
      const metricsUrls = metricsAddrs.length === 0 ? [] : yield* http.listen(metricsAddrs, tlsSource)
      // what etcd logs at start-up (embed/serve.go, embed/etcd.go): ready, then each URL served
      yield* Effect.logInfo("ready to serve client requests").pipe(
        Effect.annotateLogs({
          name: config.name,
          memberId: identity.memberId.toString(16),
          clusterId: identity.clusterId.toString(16)
        })
      )
      for (const [i, addr] of addrs.entries()) {
        const message = addr.https
          ? "serving client traffic securely"
          : "serving client traffic insecurely; this is strongly discouraged!"
        yield* Effect.logInfo(message).pipe(Effect.annotateLogs({ address: boundUrl(addr, ports[i]!) }))
      }
      for (const url of metricsUrls)
        yield* Effect.logInfo("serving metrics").pipe(Effect.annotateLogs({ address: url }))
      served = true

      return {
        name: config.name,
        clusterId: identity.clusterId,
        memberId: identity.memberId,
        endpoints,
        port: ports[0]!,
        clientUrls: advertised,
        metricsUrls,
        calls: runner.inFlight
      } satisfies EtcdServerShape
    })
  )

/** --auth-token as a token provider; a bad value or key file is one start-up line. */
export const makeTokenProvider = (config: ServerConfig): Effect.Effect<TokenProvider, ServeError> =>
  Effect.suspend(() => {
    const bad = (message: string) => new ServeError({ reason: "BadConfig", message: `--auth-token: ${message}` })
    const opts = parseTokenOptions(config.authToken, (s) => {
      const d = parseGoDuration(s)
      return d === undefined ? undefined : Duration.toMillis(d)
    })
    if (typeof opts === "string") return Effect.fail(bad(opts))
    if (opts.type === "simple") return Effect.succeed(simpleTokenProvider(config.authTokenTtl * 1000))
    const p = jwtTokenProvider(opts)
    return typeof p === "string" ? Effect.fail(bad(p)) : Effect.succeed(p)
  })

/** The auth store of a member (replayed from the backend), with the configured token provider. */
export const layerAuth = (config: ServerConfig): Layer.Layer<AuthStore, ServeError | RecoveryError, Backend> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      if (!Number.isInteger(config.bcryptCost) || config.bcryptCost < 4 || config.bcryptCost > 31) {
        return yield* new ServeError({
          reason: "BadConfig",
          message: `--bcrypt-cost ${config.bcryptCost}: must be in 4..31`
        })
      }
      const tokenProvider = yield* makeTokenProvider(config)
      return authStoreLayer({ tokenProvider, bcryptCost: config.bcryptCost })
    })
  )

/** The services a member is made of: backend (LMDB in `dataDir`, or memory), store, watch, lessor, auth. */
const memberServices = (config: ServerConfig) => {
  const fault = walFaultFromEnv()
  const backend =
    config.dataDir === undefined
      ? layerMemory
      : layerLmdb({
          dataDir: config.dataDir,
          unsafeNoFsync: config.unsafeNoFsync,
          commitIntervalMs:
            config.backendBatchInterval === undefined ? undefined : Duration.toMillis(config.backendBatchInterval),
          commitLimitOps: config.backendBatchLimit,
          ...(fault === undefined ? {} : { walIo: faultyWalIo(fault, config.unsafeNoFsync ? noFsyncWalIo : nodeWalIo) })
        })
  const store = kvStoreLayer.pipe(
    Layer.provide(kvStoreConfig({ maxRequestBytes: config.maxRequestBytes, maxTxnOps: config.maxTxnOps }))
  )
  return Layer.mergeAll(watchableLayer, lessorLayer, layerAuth(config)).pipe(
    Layer.provideMerge(store),
    Layer.provideMerge(backend)
  )
}

/**
 * The whole member with the services it is made of, for programs that also use the store, the
 * watchable store or the lessor in-process.
 */
export const layerMember = (
  options: Partial<ServerConfig> = {}
): Layer.Layer<
  EtcdServer | MvccStore | WatchableStore | Lessor | Backend | AuthStore,
  ServeError | BackendError | RecoveryError
> => {
  const config: ServerConfig = { ...defaultServerConfig, ...options }
  return layerServer(config).pipe(Layer.provideMerge(memberServices(config)))
}

/** The whole member, exposing only the server. */
export const layer = (
  options: Partial<ServerConfig> = {}
): Layer.Layer<EtcdServer, ServeError | BackendError | RecoveryError> => {
  const config: ServerConfig = { ...defaultServerConfig, ...options }
  return layerServer(config).pipe(Layer.provide(memberServices(config)))
}

/**
 * Starts a member in the current scope and returns it once it listens; closing the scope shuts it
 * down. For tests and embedding: `serve({ listenClientUrls: ["http://127.0.0.1:0"] })` runs on a
 * free port of an in-memory backend.
 */
export const serve = (options: Partial<ServerConfig> = {}) =>
  Effect.map(Layer.build(layer(options)), (ctx) => Context.get(ctx, EtcdServer))
