/**
 * `etcd-effect apiserver`: the Kubernetes list/watch API (src/kubernetes/apiserver) over etcd,
 * with kube-apiserver's flag names. Without --etcd-servers it runs an etcd-effect server in the
 * same process (on --data-dir, or in memory), so one command starts everything. It prints the URL
 * it serves on; SIGINT/SIGTERM end the watches, stop listening and close the storage (exit 0).
 */
import { Command, Options } from "@effect/cli"
import { Config, Console, Effect, FiberRef, HashSet, Logger, LogLevel, Option } from "effect"

const etcdServers = Options.text("etcd-servers").pipe(
  Options.withDescription(
    "Comma-separated etcd endpoints (http://host:port). Default: none, which runs an embedded etcd-effect server on --data-dir."
  ),
  Options.withDefault("")
)
const etcdPrefix = Options.text("etcd-prefix").pipe(
  Options.withDescription("The prefix to prepend to all resource paths in etcd."),
  Options.withDefault("/registry")
)
const etcdCafile = Options.file("etcd-cafile").pipe(
  Options.withDescription("SSL Certificate Authority file used to secure etcd communication."),
  Options.optional
)
const etcdCertfile = Options.file("etcd-certfile").pipe(
  Options.withDescription("SSL certification file used to secure etcd communication."),
  Options.optional
)
const etcdKeyfile = Options.file("etcd-keyfile").pipe(
  Options.withDescription("SSL key file used to secure etcd communication."),
  Options.optional
)
const dataDir = Options.text("data-dir").pipe(
  Options.withDescription("Data directory of the embedded etcd-effect server (default: in memory)."),
  Options.optional
)
// Options.boolean already defaults to false when absent: the fallback of its inner option makes absent true
const watchCache = Options.boolean("watch-cache", { ifPresent: true }).pipe(
  Options.withDescription(
    "Enable watch caching in the apiserver (default true; --watch-cache=false serves from etcd directly)."
  ),
  Options.withFallbackConfig(Config.succeed(true))
)
const etcdCompactionInterval = Options.text("etcd-compaction-interval").pipe(
  Options.withDescription(
    "The interval of compaction requests. If 0, the compaction request from apiserver is disabled. (a Go duration: 5m, 30s, 1h)"
  ),
  Options.withDefault("5m")
)
const defaultWatchCacheSize = Options.integer("default-watch-cache-size").pipe(
  Options.withDescription(
    "Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set."
  ),
  Options.withDefault(100)
)
const encryptionProviderConfig = Options.file("encryption-provider-config").pipe(
  Options.withDescription(
    "The file containing configuration for encryption providers to be used for storing secrets in etcd."
  ),
  Options.optional
)
const bindAddress = Options.text("bind-address").pipe(
  Options.withDescription("The IP address on which to listen."),
  Options.withDefault("127.0.0.1")
)
const port = Options.integer("port").pipe(
  Options.withDescription("The port on which to serve (0 picks a free one)."),
  Options.withDefault(8080)
)
const tlsCertFile = Options.file("tls-cert-file").pipe(
  Options.withDescription("File containing the x509 certificate for HTTPS."),
  Options.optional
)
const tlsPrivateKeyFile = Options.file("tls-private-key-file").pipe(
  Options.withDescription("File containing the x509 private key matching --tls-cert-file."),
  Options.optional
)
const logLevel = Options.choice("log-level", ["debug", "info", "warn", "error"]).pipe(
  Options.withDescription("Log level (default warn: quiet)."),
  Options.withDefault("warn" as const)
)

const levels = { debug: LogLevel.Debug, info: LogLevel.Info, warn: LogLevel.Warning, error: LogLevel.Error } as const
const opt = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

export const apiserver = Command.make(
  "apiserver",
  {
    etcdServers,
    etcdPrefix,
    etcdCafile,
    etcdCertfile,
    etcdKeyfile,
    dataDir,
    watchCache,
    defaultWatchCacheSize,
    etcdCompactionInterval,
    encryptionProviderConfig,
    bindAddress,
    port,
    tlsCertFile,
    tlsPrivateKeyFile,
    logLevel
  },
  (flags) =>
    Effect.gen(function* () {
      const { serve } = yield* Effect.promise(() => import("../kubernetes/apiserver/server.js"))
      const { ApiServerError, parseGoDuration } = yield* Effect.promise(
        () => import("../kubernetes/apiserver/config.js")
      )
      const compaction = parseGoDuration(flags.etcdCompactionInterval)
      if (compaction._tag === "Left")
        return yield* new ApiServerError({
          reason: "BadConfig",
          message: `invalid argument ${JSON.stringify(flags.etcdCompactionInterval)} for "--etcd-compaction-interval" flag: ${compaction.left}`
        })
      const { silenceGrpcLogs } = yield* Effect.promise(() => import("../server/grpc-logs.js"))
      if (flags.logLevel !== "debug") silenceGrpcLogs()
      const running = yield* serve({
        etcdServers: flags.etcdServers
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
        etcdPrefix: flags.etcdPrefix,
        etcdCafile: opt(flags.etcdCafile),
        etcdCertfile: opt(flags.etcdCertfile),
        etcdKeyfile: opt(flags.etcdKeyfile),
        dataDir: opt(flags.dataDir),
        watchCache: flags.watchCache,
        defaultWatchCacheSize: flags.defaultWatchCacheSize,
        etcdCompactionInterval: compaction.right,
        encryptionProviderConfig: opt(flags.encryptionProviderConfig),
        bindAddress: flags.bindAddress,
        port: flags.port,
        tlsCertFile: opt(flags.tlsCertFile),
        tlsPrivateKeyFile: opt(flags.tlsPrivateKeyFile)
      })
      yield* Console.log(`etcd-effect apiserver: serving on ${running.url}`)
      return yield* Effect.never
    }).pipe(
      Effect.scoped,
      Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleError(Logger.logfmtLogger))),
      Logger.withMinimumLogLevel(levels[flags.logLevel])
    )
).pipe(
  Command.withDescription("Serve the Kubernetes list/watch API (Namespaces, ConfigMaps, Secrets, CRDs) over etcd.")
)
