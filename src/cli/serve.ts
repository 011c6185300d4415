/**
 * `etcd-effect serve`: one etcd member on this machine, speaking etcd's v3 gRPC API and, on the same
 * port, its JSON gateway and HTTP endpoints (/metrics, /health, /version, /livez, /readyz). Flags carry
 * etcd's names and fall back to the matching ETCD_* environment variables, as etcd's do.
 *
 * SIGINT/SIGTERM interrupt the program (main.ts): the server stops listening, ends its streams,
 * lets unary calls finish, and the backend flushes and closes; the exit code is 0. Start-up
 * problems (a bad flag value, a port in use, a locked or foreign data dir) fail with one line.
 * Logs are structured (logfmt on stderr) and quiet by default (--log-level warn).
 */
import { Command, Options } from "@effect/cli"
import { Config, Duration, Effect, FiberRef, HashSet, Layer, Logger, LogLevel, Option } from "effect"
// Light modules only (constants and flag parsing): the server itself is imported on use, below.
import { DEFAULT_MAX_REQUEST_BYTES } from "../mvcc/limits.js"
import {
  DEFAULT_CLIENT_URL,
  MIN_PROGRESS_NOTIFY_INTERVAL,
  parseAutoCompaction,
  parseGoDuration,
  splitUrls
} from "../server/config.js"
import { ServeError } from "../server/serve-error.js"

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
  Options.withDescription("Comma-separated URLs to listen on for client traffic (http only; port 0 picks one)."),
  Options.withFallbackConfig(Config.string("ETCD_LISTEN_CLIENT_URLS")),
  Options.withDefault(DEFAULT_CLIENT_URL)
)
const listenMetricsUrls = Options.text("listen-metrics-urls").pipe(
  Options.withDescription(
    "Comma-separated URLs of extra listeners for /metrics, /health, /livez and /readyz (http only; port 0 picks one); the client URLs always serve them."
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
const autoCompactionMode = Options.text("auto-compaction-mode").pipe(
  Options.withDescription("Interpret auto-compaction-retention as a period ('periodic') or a revision count ('revision')."),
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
    authToken,
    authTokenTtl,
    bcryptCost,
    logLevel
  },
  (flags) =>
    Effect.gen(function*() {
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
      const member = serverLayer({
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
      return yield* Layer.launch(member)
    }).pipe(
      // our logger only (the runtime may have added a pretty one): logfmt lines on stderr
      Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleError(Logger.logfmtLogger))),
      Logger.withMinimumLogLevel(levels[flags.logLevel])
    )
).pipe(Command.withDescription("Run one etcd member on this machine (etcd's v3 gRPC API and JSON gateway)."))
