/**
 * `etcd-effect apiserver`: the Kubernetes list/watch API (src/kubernetes/apiserver) over etcd,
 * with kube-apiserver's flag names (flags/apiserver-flags.ts). Without --etcd-servers it runs an
 * etcd-effect server in the same process (on --data-dir, or in memory), so one command starts
 * everything. It prints the URL it serves on, the etcd it uses and where the data lives; SIGINT/SIGTERM end the
 * watches, stop listening and close the storage (exit 0).
 */
import { resolve } from "node:path"
import { Console, Duration, Effect, FiberRef, HashSet, Logger, LogLevel } from "effect"
import type { apiserverFlags } from "./flags/apiserver-flags.js"
import type { ValuesOf } from "./flags/flag.js"
import type { ParsedRun } from "./flags/parse.js"
import { failOnFatal } from "../supervision/fatal.js"

const levels = { debug: LogLevel.Debug, info: LogLevel.Info, warn: LogLevel.Warning, error: LogLevel.Error } as const
const orNone = (s: string): string | undefined => (s === "" ? undefined : s)

export const runApiserver = (p: ParsedRun): Effect.Effect<void, unknown> => {
  const flags = p.values as ValuesOf<typeof apiserverFlags>
  if (p.args.length > 0) {
    // cobra's Args check of kube-apiserver
    return Effect.fail(new Error(`"etcd-effect apiserver" does not take any arguments, got ${JSON.stringify(p.args)}`))
  }
  return Effect.gen(function* () {
    const { serve } = yield* Effect.promise(() => import("../kubernetes/apiserver/server.js"))
    const { silenceGrpcLogs } = yield* Effect.promise(() => import("../server/grpc-logs.js"))
    // OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set (kube-apiserver's tracing configuration)
    const { layerFromEnv, otlpTracesUrl } = yield* Effect.promise(() => import("../tracing/index.js"))
    const tracing = otlpTracesUrl(process.env) !== undefined
    if (flags["log-level"] !== "debug") silenceGrpcLogs()
    const etcdServers = flags["etcd-servers"].map((s) => s.trim()).filter((s) => s !== "")
    const running = yield* serve({
      etcdServers,
      etcdPrefix: flags["etcd-prefix"],
      etcdCafile: orNone(flags["etcd-cafile"]),
      etcdCertfile: orNone(flags["etcd-certfile"]),
      etcdKeyfile: orNone(flags["etcd-keyfile"]),
      dataDir: orNone(flags["data-dir"]),
      watchCache: flags["watch-cache"],
      defaultWatchCacheSize: flags["default-watch-cache-size"],
      etcdCompactionInterval: Duration.millis(flags["etcd-compaction-interval"]),
      eventTTL: Duration.millis(flags["event-ttl"]),
      encryptionProviderConfig: orNone(flags["encryption-provider-config"]),
      bindAddress: flags["bind-address"],
      port: flags.port,
      tlsCertFile: orNone(flags["tls-cert-file"]),
      tlsPrivateKeyFile: orNone(flags["tls-private-key-file"]),
      tracing
    }).pipe(Effect.provide(layerFromEnv("apiserver")))
    yield* Console.log(`etcd-effect apiserver: serving on ${running.url}`)
    const endpoints = running.etcdEndpoints.join(",")
    yield* Console.log(
      etcdServers.length === 0
        ? `etcd-effect apiserver: embedded etcd serving on ${running.etcdEndpoints.map((e) => `http://${e}`).join(",")} (etcdctl --endpoints=${endpoints})`
        : `etcd-effect apiserver: using etcd at ${endpoints}`
    )
    // where the objects live: what survives a restart
    const dataDir = orNone(flags["data-dir"])
    if (etcdServers.length === 0)
      yield* Console.log(
        dataDir === undefined
          ? "etcd-effect apiserver: data in memory: lost when it stops (--data-dir <dir> keeps it)"
          : `etcd-effect apiserver: data in ${resolve(dataDir)}`
      )
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    // a loop that dies (the embedded member's, a watch cache's, a controller's) ends the program
    // with one line and exit 1, as `serve` does: a supervisor restarts it
    failOnFatal,
    Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleError(Logger.logfmtLogger))),
    Logger.withMinimumLogLevel(levels[flags["log-level"]])
  )
}
