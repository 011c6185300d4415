/**
 * `etcd-effect serve`: one etcd member on this machine, speaking etcd's v3 gRPC API and, on the same
 * port, its JSON gateway and HTTP endpoints (/metrics, /health, /version, /livez, /readyz). Its
 * flags (flags/serve-flags.ts) carry etcd's names and fall back to the matching ETCD_* environment
 * variables, as etcd's do.
 *
 * SIGINT/SIGTERM interrupt the program (main.ts): the server stops listening, ends its streams,
 * lets unary calls finish, and the backend flushes and closes; the exit code is 0. Start-up
 * problems (a bad flag value, a port in use, a locked or foreign data dir) fail with one line, and so
 * does a background loop of the member that dies (src/supervision/fatal.ts): the exit code is then 1.
 * Logs are structured (logfmt on stderr); at the default level (info) they say, as etcd's do, that
 * the member is ready and the URLs it serves clients and metrics on.
 */
import { Console, Duration, Effect, FiberRef, HashSet, Layer, Logger } from "effect"
// Light modules only (constants and flag parsing): the server itself is imported on use, below.
import { failOnFatal } from "../supervision/fatal.js"
import {
  DEFAULT_QUOTA_BYTES,
  MAX_QUOTA_BYTES,
  MIN_PROGRESS_NOTIFY_INTERVAL,
  parseAutoCompaction,
  parsePeerUrl,
  type ServerConfig,
  splitUrls
} from "../server/config.js"
import { ServeError } from "../server/serve-error.js"
import { type ClientTlsConfig, parseCipherSuites, parseTlsVersion } from "../server/tls-config.js"
import type { ValuesOf } from "./flags/flag.js"
import type { ParsedRun } from "./flags/parse.js"
import { serveFlags, UNLIMITED_STREAMS } from "./flags/serve-flags.js"
import { readConfigFile } from "./serve-config-file.js"
import { checkPortsFree } from "./serve-port-check.js"
import { API_VERSION, PROGRAM_VERSION } from "./flags/table.js"
import { checkInertFlags, checkRenamedFlags, inertFlagsWarning } from "./serve-etcd-checks.js"
import { logLevels, openOutputs, serveLogger } from "./serve-logger.js"
import { stopWhenNpxGoes } from "./serve-npx-parent.js"
import { tracingFlags } from "./serve-tracing.js"
import { checkSamplingRate } from "../tracing/sampler.js"

type ServeFlags = ValuesOf<typeof serveFlags>

const badConfig = (message: string) => new ServeError({ reason: "BadConfig", message })

/** The client TLS flags, checked (etcd's words for bad values). */
const tlsFlags = (f: ServeFlags): Effect.Effect<ClientTlsConfig, ServeError> =>
  Effect.gen(function* () {
    const suites = parseCipherSuites(f["cipher-suites"])
    if (typeof suites === "string") return yield* badConfig(suites)
    const min = parseTlsVersion("tls-min-version", f["tls-min-version"])
    if (typeof min === "object") return yield* badConfig(min.error)
    const max = parseTlsVersion("tls-max-version", f["tls-max-version"])
    if (typeof max === "object") return yield* badConfig(max.error)
    const orUndefined = (s: string) => (s === "" ? undefined : s)
    return {
      certFile: orUndefined(f["cert-file"]),
      keyFile: orUndefined(f["key-file"]),
      trustedCaFile: orUndefined(f["trusted-ca-file"]),
      clientCertAuth: f["client-cert-auth"],
      autoTls: f["auto-tls"],
      cipherSuites: suites,
      minVersion: min ?? "TLS1.2",
      maxVersion: max
    }
  })

/**
 * etcd's cluster flags on a single member, checked as etcd checks them (its words where it has
 * some): the peer URLs parse, --initial-cluster (default: <name>=<advertised peer URLs>) names this
 * member with exactly its advertised peer URLs, and no other member — several need etcd itself.
 */
export const checkClusterFlags = (f: ServeFlags): string | undefined => {
  for (const url of [...splitUrls(f["listen-peer-urls"]), ...splitUrls(f["initial-advertise-peer-urls"])]) {
    const parsed = parsePeerUrl(url)
    if (typeof parsed === "string") return parsed
  }
  const advertised = splitUrls(f["initial-advertise-peer-urls"])
  const initial = f["initial-cluster"].trim()
  const entries = initial === "" ? advertised.map((url) => [f.name, url] as const) : []
  for (const entry of initial === "" ? [] : initial.split(",")) {
    const eq = entry.indexOf("=")
    if (eq <= 0) return `--initial-cluster: ${JSON.stringify(entry)} is not name=URL`
    entries.push([entry.slice(0, eq).trim(), entry.slice(eq + 1).trim()])
  }
  const others = [...new Set(entries.map(([name]) => name).filter((name) => name !== f.name))]
  if (entries.length === others.length) {
    return `couldn't find local name ${JSON.stringify(f.name)} in the initial cluster configuration`
  }
  if (others.length > 0) {
    return `--initial-cluster names ${others.join(", ")} besides ${f.name}: etcd-effect serve is one member; run etcd for a cluster of several`
  }
  const mine = entries.map(([, url]) => url)
  for (const url of mine) {
    const parsed = parsePeerUrl(url)
    if (typeof parsed === "string") return parsed
  }
  const [a, b] = [[...advertised].sort().join(","), [...mine].sort().join(",")]
  if (a !== b) {
    return `--initial-cluster has ${f.name}=${mine.join(",")} but missing from --initial-advertise-peer-urls=${advertised.join(",")} (resolved urls: ${JSON.stringify(a)} != ${JSON.stringify(b)})`
  }
  return undefined
}

/** The member's configuration from checked flags, or etcd's words for the first bad one. */
const memberConfig = (flags: ServeFlags, set: ReadonlySet<string>) =>
  Effect.gen(function* () {
    if (flags["max-request-bytes"] <= 0) return yield* badConfig("--max-request-bytes must be positive")
    if (flags["auth-token-ttl"] <= 0) return yield* badConfig("--auth-token-ttl must be positive")
    const autoCompaction = parseAutoCompaction(flags["auto-compaction-mode"], flags["auto-compaction-retention"])
    if (typeof autoCompaction === "string") return yield* badConfig(autoCompaction)
    const renamed = checkRenamedFlags(flags, set)
    if (typeof renamed === "string") return yield* badConfig(renamed)
    const tracing = tracingFlags(flags, set)
    const badRate = tracing.enabled ? checkSamplingRate(tracing.samplingRatePerMillion) : undefined
    if (badRate !== undefined) return yield* badConfig(`distributed tracing configurition is not valid: (${badRate})`)
    const interval = Duration.millis(renamed.progressNotifyInterval)
    if (Duration.lessThan(interval, MIN_PROGRESS_NOTIFY_INTERVAL)) {
      yield* Effect.logWarning("watch progress notify interval raised to the minimum 100ms")
    }
    const tls = yield* tlsFlags(flags)
    const cluster = checkClusterFlags(flags) ?? checkInertFlags(flags, set)
    if (cluster !== undefined) return yield* badConfig(cluster)
    if (flags["max-txn-ops"] <= 0) return yield* badConfig("--max-txn-ops must be positive")
    const quota = flags["quota-backend-bytes"]
    if (quota < 0) return yield* badConfig("--quota-backend-bytes must not be negative")
    if (quota > MAX_QUOTA_BYTES) {
      yield* Effect.logWarning(`quota exceeds the maximum value (${MAX_QUOTA_BYTES}); using it anyway`)
    }
    const maxStreams = flags["max-concurrent-streams"]
    if (maxStreams <= 0) return yield* badConfig("--max-concurrent-streams must be positive")
    for (const name of ["grpc-keepalive-min-time", "grpc-keepalive-interval", "grpc-keepalive-timeout"] as const) {
      if (flags[name] < 0) return yield* badConfig(`--${name} must not be negative`)
    }
    const busy = yield* checkPortsFree([
      ...splitUrls(flags["listen-client-urls"]),
      ...splitUrls(flags["listen-metrics-urls"])
    ])
    if (busy !== undefined) return yield* badConfig(busy)
    const inert = inertFlagsWarning(set)
    if (inert !== undefined) yield* Effect.logWarning(inert)
    const config: Partial<ServerConfig> = {
      tls,
      maxTxnOps: flags["max-txn-ops"],
      quotaBackendBytes: quota === 0 ? DEFAULT_QUOTA_BYTES : quota,
      maxConcurrentStreams: maxStreams >= UNLIMITED_STREAMS ? undefined : maxStreams,
      keepaliveMinTime: Duration.millis(flags["grpc-keepalive-min-time"]),
      keepaliveInterval: Duration.millis(flags["grpc-keepalive-interval"]),
      keepaliveTimeout: Duration.millis(flags["grpc-keepalive-timeout"]),
      grpcTransport: flags["grpc-transport"],
      name: flags.name,
      dataDir: flags["data-dir"] === "" ? `${flags.name}.etcd` : flags["data-dir"],
      listenClientUrls: splitUrls(flags["listen-client-urls"]),
      listenMetricsUrls: splitUrls(flags["listen-metrics-urls"]),
      advertiseClientUrls: splitUrls(flags["advertise-client-urls"]),
      advertisePeerUrls: splitUrls(flags["initial-advertise-peer-urls"]),
      maxRequestBytes: flags["max-request-bytes"],
      autoCompaction,
      progressNotifyInterval: Duration.max(interval, MIN_PROGRESS_NOTIFY_INTERVAL),
      authToken: flags["auth-token"],
      authTokenTtl: flags["auth-token-ttl"],
      bcryptCost: flags["bcrypt-cost"],
      unsafeNoFsync: flags["unsafe-no-fsync"],
      backendBatchInterval:
        flags["backend-batch-interval"] > 0 ? Duration.millis(flags["backend-batch-interval"]) : undefined,
      backendBatchLimit: flags["backend-batch-limit"] > 0 ? flags["backend-batch-limit"] : undefined,
      initialCorruptCheck: renamed.initialCorruptCheck,
      corruptCheckTime: Duration.millis(Math.max(0, renamed.corruptCheckTime))
    }
    return config
  })

/** Runs `serve` with its parsed flags until interrupted. */
export const runServe = (p: ParsedRun): Effect.Effect<void, unknown> => {
  if (p.args.length > 0) {
    return badConfig(`${JSON.stringify(p.args[0])} is not a valid flag. See 'etcd-effect serve --help'.`)
  }
  if (p.values["version"] === true) {
    return Console.log(`etcd-effect Version: ${PROGRAM_VERSION}\nAPI Version: ${API_VERSION}`)
  }
  // etcd: a config file replaces the command line and the environment
  const file = p.values["config-file"] as string
  const loaded = file === "" ? { values: p.values, set: p.set } : readConfigFile(file, serveFlags)
  if (typeof loaded === "string") return badConfig(loaded)
  const flags = loaded.values as ServeFlags
  const outputs = loaded.set.has("log-outputs") ? flags["log-outputs"] : flags["log-output"]
  const writers = openOutputs(outputs)
  if (typeof writers === "string") return badConfig(writers)
  // etcd 3.6 has zap only: its --log-format asks for zap's lines whatever --logger says (3.4's capnslog)
  const logger = loaded.set.has("log-format") ? "zap" : flags.logger
  const settings = { logger, format: flags["log-format"], outputs }
  const level = flags.debug ? "debug" : flags["log-level"]
  return Effect.gen(function* () {
    // the server (grpc-js, LMDB, …) is loaded on use: the client commands start without it
    const { layer: serverLayer, silenceGrpcLogs } = yield* Effect.promise(() => import("../server/index.js"))
    if (level !== "debug") silenceGrpcLogs()
    if (file !== "") {
      yield* Effect.logInfo(
        "loaded server configuration, other configuration command line flags and environment variables will be ignored if provided"
      ).pipe(Effect.annotateLogs({ path: file }))
    }
    // OTLP export with --enable-distributed-tracing (etcd's flags), else when OTEL_EXPORTER_OTLP_ENDPOINT is set
    const { layerFromEnv, layerOtlp, otlpTracesUrl, tracesUrlOfAddress } = yield* Effect.promise(
      () => import("../tracing/otlp-exporter.js")
    )
    const config = yield* memberConfig(flags, loaded.set)
    const tracing = tracingFlags(flags, loaded.set)
    const exporter = tracing.enabled
      ? layerOtlp({
          url: tracesUrlOfAddress(tracing.address),
          serviceName: tracing.serviceName,
          instanceId: tracing.instanceId,
          samplingRatePerMillion: tracing.samplingRatePerMillion
        })
      : layerFromEnv("etcd")
    const traced = tracing.enabled || otlpTracesUrl(process.env) !== undefined
    const member = serverLayer({ ...config, distributedTracing: traced })
    // `npx etcd-effect serve & kill $!`: npm exec does not pass the signal on (serve-npx-parent.ts)
    stopWhenNpxGoes()
    // a background loop that dies (watch sync, victims, lease expiry, compaction) fails the member
    return yield* failOnFatal(Layer.launch(member).pipe(Effect.provide(exporter)))
  }).pipe(
    // our logger only (the runtime may have added a pretty one)
    Effect.locally(FiberRef.currentLoggers, HashSet.make(serveLogger(settings, writers))),
    Logger.withMinimumLogLevel(logLevels[level])
  )
}
