/**
 * The server's configuration: etcd's flags that apply to one member, with etcd's defaults, and the
 * parsers for etcd's value syntax (Go durations, URL lists, auto-compaction retention).
 */
import { Duration } from "effect"
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS } from "../mvcc/limits.js"
import { type ClientTlsConfig, defaultClientTlsConfig } from "./tls-config.js"

/** --auto-compaction-mode and --auto-compaction-retention: keep a period of history, or a number of revisions. */
export type AutoCompaction =
  | { readonly mode: "periodic"; readonly retention: Duration.Duration }
  | { readonly mode: "revision"; readonly retention: number }

/** A member's configuration: etcd's serve flags, each as a field (`defaultServerConfig` holds etcd's defaults). */
export interface ServerConfig {
  /** --name: this member's name (MemberList) */
  readonly name: string
  /** --data-dir; undefined: an in-memory backend (tests, embedding) */
  readonly dataDir: string | undefined
  /** --listen-client-urls: where to accept clients ("http(s)://host:port"; port 0 picks one) */
  readonly listenClientUrls: ReadonlyArray<string>
  /**
   * --listen-metrics-urls: extra listeners for /metrics, /health, /livez and /readyz over HTTP
   * ("http(s)://host:port", https with the client certificate; port 0 picks one); empty (etcd's default): none — the client URLs
   * serve them anyway
   */
  readonly listenMetricsUrls: ReadonlyArray<string>
  /** --advertise-client-urls; empty: the listen URLs with their bound ports */
  readonly advertiseClientUrls: ReadonlyArray<string>
  /**
   * --initial-advertise-peer-urls: the peer URLs MemberList reports (etcd always reports some;
   * there is no peer port here, one member is its own cluster)
   */
  readonly advertisePeerUrls: ReadonlyArray<string>
  /** --max-request-bytes */
  readonly maxRequestBytes: number
  /** --max-txn-ops: operations in one txn (each branch and the compares), nested ones included */
  readonly maxTxnOps: number
  /** --quota-backend-bytes: past it the NOSPACE alarm is raised; 0: etcd's default (2 GiB) */
  readonly quotaBackendBytes: number
  /** --max-concurrent-streams: concurrent streams (calls) per client connection; undefined: unlimited */
  readonly maxConcurrentStreams: number | undefined
  /** --grpc-keepalive-min-time: clients pinging more often get GOAWAY ENHANCE_YOUR_CALM */
  readonly keepaliveMinTime: Duration.DurationInput
  /** --grpc-keepalive-interval: how often the server pings an idle client; 0: never */
  readonly keepaliveInterval: Duration.DurationInput
  /** --grpc-keepalive-timeout: how long a ping may go unanswered before the connection closes; 0: none */
  readonly keepaliveTimeout: Duration.DurationInput
  /** --auto-compaction-mode/--auto-compaction-retention; undefined: off */
  readonly autoCompaction: AutoCompaction | undefined
  /** --experimental-watch-progress-notify-interval (raised to 100 ms at least) */
  readonly progressNotifyInterval: Duration.DurationInput
  /** how long unary calls in flight may take to finish at shutdown */
  readonly shutdownGrace: Duration.DurationInput
  /** the client TLS flags (--cert-file, --key-file, --client-cert-auth, …), for https URLs; with
   * --client-cert-auth a call that sends no token is the user its certificate names (auth-guard.ts) */
  readonly tls: ClientTlsConfig
  /** --auth-token: "simple", or "jwt,pub-key=…,priv-key=…,sign-method=…[,ttl=…]" */
  readonly authToken: string
  /** --auth-token-ttl: seconds a simple token lives without use */
  readonly authTokenTtl: number
  /** --bcrypt-cost for password hashes (4..31) */
  readonly bcryptCost: number
  /**
   * --grpc-transport: "lean", our own HTTP/2 transport (src/server/transport/), or "grpc-js"
   * (@grpc/grpc-js over node:http2). The default honours ETCD_GRPC_TRANSPORT, as every flag of
   * `serve` honours its ETCD_* variable: the test suites run on both transports that way.
   */
  readonly grpcTransport: GrpcTransportName
  /**
   * How long a client connection may take to show it is one: the TLS handshake and protocol sniff
   * (cmux.ts), the HTTP/2 preface and SETTINGS, the ACK of ours, and any header block once begun
   * (the lean transport, src/server/transport/). Slowloris peers are closed after it.
   */
  readonly h2HandshakeTimeout: Duration.DurationInput
  /** --unsafe-no-fsync: the backend never syncs (a crash may lose acknowledged writes) */
  readonly unsafeNoFsync: boolean
  /** --backend-batch-interval: longest wait of a durable batch for its LMDB commit; undefined: 100 ms */
  readonly backendBatchInterval: Duration.Duration | undefined
  /** --backend-batch-limit: an LMDB commit starts once this many ops wait; undefined: 10000 */
  readonly backendBatchLimit: number | undefined
  /**
   * --experimental-initial-corrupt-check (3.6: --feature-gates=InitialCorruptCheck=true): at start,
   * check every stored record's checksum before serving (src/server/corrupt-check.ts)
   */
  readonly initialCorruptCheck: boolean
  /**
   * --experimental-corrupt-check-time (3.6: --corrupt-check-time): check every stored record at
   * this period; zero (the default): never
   */
  readonly corruptCheckTime: Duration.Duration
  /**
   * --experimental-enable-distributed-tracing: a span per unary RPC (`etcdserverpb.KV/Put`, …),
   * child of the caller's W3C `traceparent`, on the tracer of the server's runtime (an OTLP
   * exporter: src/tracing/). Off, the RPC entry points are exactly as without tracing.
   */
  readonly distributedTracing: boolean
}

export type GrpcTransportName = "lean" | "grpc-js"

/** ETCD_GRPC_TRANSPORT when it names a transport, else "lean". */
export const defaultGrpcTransport = (): GrpcTransportName =>
  process.env["ETCD_GRPC_TRANSPORT"] === "grpc-js" ? "grpc-js" : "lean"

/** etcd's DefaultQuotaBytes (2 GiB), what --quota-backend-bytes 0 means. */
export const DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024
/** etcd's MaxQuotaBytes (8 GiB): a larger quota is used but warned about. */
export const MAX_QUOTA_BYTES = 8 * 1024 * 1024 * 1024

/** etcd's default progressReportInterval. */
export const DEFAULT_PROGRESS_NOTIFY_INTERVAL = Duration.minutes(10)
/** etcd's minWatchProgressInterval: shorter configured intervals are raised to it. */
export const MIN_PROGRESS_NOTIFY_INTERVAL = Duration.millis(100)

/** etcd's default --listen-client-urls. */
export const DEFAULT_CLIENT_URL = "http://127.0.0.1:2379"
/** etcd's default --initial-advertise-peer-urls */
export const DEFAULT_PEER_URL = "http://localhost:2380"

/** etcd's usual metrics port, for --listen-metrics-urls (which is empty by default, as etcd's) */
export const DEFAULT_METRICS_URL = "http://127.0.0.1:2381"

/** etcd's defaults for every field, in memory (no data dir) on http://127.0.0.1:2379. */
export const defaultServerConfig: ServerConfig = {
  name: "default",
  dataDir: undefined,
  listenClientUrls: [DEFAULT_CLIENT_URL],
  listenMetricsUrls: [],
  advertiseClientUrls: [],
  advertisePeerUrls: [DEFAULT_PEER_URL],
  maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
  maxTxnOps: DEFAULT_MAX_TXN_OPS,
  quotaBackendBytes: 0,
  maxConcurrentStreams: undefined,
  keepaliveMinTime: Duration.seconds(5),
  keepaliveInterval: Duration.hours(2),
  keepaliveTimeout: Duration.seconds(20),
  autoCompaction: undefined,
  progressNotifyInterval: DEFAULT_PROGRESS_NOTIFY_INTERVAL,
  shutdownGrace: Duration.seconds(2),
  tls: defaultClientTlsConfig,
  authToken: "simple",
  authTokenTtl: 300,
  bcryptCost: 10,
  grpcTransport: defaultGrpcTransport(),
  h2HandshakeTimeout: Duration.seconds(10),
  unsafeNoFsync: false,
  backendBatchInterval: undefined,
  backendBatchLimit: undefined,
  initialCorruptCheck: false,
  corruptCheckTime: Duration.zero,
  distributedTracing: false
}

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000
}

/** Go's time.ParseDuration ("1h30m", "100ms", "1.5s", "0"); undefined when malformed. */
export const parseGoDuration = (input: string): Duration.Duration | undefined => {
  let s = input.trim()
  if (s === "") return undefined
  let sign = 1
  if (s[0] === "-" || s[0] === "+") {
    if (s[0] === "-") sign = -1
    s = s.slice(1)
  }
  if (s === "0") return Duration.zero
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/
  let total = 0
  while (s.length > 0) {
    const m = re.exec(s)
    if (m === null) return undefined
    total += Number(m[1]) * UNITS[m[2]!]!
    s = s.slice(m[0].length)
  }
  if (sign < 0) return undefined
  return Duration.millis(total)
}

/** A comma-separated URL list, as etcd's URL flags take it. */
export const splitUrls = (s: string): Array<string> =>
  s
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u.length > 0)

export interface ListenAddress {
  /** the URL as given */
  readonly url: string
  readonly host: string
  readonly port: number
  /** an https URL: TLS with the client certificate */
  readonly https: boolean
}

/** Parses a listen URL (http or https); error text for one line on stderr. */
const parseListenUrl =
  (kind: "client" | "metrics" | "peer") =>
  (url: string): ListenAddress | string => {
    let u: URL
    try {
      u = new URL(url)
    } catch {
      return `invalid ${kind} URL ${JSON.stringify(url)}: expected http://host:port`
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      return `${kind} URL ${url}: unsupported scheme ${JSON.stringify(u.protocol)} (http or https)`
    }
    if (u.port === "") return `${kind} URL ${url}: missing port`
    if (u.pathname !== "/" && u.pathname !== "") return `${kind} URL ${url}: expected no path`
    return { url, host: u.hostname, port: Number(u.port), https: u.protocol === "https:" }
  }

/** Parses a client URL (--listen-client-urls, --advertise-client-urls). */
export const parseClientUrl = parseListenUrl("client")

/** Parses a metrics URL (--listen-metrics-urls). */
export const parseMetricsUrl = parseListenUrl("metrics")

/** Parses a peer URL (--initial-advertise-peer-urls). */
export const parsePeerUrl = parseListenUrl("peer")

/**
 * --auto-compaction-mode/--auto-compaction-retention as etcd reads them: periodic retention is an
 * hour count or a duration; revision retention is a revision count; "0" (the default) is off.
 */
export const parseAutoCompaction = (mode: string, retention: string): AutoCompaction | undefined | string => {
  const r = retention.trim()
  if (r === "" || r === "0") return undefined
  switch (mode) {
    case "periodic": {
      if (/^\d+$/.test(r)) return { mode, retention: Duration.hours(Number(r)) }
      const d = parseGoDuration(r)
      if (d === undefined) return `error parsing auto-compaction-retention: invalid duration ${JSON.stringify(r)}`
      return Duration.toMillis(d) === 0 ? undefined : { mode, retention: d }
    }
    case "revision": {
      if (!/^\d+$/.test(r))
        return `error parsing auto-compaction-retention: ${JSON.stringify(r)} is not a revision count`
      return { mode, retention: Number(r) }
    }
    default:
      return `unknown auto-compaction-mode ${JSON.stringify(mode)}`
  }
}
