/**
 * `etcd-effect apiserver`'s configuration: kube-apiserver's flag names where they apply, with its
 * defaults. Its own module (no server code) so the CLI's flag parsing loads nothing heavy.
 */
import { Duration, Either, Schema } from "effect"

/**
 * `etcd-effect apiserver`'s configuration: etcd, the watch cache, the listener, TLS, compaction,
 * event TTL, tracing.
 */
export interface ApiServerConfig {
  /** --etcd-servers: etcd endpoints; empty runs an embedded etcd-effect server on --data-dir */
  readonly etcdServers: ReadonlyArray<string>
  /** --etcd-prefix (default "/registry") */
  readonly etcdPrefix: string
  /** --etcd-cafile / --etcd-certfile / --etcd-keyfile: a TLS etcd */
  readonly etcdCafile?: string | undefined
  readonly etcdCertfile?: string | undefined
  readonly etcdKeyfile?: string | undefined
  /** --data-dir of the embedded etcd (undefined: in memory) */
  readonly dataDir?: string | undefined
  /** --watch-cache (default true) */
  readonly watchCache: boolean
  /** --default-watch-cache-size (default 100; 0 turns the watch cache off) */
  readonly defaultWatchCacheSize: number
  /** --encryption-provider-config */
  readonly encryptionProviderConfig?: string | undefined
  /** --bind-address (default 127.0.0.1) and --port (default 8080; 0 picks a free port) */
  readonly bindAddress: string
  readonly port: number
  /** --tls-cert-file + --tls-private-key-file: serve HTTPS */
  readonly tlsCertFile?: string | undefined
  readonly tlsPrivateKeyFile?: string | undefined
  /** --etcd-compaction-interval (default 5m; 0 disables the apiserver's compactor) */
  readonly etcdCompactionInterval: Duration.Duration
  /** --event-ttl (default 1h): how long an Event is kept after its last write (an etcd lease on its key) */
  readonly eventTTL: Duration.Duration
  /**
   * how long after a change the namespace controller looks at a terminating namespace (its
   * namespaceDeletionGracePeriod, 5 s; not a kube-apiserver flag: tests shorten it)
   */
  readonly namespaceDeletionDelay: Duration.Duration
  /**
   * how long a shutdown waits for the requests in flight (kube-apiserver's http.Server shutdown
   * timeout, 60 s; not a flag)
   */
  readonly shutdownTimeout: Duration.Duration
  /**
   * a span per request verb (`create configmaps`, …; kube-apiserver's tracing), child of the
   * request's `traceparent`, and the embedded etcd's RPC spans; off (default): no span is made
   */
  readonly tracing?: boolean | undefined
}

/** kube-apiserver's defaults: an embedded etcd, prefix /registry, the watch cache on, 127.0.0.1:8080. */
export const defaultApiServerConfig: ApiServerConfig = {
  etcdServers: [],
  etcdPrefix: "/registry",
  watchCache: true,
  defaultWatchCacheSize: 100,
  bindAddress: "127.0.0.1",
  port: 8080,
  etcdCompactionInterval: Duration.minutes(5),
  eventTTL: Duration.hours(1),
  namespaceDeletionDelay: Duration.seconds(5),
  shutdownTimeout: Duration.seconds(60)
}

const GO_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "\u00b5s": 1e-3,
  "\u03bcs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000
}

/** time.ParseDuration ("5m", "1h30m", "300ms", "0"): the duration, or Go's error text. */
export const parseGoDuration = (text: string): Either.Either<Duration.Duration, string> => {
  const q = JSON.stringify(text)
  let s = text
  let sign = 1
  if (s.startsWith("-") || s.startsWith("+")) {
    sign = s.startsWith("-") ? -1 : 1
    s = s.slice(1)
  }
  if (s === "0") return Either.right(Duration.zero)
  if (s === "") return Either.left(`time: invalid duration ${q}`)
  let ms = 0
  const re = /^([0-9]*(?:\.[0-9]*)?)([a-zµμ]*)/
  while (s !== "") {
    const m = re.exec(s)
    if (m === null || m[1] === "" || m[1] === ".") return Either.left(`time: invalid duration ${q}`)
    if (m[2] === "") return Either.left(`time: missing unit in duration ${q}`)
    const unit = GO_UNITS[m[2]!]
    if (unit === undefined) return Either.left(`time: unknown unit ${JSON.stringify(m[2])} in duration ${q}`)
    ms += Number(m[1]) * unit
    s = s.slice(m[0].length)
  }
  if (sign < 0 && ms > 0) return Either.left(`negative duration ${q}`)
  return Either.right(Duration.millis(ms))
}

/** A start-up failure of the apiserver, one line for stderr. */
export class ApiServerError extends Schema.TaggedError<ApiServerError>()("ApiServerError", {
  reason: Schema.Literal("BadConfig", "Etcd", "Listen"),
  message: Schema.String
}) {}
