/**
 * The program behind `etcd-effect apiserver` (cmd/kube-apiserver's server, reduced to the
 * resource API): reach etcd (or start an embedded etcd-effect server), load the encryption
 * configuration, build one Storage (a Cacher over the etcd3 store, or the store alone) per served
 * resource, create the system namespaces and run the controllers an apiserver relies on (system
 * namespaces, the namespace controller, the etcd compactor), serve the CRDs stored in etcd, and listen on
 * @effect/platform's HTTP server (HTTPS with --tls-cert-file). Everything lives in the caller's
 * scope: closing it ends the watches, stops listening, lets the requests in flight finish
 * (graceful-shutdown.ts), then closes the storages and the etcd client.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Deferred, Duration, Effect, Either, type Scope } from "effect"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import { type EtcdClientShape, make as makeClient } from "../../client/client.js"
import { supervised } from "../../supervision/fatal.js"
import { serve as serveEtcd } from "../../server/server.js"
import { normalizePathPrefix } from "../storage/etcd3/store.js"
import type { StorageShape } from "../storage/interfaces.js"
import { encryptCheck } from "../storage/value/identity.js"
import { loadEncryptionConfig } from "../storage/value/encryption-config.js"
import { makeApp } from "./app.js"
import { makeGracefulShutdown } from "./graceful-shutdown.js"
import { type ApiServerConfig, ApiServerError, defaultApiServerConfig } from "./config.js"
import { crdResource, runCrdController } from "./crd.js"
import { ApiMetrics } from "./metrics.js"
import { ResourceRegistry } from "./registry.js"
import { runCompactor } from "../storage/etcd3/compactor.js"
import { runNamespaceController } from "./controllers/namespace-controller.js"
import { ensureSystemNamespaces, runSystemNamespacesController } from "./controllers/system-namespaces.js"
import { configmaps, eventResources, leases, namespaces, secrets } from "./resources.js"
import { NamespaceLifecycle } from "./write/admission.js"
import { makeResourceStorage } from "./storage-factory.js"

export { type ApiServerConfig, ApiServerError, defaultApiServerConfig } from "./config.js"

/** A running apiserver: its URL and port, its served resources, metrics and etcd client. */
export interface RunningApiServer {
  /** the URL it serves on (http://127.0.0.1:8080) */
  readonly url: string
  readonly port: number
  readonly registry: ResourceRegistry
  readonly metrics: ApiMetrics
  /** the etcd endpoints it uses (the embedded server's when --etcd-servers is empty) */
  readonly etcdEndpoints: ReadonlyArray<string>
  /** its etcd client (compaction in tests and tools) */
  readonly client: EtcdClientShape
}

const readFile = (flag: string, path: string | undefined) =>
  Effect.try({
    try: () => (path === undefined ? undefined : fs.readFileSync(path)),
    catch: (e) =>
      new ApiServerError({ reason: "BadConfig", message: `${flag}: ${e instanceof Error ? e.message : String(e)}` })
  })

/** Runs the Kubernetes API in the caller's scope over etcd (or an embedded etcd-effect) and answers where it serves. */
export const serve = (
  options: Partial<ApiServerConfig> = {}
): Effect.Effect<RunningApiServer, ApiServerError, Scope.Scope> =>
  Effect.gen(function* () {
    const config: ApiServerConfig = { ...defaultApiServerConfig, ...options }
    if (config.port < 0 || config.port > 65535) {
      return yield* new ApiServerError({
        reason: "BadConfig",
        message: `--port ${config.port} must be between 0 and 65535`
      })
    }
    if (config.defaultWatchCacheSize < 0) {
      return yield* new ApiServerError({
        reason: "BadConfig",
        message: "--default-watch-cache-size must not be negative"
      })
    }
    if ((config.tlsCertFile === undefined) !== (config.tlsPrivateKeyFile === undefined)) {
      return yield* new ApiServerError({
        reason: "BadConfig",
        message: "--tls-cert-file and --tls-private-key-file must be given together"
      })
    }
    const transformers =
      config.encryptionProviderConfig === undefined
        ? { transformerFor: () => encryptCheck }
        : yield* Effect.mapError(
            loadEncryptionConfig(config.encryptionProviderConfig),
            (e) => new ApiServerError({ reason: "BadConfig", message: e.message })
          )
    const ca = yield* readFile("--etcd-cafile", config.etcdCafile)
    const cert = yield* readFile("--etcd-certfile", config.etcdCertfile)
    const key = yield* readFile("--etcd-keyfile", config.etcdKeyfile)
    const tlsCert = yield* readFile("--tls-cert-file", config.tlsCertFile)
    const tlsKey = yield* readFile("--tls-private-key-file", config.tlsPrivateKeyFile)

    // etcd: the given servers, or one in this process
    let endpoints = config.etcdServers
    if (endpoints.length === 0) {
      const member = yield* serveEtcd({
        listenClientUrls: ["http://127.0.0.1:0"],
        dataDir: config.dataDir,
        distributedTracing: config.tracing === true
      }).pipe(Effect.mapError((e) => new ApiServerError({ reason: "Etcd", message: `embedded etcd: ${e.message}` })))
      endpoints = member.endpoints
    }
    const tls = ca !== undefined || cert !== undefined ? { ca, cert, key } : undefined
    const client = yield* makeClient({ endpoints, dialTimeout: Duration.seconds(5), tls }).pipe(
      Effect.mapError(
        (e) => new ApiServerError({ reason: "Etcd", message: `etcd ${endpoints.join(",")}: ${e.message}` })
      )
    )

    const etcdPrefix = normalizePathPrefix(config.etcdPrefix)
    const etcdStores = new Map<string, StorageShape>()
    const registry = new ResourceRegistry((info) =>
      makeResourceStorage(
        {
          client,
          etcdPrefix,
          watchCache: config.watchCache,
          defaultWatchCacheSize: config.defaultWatchCacheSize,
          transformerFor: transformers.transformerFor,
          etcdStores
        },
        info
      )
    )
    yield* Effect.addFinalizer(() => registry.close())
    const eventTTLSeconds = Math.trunc(Duration.toSeconds(config.eventTTL))
    const served = [namespaces, configmaps, secrets, leases, ...eventResources(eventTTLSeconds), crdResource]
    for (const info of served) yield* registry.put(info)

    // the system namespaces (created now, then kept by their controller), the namespace controller
    const lifecycle = new NamespaceLifecycle()
    yield* ensureSystemNamespaces(registry, lifecycle).pipe(
      Effect.mapError((e) => new ApiServerError({ reason: "Etcd", message: `bootstrap namespaces: ${e.message}` }))
    )
    yield* runSystemNamespacesController(registry, lifecycle)
    // the apiserver's loops are supervised (each run* wraps its own): one that dies fails the
    // program run under failOnFatal (`etcd-effect apiserver` is), and is logged at error level otherwise
    yield* Effect.forkScoped(
      supervised(
        "namespace controller",
        runNamespaceController({ registry, lifecycle, delay: config.namespaceDeletionDelay })
      )
    )
    // the apiserver's compactor (etcd3/compact.go), on embedded and external etcd alike
    yield* Effect.forkScoped(runCompactor(client, config.etcdCompactionInterval, endpoints))

    // the CRDs stored in etcd are served before the server listens
    const synced = yield* Deferred.make<void>()
    const crds = registry.byGroupResource(crdResource.group, crdResource.plural)!.storage
    yield* Effect.forkScoped(runCrdController({ registry, crds, client, etcdPrefix }, synced))
    yield* Deferred.await(synced)

    const metrics = new ApiMetrics()
    let node: Http.Server | undefined
    const host = config.bindAddress.replace(/^\[(.*)\]$/, "$1")
    const server = yield* NodeHttpServer.make(
      () =>
        (node =
          tlsCert !== undefined
            ? (Https.createServer({ cert: tlsCert, key: tlsKey }) as unknown as Http.Server)
            : Http.createServer()),
      { host, port: config.port, backlog: 4096 }
    ).pipe(
      Effect.mapError((e) => {
        const code = (e.cause as { code?: string } | undefined)?.code
        return new ApiServerError({
          reason: "Listen",
          message:
            code === "EADDRINUSE"
              ? `failed to listen on ${host}:${config.port}: listen tcp ${host}:${config.port}: bind: address already in use`
              : `failed to listen on ${host}:${config.port}: ${String((e.cause as Error | undefined)?.message ?? e.cause)}`
        })
      })
    )
    // kube-apiserver's http.Server (secure_serving.go): idle keep-alive connections live 90 s (Go's
    // client keeps them as long), request headers must come within 32 s. Node's 5 s default closed
    // idle connections a client had just picked for its next request ("other side closed").
    node!.keepAliveTimeout = 90_000
    node!.headersTimeout = 32_000
    const shutdown = yield* makeGracefulShutdown(node!, config.shutdownTimeout)
    const port = server.address._tag === "TcpAddress" ? server.address.port : config.port
    const hostForUrl = host.includes(":") ? `[${host}]` : host
    const url = `${tlsCert !== undefined ? "https" : "http"}://${hostForUrl}:${port}`
    yield* server.serve(
      makeApp({
        registry,
        metrics,
        serverAddress: () => `${hostForUrl}:${port}`,
        ready: Effect.map(Effect.either(crds.readinessCheck), Either.isRight),
        lifecycle,
        shutdown: shutdown.signal,
        tracing: config.tracing
      })
    )
    // the scope's first finalizer, so it runs while requests are still handled and the storages open
    yield* Effect.addFinalizer(() => shutdown.drain)
    return { url, port, registry, metrics, etcdEndpoints: endpoints, client }
  })
