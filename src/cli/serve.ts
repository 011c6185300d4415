/**
 * `etcd-effect serve`: one etcd member on this machine, speaking etcd's v3 gRPC API and, on the same
 * port, its JSON gateway and HTTP endpoints (/metrics, /health, /version, /livez, /readyz). Flags carry
 * etcd's names and fall back to the matching ETCD_* environment variables, as etcd's do.
 *
 * SIGINT/SIGTERM interrupt the program (main.ts): the server stops listening, ends its streams,
 * lets unary calls finish, and the backend flushes and closes; the exit code is 0. Start-up
 * problems (a bad flag value, a port in use, a locked or foreign data dir) fail with one line, and so
 * does a background loop of the member that dies (src/mvcc/fatal.ts): the exit code is then 1.
 * Logs are structured (logfmt on stderr) and quiet by default (--log-level warn).
 */
import { Command, Options } from "@effect/cli"
import { Config, Duration, Effect, FiberRef, HashSet, Layer, Logger, LogLevel, Option } from "effect"
// Light modules only (constants and flag parsing): the server itself is imported on use, below.
import { failOnFatal } from "../mvcc/fatal.js"
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS } from "../mvcc/limits.js"
import {
  DEFAULT_CLIENT_URL,
  DEFAULT_QUOTA_BYTES,
  MAX_QUOTA_BYTES,
  MIN_PROGRESS_NOTIFY_INTERVAL,
  parseAutoCompaction,
  parseGoDuration,
  splitUrls
} from "../server/config.js"
import { ServeError } from "../server/serve-error.js"
import { type ClientTlsConfig, parseCipherSuites, parseTlsVersion } from "../server/tls-config.js"

const name = Options.text("name").pipe(
  Options.withDescription("Human-readable name for this member."),
  Options.withFallbackConfig(Config.string("ETCD_NAME")),
  Options.withDefault("default")
)
const dataDir = Options.text("data-dir").pipe(
  Options.withDescription("Path to the data directory (default: <name>.etcd)."),
  Options.withFallbackConfig(Config.string("ETCD_DATA_DIR")),
  Options.optional
)
const listenClientUrls = Options.text("listen-client-urls").pipe(
  Options.withDescription("Comma-separated URLs to listen on for client traffic (http or https; port 0 picks one)."),
  Options.withFallbackConfig(Config.string("ETCD_LISTEN_CLIENT_URLS")),
  Options.withDefault(DEFAULT_CLIENT_URL)
)
const listenMetricsUrls = Options.text("listen-metrics-urls").pipe(
  Options.withDescription(
    "Comma-separated URLs of extra listeners for /metrics, /health, /livez and /readyz (http or https with the client certificate; port 0 picks one); the client URLs always serve them."
  ),
  Options.withFallbackConfig(Config.string("ETCD_LISTEN_METRICS_URLS")),
  // etcd's default: no extra listener
  Options.withDefault("")
)
const advertiseClientUrls = Options.text("advertise-client-urls").pipe(
  Options.withDescription("Comma-separated client URLs this member advertises (default: the listen URLs)."),
  Options.withFallbackConfig(Config.string("ETCD_ADVERTISE_CLIENT_URLS")),
  Options.optional
)
const maxRequestBytes = Options.integer("max-request-bytes").pipe(
  Options.withDescription("Maximum client request size in bytes the server will accept."),
  Options.withFallbackConfig(Config.integer("ETCD_MAX_REQUEST_BYTES")),
  Options.withDefault(DEFAULT_MAX_REQUEST_BYTES)
)
const text = (flag: string, env: string, description: string, fallback: string) =>
  Options.text(flag).pipe(
    Options.withDescription(description),
    Options.withFallbackConfig(Config.string(env)),
    Options.withDefault(fallback)
  )
const flag = (name: string, env: string, description: string) =>
  Options.boolean(name).pipe(Options.withDescription(description), Options.withFallbackConfig(Config.boolean(env)))
const certFile = text("cert-file", "ETCD_CERT_FILE", "Path to the client server TLS cert file.", "")
const keyFile = text("key-file", "ETCD_KEY_FILE", "Path to the client server TLS key file.", "")
const trustedCaFile = text(
  "trusted-ca-file",
  "ETCD_TRUSTED_CA_FILE",
  "Path to the client server TLS trusted CA cert file.",
  ""
)
const clientCertAuth = flag("client-cert-auth", "ETCD_CLIENT_CERT_AUTH", "Enable client cert authentication.")
const autoTls = flag("auto-tls", "ETCD_AUTO_TLS", "Client TLS using generated certificates.")
const cipherSuites = text(
  "cipher-suites",
  "ETCD_CIPHER_SUITES",
  "Comma-separated list of supported TLS cipher suites between client/server (Go's names; empty: the defaults).",
  ""
)
const tlsMinVersion = text(
  "tls-min-version",
  "ETCD_TLS_MIN_VERSION",
  "Minimum TLS version supported (TLS1.2, TLS1.3).",
  "TLS1.2"
)
const tlsMaxVersion = text(
  "tls-max-version",
  "ETCD_TLS_MAX_VERSION",
  "Maximum TLS version supported (TLS1.2, TLS1.3; empty: the highest).",
  ""
)
const quotaBackendBytes = Options.integer("quota-backend-bytes").pipe(
  Options.withDescription("Raise alarms when backend size exceeds the given quota (0 defaults to 2 GiB)."),
  Options.withFallbackConfig(Config.integer("ETCD_QUOTA_BACKEND_BYTES")),
  Options.withDefault(0)
)
const maxTxnOps = Options.integer("max-txn-ops").pipe(
  Options.withDescription("Maximum number of operations permitted in a transaction."),
  Options.withFallbackConfig(Config.integer("ETCD_MAX_TXN_OPS")),
  Options.withDefault(DEFAULT_MAX_TXN_OPS)
)
const maxConcurrentStreams = Options.integer("max-concurrent-streams").pipe(
  Options.withDescription("Maximum concurrent streams that each client can open at a time."),
  Options.withFallbackConfig(Config.integer("ETCD_MAX_CONCURRENT_STREAMS")),
  Options.optional
)
const keepaliveMinTime = text(
  "grpc-keepalive-min-time",
  "ETCD_GRPC_KEEPALIVE_MIN_TIME",
  "Minimum duration interval that a client should wait before pinging server.",
  "5s"
)
const keepaliveInterval = text(
  "grpc-keepalive-interval",
  "ETCD_GRPC_KEEPALIVE_INTERVAL",
  "Frequency duration of server-to-client ping to check if a connection is alive (0 to disable).",
  "2h"
)
const keepaliveTimeout = text(
  "grpc-keepalive-timeout",
  "ETCD_GRPC_KEEPALIVE_TIMEOUT",
  "Additional duration of wait before closing a non-responsive connection (0 to disable).",
  "20s"
)
const grpcTransport = Options.choice("grpc-transport", ["lean", "grpc-js"]).pipe(
  Options.withDescription(
    "The gRPC transport: 'lean' (our own HTTP/2 server transport, as grpc-go has its own) or 'grpc-js' (@grpc/grpc-js over node:http2)."
  ),
  Options.withFallbackConfig(Config.literal("lean", "grpc-js")("ETCD_GRPC_TRANSPORT")),
  Options.withDefault("lean" as const)
)
const autoCompactionMode = Options.text("auto-compaction-mode").pipe(
  Options.withDescription(
    "Interpret auto-compaction-retention as a period ('periodic') or a revision count ('revision')."
  ),
  Options.withFallbackConfig(Config.string("ETCD_AUTO_COMPACTION_MODE")),
  Options.withDefault("periodic")
)
const autoCompactionRetention = Options.text("auto-compaction-retention").pipe(
  Options.withDescription("Auto-compaction retention: hours or a duration (periodic), revisions (revision). 0 is off."),
  Options.withFallbackConfig(Config.string("ETCD_AUTO_COMPACTION_RETENTION")),
  Options.withDefault("0")
)
const progressNotifyInterval = Options.text("experimental-watch-progress-notify-interval").pipe(
  Options.withDescription("Duration of periodic watch progress notifications (at least 100ms)."),
  Options.withFallbackConfig(Config.string("ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL")),
  Options.withDefault("10m")
)
const authToken = Options.text("auth-token").pipe(
  Options.withDescription(
    "Auth token type: 'simple', or 'jwt,pub-key=<file>,priv-key=<file>,sign-method=<RS256|ES256|…>[,ttl=<duration>]'."
  ),
  Options.withFallbackConfig(Config.string("ETCD_AUTH_TOKEN")),
  Options.withDefault("simple")
)
const authTokenTtl = Options.integer("auth-token-ttl").pipe(
  Options.withDescription("Seconds a simple token lives without use."),
  Options.withFallbackConfig(Config.integer("ETCD_AUTH_TOKEN_TTL")),
  Options.withDefault(300)
)
const bcryptCost = Options.integer("bcrypt-cost").pipe(
  Options.withDescription("bcrypt cost of password hashes (4..31)."),
  Options.withFallbackConfig(Config.integer("ETCD_BCRYPT_COST")),
  Options.withDefault(10)
)
const logLevel = Options.choice("log-level", ["debug", "info", "warn", "error"]).pipe(
  Options.withDescription("Log level (default warn: quiet)."),
  Options.withFallbackConfig(Config.literal("debug", "info", "warn", "error")("ETCD_LOG_LEVEL")),
  Options.withDefault("warn" as const)
)

const levels = { debug: LogLevel.Debug, info: LogLevel.Info, warn: LogLevel.Warning, error: LogLevel.Error } as const

const badConfig = (message: string) => new ServeError({ reason: "BadConfig", message })

/** The client TLS flags, checked (etcd's words for bad values). */
const tlsFlags = (f: {
  readonly certFile: string
  readonly keyFile: string
  readonly trustedCaFile: string
  readonly clientCertAuth: boolean
  readonly autoTls: boolean
  readonly cipherSuites: string
  readonly tlsMinVersion: string
  readonly tlsMaxVersion: string
}): Effect.Effect<ClientTlsConfig, ServeError> =>
  Effect.gen(function* () {
    const suites = parseCipherSuites(f.cipherSuites)
    if (typeof suites === "string") return yield* badConfig(suites)
    const min = parseTlsVersion("tls-min-version", f.tlsMinVersion)
    if (typeof min === "object") return yield* badConfig(min.error)
    const max = parseTlsVersion("tls-max-version", f.tlsMaxVersion)
    if (typeof max === "object") return yield* badConfig(max.error)
    const orUndefined = (s: string) => (s === "" ? undefined : s)
    return {
      certFile: orUndefined(f.certFile),
      keyFile: orUndefined(f.keyFile),
      trustedCaFile: orUndefined(f.trustedCaFile),
      clientCertAuth: f.clientCertAuth,
      autoTls: f.autoTls,
      cipherSuites: suites,
      minVersion: min ?? "TLS1.2",
      maxVersion: max
    }
  })

export const serve = Command.make(
  "serve",
  {
    name,
    dataDir,
    listenClientUrls,
    listenMetricsUrls,
    advertiseClientUrls,
    maxRequestBytes,
    autoCompactionMode,
    autoCompactionRetention,
    progressNotifyInterval,
    logLevel,
    certFile,
    keyFile,
    trustedCaFile,
    clientCertAuth,
    autoTls,
    cipherSuites,
    tlsMinVersion,
    tlsMaxVersion,
    quotaBackendBytes,
    maxTxnOps,
    maxConcurrentStreams,
    keepaliveMinTime,
    keepaliveInterval,
    keepaliveTimeout,
    grpcTransport,
    authToken,
    authTokenTtl,
    bcryptCost
  },
  (flags) =>
    Effect.gen(function* () {
      // the server (grpc-js, LMDB, …) is loaded on use: the client commands start without it
      const { layer: serverLayer, silenceGrpcLogs } = yield* Effect.promise(() => import("../server/index.js"))
      if (flags.logLevel !== "debug") silenceGrpcLogs()
      if (flags.maxRequestBytes <= 0) return yield* badConfig("--max-request-bytes must be positive")
      if (flags.authTokenTtl <= 0) return yield* badConfig("--auth-token-ttl must be positive")
      const autoCompaction = parseAutoCompaction(flags.autoCompactionMode, flags.autoCompactionRetention)
      if (typeof autoCompaction === "string") return yield* badConfig(autoCompaction)
      const interval = parseGoDuration(flags.progressNotifyInterval)
      if (interval === undefined) {
        return yield* badConfig(
          `invalid --experimental-watch-progress-notify-interval ${JSON.stringify(flags.progressNotifyInterval)}`
        )
      }
      if (Duration.lessThan(interval, MIN_PROGRESS_NOTIFY_INTERVAL)) {
        yield* Effect.logWarning("watch progress notify interval raised to the minimum 100ms")
      }
      const tls = yield* tlsFlags(flags)
      if (flags.maxTxnOps <= 0) return yield* badConfig("--max-txn-ops must be positive")
      if (flags.quotaBackendBytes < 0) return yield* badConfig("--quota-backend-bytes must not be negative")
      if (flags.quotaBackendBytes > MAX_QUOTA_BYTES) {
        yield* Effect.logWarning(`quota exceeds the maximum value (${MAX_QUOTA_BYTES}); using it anyway`)
      }
      const maxStreams = Option.getOrUndefined(flags.maxConcurrentStreams)
      if (maxStreams !== undefined && maxStreams <= 0)
        return yield* badConfig("--max-concurrent-streams must be positive")
      const durations: Record<string, Duration.Duration> = {}
      for (const [name, value] of [
        ["grpc-keepalive-min-time", flags.keepaliveMinTime],
        ["grpc-keepalive-interval", flags.keepaliveInterval],
        ["grpc-keepalive-timeout", flags.keepaliveTimeout]
      ] as const) {
        const d = parseGoDuration(value)
        if (d === undefined) return yield* badConfig(`invalid --${name} ${JSON.stringify(value)}`)
        durations[name] = d
      }
      const member = serverLayer({
        tls,
        maxTxnOps: flags.maxTxnOps,
        quotaBackendBytes: flags.quotaBackendBytes === 0 ? DEFAULT_QUOTA_BYTES : flags.quotaBackendBytes,
        maxConcurrentStreams: maxStreams,
        keepaliveMinTime: durations["grpc-keepalive-min-time"]!,
        keepaliveInterval: durations["grpc-keepalive-interval"]!,
        keepaliveTimeout: durations["grpc-keepalive-timeout"]!,
        grpcTransport: flags.grpcTransport,
        name: flags.name,
        dataDir: Option.getOrElse(flags.dataDir, () => `${flags.name}.etcd`),
        listenClientUrls: splitUrls(flags.listenClientUrls),
        listenMetricsUrls: splitUrls(flags.listenMetricsUrls),
        advertiseClientUrls: Option.match(flags.advertiseClientUrls, { onNone: () => [], onSome: splitUrls }),
        maxRequestBytes: flags.maxRequestBytes,
        autoCompaction,
        progressNotifyInterval: Duration.max(interval, MIN_PROGRESS_NOTIFY_INTERVAL),
        authToken: flags.authToken,
        authTokenTtl: flags.authTokenTtl,
        bcryptCost: flags.bcryptCost
      })
      // a background loop that dies (watch sync, victims, lease expiry, compaction) fails the member
      return yield* failOnFatal(Layer.launch(member))
    }).pipe(
      // our logger only (the runtime may have added a pretty one): logfmt lines on stderr
      Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleError(Logger.logfmtLogger))),
      Logger.withMinimumLogLevel(levels[flags.logLevel])
    )
).pipe(Command.withDescription("Run one etcd member on this machine (etcd's v3 gRPC API and JSON gateway)."))
