/**
 * `serve`'s flags: etcd's names, kinds (Go's flag package: uint, int64, duration, bool, string),
 * defaults and descriptions, each also read from ETCD_<NAME> as etcd reads it. etcd's own checks of
 * enum flags (--auto-compaction-mode) refuse a bad value here, before anything starts.
 */
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS } from "../../mvcc/limits.js"
import type { CommandSpec } from "./command.js"
import { type FeatureGates, parseFeatureGates } from "./feature-gates.js"
import { bool, choice, duration, type Flag, int, string, strings, uint, urls } from "./flag.js"
import { acceptedEtcdFlags } from "./serve-inert-flags.js"

/** the URL `serve` listens on for clients by default (etcd's is http://localhost:2379) */
export const DEFAULT_LISTEN_CLIENT_URL = "http://127.0.0.1:2379"
/** etcd's default --initial-advertise-peer-urls: what MemberList reports as the peer URL */
export const DEFAULT_ADVERTISE_PEER_URL = "http://localhost:2380"
/** grpc-go's "no limit" of concurrent streams (etcd's default --max-concurrent-streams) */
export const UNLIMITED_STREAMS = 4294967295

export const serveFlags = {
  name: string({ default: "default", description: "Human-readable name for this member." }),
  "config-file": string({ description: "etcd's YAML config file; flags and ETCD_* are then ignored." }),
  version: bool({ description: "Print the version and exit." }),
  "data-dir": string({ shownDefault: "<name>.etcd", description: "Path to the data directory." }),
  "listen-client-urls": urls({
    default: DEFAULT_LISTEN_CLIENT_URL,
    description: "Client URLs to listen on (port 0: any free one)."
  }),
  "listen-metrics-urls": urls({
    description: "Extra listeners for /metrics and health (none by default)."
  }),
  "advertise-client-urls": urls({
    shownDefault: "<listen URLs>",
    description: "Client URLs to advertise (MemberList)."
  }),
  "initial-advertise-peer-urls": urls({
    default: DEFAULT_ADVERTISE_PEER_URL,
    description: "Peer URLs to advertise (MemberList)."
  }),
  // one member has no peers: these are read so etcd's single-member command lines run unchanged,
  // checked as etcd checks them (../serve.ts), and nothing listens on the peer URLs
  "listen-peer-urls": urls({
    default: DEFAULT_ADVERTISE_PEER_URL,
    description: "Accepted as etcd's; nothing listens (no peers)."
  }),
  "initial-cluster": string({
    shownDefault: "<name>=<peer URLs>",
    description: "This member only (name=URL); a cluster needs etcd."
  }),
  "initial-cluster-state": choice({
    choices: ["new", "existing"],
    default: "new",
    description: "Accepted as etcd's; the member starts from its data dir."
  }),
  "initial-cluster-token": string({
    default: "etcd-cluster",
    description: "Accepted as etcd's (ids here are random)."
  }),
  "max-request-bytes": uint({
    default: DEFAULT_MAX_REQUEST_BYTES,
    description: "Maximum client request size in bytes."
  }),
  "max-txn-ops": uint({
    default: DEFAULT_MAX_TXN_OPS,
    description: "Maximum number of operations in a transaction."
  }),
  "quota-backend-bytes": int({
    shownDefault: "0 (2 GiB)",
    description: "Raise the NOSPACE alarm past this backend size."
  }),
  "max-concurrent-streams": uint({
    default: UNLIMITED_STREAMS,
    bits: 32,
    shownDefault: "unlimited",
    description: "Concurrent streams per client connection."
  }),
  "grpc-keepalive-min-time": duration({
    default: "5s",
    description: "Minimum interval between a client's pings."
  }),
  "grpc-keepalive-interval": duration({
    default: "2h",
    description: "Server pings of idle connections (0 disables)."
  }),
  "grpc-keepalive-timeout": duration({
    default: "20s",
    description: "Ping answer timeout before closing (0 disables)."
  }),
  "grpc-transport": choice({
    choices: ["lean", "grpc-js"],
    default: "lean",
    description: "gRPC transport: lean (our own HTTP/2) or grpc-js."
  }),
  "auto-compaction-mode": choice({
    choices: ["periodic", "revision"],
    default: "periodic",
    invalid: (text) => `unknown auto-compaction-mode ${JSON.stringify(text)}`,
    description: "periodic: the retention is a period; revision: a count."
  }),
  "auto-compaction-retention": string({
    default: "0",
    description: "Hours or a duration, or revisions, to keep; 0 is off."
  }),
  "experimental-watch-progress-notify-interval": duration({
    default: "10m",
    description: "Watch progress notify period (>= 100ms)."
  }),
  "experimental-initial-corrupt-check": bool({
    description: "Check stored records' checksums before serving."
  }),
  "experimental-corrupt-check-time": duration({
    default: "0s",
    description: "Period of checks of every stored record; 0 is off."
  }),
  "corrupt-check-time": duration({ default: "0s", description: "etcd 3.6's --experimental-corrupt-check-time." }),
  "cert-file": string({ description: "Path to the client server TLS cert file." }),
  "key-file": string({ description: "Path to the client server TLS key file." }),
  "trusted-ca-file": string({ description: "Client certificates must chain to this CA bundle." }),
  "client-cert-auth": bool({ description: "Enable client cert authentication." }),
  "auto-tls": bool({ description: "Client TLS using generated certificates." }),
  "cipher-suites": string({ description: "TLS 1.2 cipher suites, Go's names, comma-separated." }),
  "tls-min-version": string({ default: "TLS1.2", description: "Minimum TLS version (TLS1.2 or TLS1.3)." }),
  "tls-max-version": string({ shownDefault: "<highest>", description: "Maximum TLS version." }),
  "auth-token": string({
    default: "simple",
    description: "simple, or jwt,pub-key=…,priv-key=…,sign-method=…"
  }),
  "auth-token-ttl": uint({ default: 300, description: "Seconds a simple token lives without use." }),
  "bcrypt-cost": uint({ default: 10, description: "bcrypt cost of password hashes (4..31)." }),
  "log-level": choice({
    choices: ["debug", "info", "warn", "error", "dpanic", "panic", "fatal"],
    default: "info",
    invalid: (text) => `unknown level ${JSON.stringify(text)}`,
    description: "debug, info, warn, error, panic or fatal."
  }),
  debug: bool({ description: "Debug-level logging (deprecated in etcd)." }),
  logger: choice({
    choices: ["zap", "capnslog"],
    default: "capnslog",
    shownDefault: "logfmt",
    invalid: (text) => `unknown logger option ${JSON.stringify(text)}`,
    description: "zap: zap's JSON lines; unset or capnslog: logfmt."
  }),
  "log-outputs": strings({
    default: ["default"],
    description: "stderr (default), stdout or file paths, comma-separated."
  }),
  "log-output": strings({ default: ["default"], hidden: true, description: "Deprecated: use --log-outputs." }),
  "log-format": choice({
    choices: ["json", "console"],
    default: "json",
    reason: "invalid value",
    description: "zap's encoding with --logger zap: json or console."
  }),
  "unsafe-no-fsync": bool({ description: "Disables fsync, unsafe, will cause data loss." }),
  "backend-batch-interval": duration({
    default: "0s",
    shownDefault: "100ms",
    description: "Maximum time before the backend commits a batch."
  }),
  "backend-batch-limit": int({ shownDefault: "0 (none)", description: "Maximum operations before a commit." }),
  "watch-progress-notify-interval": duration({
    default: "10m",
    description: "Watch progress notify period (etcd 3.6's name)."
  }),
  "feature-gates": {
    kind: "string",
    default: {},
    defaultText: '=""',
    description: "etcd 3.6's Gate=true|false list (InitialCorruptCheck, …).",
    parse: parseFeatureGates
  } satisfies Flag<FeatureGates>,
  "enable-distributed-tracing": bool({ description: "Exports spans over OTLP/HTTP (etcd 3.6's name)." }),
  "experimental-enable-distributed-tracing": bool({ description: "Exports spans over OTLP/HTTP." }),
  "distributed-tracing-address": string({
    default: "localhost:4317",
    description: "OTLP/HTTP collector (host:port or URL)."
  }),
  "experimental-distributed-tracing-address": string({
    default: "localhost:4317",
    description: "OTLP/HTTP collector."
  }),
  "distributed-tracing-service-name": string({ default: "etcd", description: "The spans' service.name." }),
  "experimental-distributed-tracing-service-name": string({
    default: "etcd",
    description: "The spans' service.name."
  }),
  "distributed-tracing-instance-id": string({ description: "The spans' service.instance.id." }),
  "experimental-distributed-tracing-instance-id": string({ description: "The spans' service.instance.id." }),
  "distributed-tracing-sampling-rate": int({
    description: "Root spans sampled per million."
  }),
  "experimental-distributed-tracing-sampling-rate": int({ description: "Root spans sampled per million." }),
  metrics: string({ default: "basic", description: "basic or extensive (the histograms are always exported)." }),
  ...acceptedEtcdFlags
} as const

export const serve: CommandSpec = {
  path: "serve",
  summary: "Runs one etcd member on this machine (etcd's flags)",
  usage: "[options]",
  details: [
    "Speaks etcd's v3 gRPC API, its JSON gateway and /metrics, /health, /livez, /readyz and",
    "/version on each client URL. SIGINT or SIGTERM stops it (exit 0)."
  ],
  flags: serveFlags,
  envPrefix: "ETCD",
  configFileFlag: "config-file",
  globals: false,
  dialect: "goflag",
  runs: "server"
}
