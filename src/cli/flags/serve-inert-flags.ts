/**
 * etcd's flags that tune what one member does not have: peers, raft, the WAL and snapshot files,
 * discovery, the v2 proxy, Go's runtime. `serve` takes them so command lines written for etcd 3.4
 * and 3.6 (kubeadm's static pod, docker-compose files, envtest) run unchanged: each is read with
 * etcd's kind and checked as etcd checks it (serve-etcd-checks.ts), and the ones given are named in
 * one warning line, with `inertReasons` saying why they change nothing here.
 */
import { bool, choice, duration, type FlagSet, int, string, uint, urls } from "./flag.js"

/** Why a group of etcd's flags changes nothing on a single etcd-effect member. */
export const inertReasons = {
  cluster: "one member has no peers, raft, WAL or snapshot files to tune",
  discovery: "one member bootstraps alone",
  v2: "the v2 API and its proxy are not served",
  gateway: "the JSON gateway is always served, without CORS nor host checks",
  tls: "client certificates are not checked against CRLs nor allowed hostnames here",
  runtime: "they tune Go's runtime, capnslog or bbolt"
} as const

export type InertReason = keyof typeof inertReasons

/** the flags, each with the reason it has no effect */
export const inertFlagGroups: Readonly<Record<InertReason, FlagSet>> = {
  cluster: {
    "wal-dir": string({ description: "Path to the dedicated wal directory." }),
    "snapshot-count": uint({ default: 100000, description: "Committed transactions that trigger a snapshot." }),
    "heartbeat-interval": uint({ default: 100, description: "Time (in milliseconds) of a heartbeat interval." }),
    "election-timeout": uint({ default: 1000, description: "Time (in milliseconds) for an election to timeout." }),
    "initial-election-tick-advance": bool({ default: true, description: "Fast-forward initial election ticks." }),
    "max-snapshots": uint({ default: 5, description: "Maximum number of snapshot files to retain." }),
    "max-wals": uint({ default: 5, description: "Maximum number of wal files to retain." }),
    "strict-reconfig-check": bool({ default: true, description: "Reject reconfigurations that lose quorum." }),
    "pre-vote": bool({ description: "Run an additional Raft election phase." }),
    "force-new-cluster": bool({ description: "Force to create a new one-member cluster." }),
    "peer-cert-file": string({ description: "Path to the peer server TLS cert file." }),
    "peer-key-file": string({ description: "Path to the peer server TLS key file." }),
    "peer-client-cert-auth": bool({ description: "Enable peer client cert authentication." }),
    "peer-trusted-ca-file": string({ description: "Path to the peer server TLS trusted CA file." }),
    "peer-auto-tls": bool({ description: "Peer TLS using generated certificates." }),
    "peer-crl-file": string({ description: "Path to the peer certificate revocation list file." }),
    "peer-cert-allowed-cn": string({ description: "Allowed CN for inter peer authentication." }),
    "peer-cert-allowed-hostname": string({ description: "Allowed TLS hostname for inter peer authentication." }),
    "experimental-peer-skip-client-san-verification": bool({ description: "Skip peer client SAN checks." }),
    "experimental-enable-lease-checkpoint": bool({ description: "Persist lease remaining TTLs (leader)." }),
    "experimental-enable-lease-checkpoint-persist": bool({ description: "Persist lease checkpoints." }),
    "experimental-compaction-batch-limit": int({ default: 1000, description: "Revisions per compaction batch." }),
    "experimental-warning-apply-duration": duration({ default: "100ms", description: "Warn of slow applies." }),
    "warning-apply-duration": duration({ default: "100ms", description: "Warn of slow applies." }),
    "peer-skip-client-san-verification": bool({ description: "Skip peer client SAN checks." }),
    "peer-client-cert-file": string({ description: "Peer client TLS cert file." }),
    "peer-client-key-file": string({ description: "Peer client TLS key file." }),
    "raft-read-timeout": duration({ default: "5s", description: "Read timeout of rafthttp connections." }),
    "raft-write-timeout": duration({ default: "5s", description: "Write timeout of rafthttp connections." }),
    "max-learners": int({ default: 1, description: "Maximum learner members." }),
    "snapshot-catchup-entries": uint({ default: 5000, description: "Entries a slow follower catches up." }),
    "experimental-snapshot-catchup-entries": uint({ default: 5000, description: "Entries a follower catches up." }),
    "compaction-batch-limit": int({ default: 1000, description: "Revisions per compaction batch." }),
    "compaction-sleep-interval": duration({ default: "0s", description: "Sleep between compaction batches." }),
    "experimental-compaction-sleep-interval": duration({ default: "0s", description: "Sleep between batches." }),
    "experimental-compact-hash-check-enabled": bool({ description: "Leader checks followers' hashes." }),
    "compact-hash-check-time": duration({ default: "1m", description: "Period of compact hash checks." }),
    "experimental-compact-hash-check-time": duration({ default: "1m", description: "Compact hash check period." }),
    "downgrade-check-time": duration({ default: "5s", description: "Period of downgrade status checks." }),
    "experimental-downgrade-check-time": duration({ default: "5s", description: "Downgrade check period." }),
    "v2-deprecation": choice({
      // etcd 3.6 refuses 3.5's "not-yet"
      choices: ["write-only", "write-only-drop-data", "gone"],
      default: "write-only",
      invalid: (text) =>
        `invalid value ${JSON.stringify(text)} for flag --v2-deprecation: invalid value ${JSON.stringify(text)}`,
      description: "Phase of the v2store deprecation."
    })
  },
  discovery: {
    discovery: string({ description: "Discovery URL used to bootstrap the cluster." }),
    "discovery-fallback": choice({
      choices: ["proxy", "exit"],
      default: "proxy",
      reason: "invalid value",
      description: "Expected behavior ('exit' or 'proxy') when discovery fails."
    }),
    "discovery-proxy": string({ description: "HTTP proxy to use for traffic to discovery service." }),
    "discovery-srv": string({ description: "DNS srv domain used to bootstrap the cluster." }),
    "discovery-srv-name": string({ description: "Suffix to the dns srv name queried when bootstrapping." }),
    "discovery-token": string({ description: "V3 discovery: discovery token." }),
    "discovery-endpoints": string({ description: "V3 discovery: gRPC endpoints." }),
    "discovery-dial-timeout": duration({ default: "2s", description: "V3 discovery: dial timeout." }),
    "discovery-request-timeout": duration({ default: "5s", description: "V3 discovery: request timeout." }),
    "discovery-keepalive-time": duration({ default: "2s", description: "V3 discovery: keepalive time." }),
    "discovery-keepalive-timeout": duration({ default: "6s", description: "V3 discovery: keepalive timeout." }),
    "discovery-insecure-transport": bool({ default: true, description: "V3 discovery: no TLS." }),
    "discovery-insecure-skip-tls-verify": bool({ description: "V3 discovery: skip TLS checks." }),
    "discovery-cert": string({ description: "V3 discovery: client cert." }),
    "discovery-key": string({ description: "V3 discovery: client key." }),
    "discovery-cacert": string({ description: "V3 discovery: CA bundle." }),
    "discovery-user": string({ description: "V3 discovery: user[:password]." }),
    "discovery-password": string({ description: "V3 discovery: password." })
  },
  v2: {
    "enable-v2": bool({ description: "Accept etcd V2 client requests." }),
    "experimental-enable-v2v3": string({ description: "Serve v2 requests through the v3 backend." }),
    proxy: choice({
      choices: ["off", "readonly", "on"],
      default: "off",
      reason: "invalid value",
      description: "Proxy mode setting ('off', 'readonly' or 'on')."
    }),
    "proxy-failure-wait": uint({ default: 5000, description: "Time (ms) an endpoint is held failed." }),
    "proxy-refresh-interval": uint({ default: 30000, description: "Time (ms) of the endpoints refresh." }),
    "proxy-dial-timeout": uint({ default: 1000, description: "Time (ms) for a dial to timeout." }),
    "proxy-write-timeout": uint({ default: 5000, description: "Time (ms) for a write to timeout." }),
    "proxy-read-timeout": uint({ description: "Time (ms) for a read to timeout." })
  },
  gateway: {
    "enable-grpc-gateway": bool({ default: true, description: "Serve the JSON gateway (always, here)." }),
    cors: string({ default: "*", description: "CORS origins (empty or * allows all)." }),
    "host-whitelist": string({ default: "*", description: "Acceptable hostnames of insecure HTTP clients." }),
    "listen-client-http-urls": urls({ description: "HTTP-only client URLs (the client URLs serve HTTP too)." })
  },
  tls: {
    "client-crl-file": string({ description: "Path to the client certificate revocation list file." }),
    "client-cert-allowed-hostname": string({ description: "Allowed TLS hostname for client cert auth." }),
    "client-cert-file": string({ description: "Client TLS cert of etcd's own outgoing calls." }),
    "client-key-file": string({ description: "Client TLS key of etcd's own outgoing calls." }),
    "self-signed-cert-validity": uint({ default: 1, description: "Years --auto-tls certificates are valid." })
  },
  runtime: {
    "enable-pprof": bool({ description: "Go's /debug/pprof/ (node --inspect here)." }),
    "experimental-backend-bbolt-freelist-type": string({ default: "array", description: "bbolt's freelist type." }),
    "log-package-levels": string({ description: "capnslog levels per etcd package." }),
    "backend-bbolt-freelist-type": string({ default: "map", description: "bbolt's freelist type." }),
    "experimental-memory-mlock": bool({ description: "Lock bbolt's pages in RAM." }),
    "memory-mlock": bool({ description: "Lock bbolt's pages in RAM." }),
    "experimental-txn-mode-write-with-shared-buffer": bool({ default: true, description: "bbolt read buffers." }),
    "experimental-stop-grpc-service-on-defrag": bool({ description: "Stop gRPC during defragmentation." }),
    "experimental-bootstrap-defrag-threshold-megabytes": uint({ description: "Defragment at boot past this." }),
    "bootstrap-defrag-threshold-megabytes": uint({ description: "Defragment at boot past this." }),
    "experimental-warning-unary-request-duration": duration({ default: "300ms", description: "Slow call warn." }),
    "warning-unary-request-duration": duration({ default: "300ms", description: "Slow unary call warning." }),
    "socket-reuse-port": bool({ description: "SO_REUSEPORT on the listeners." }),
    "socket-reuse-address": bool({ description: "SO_REUSEADDR on the listeners." }),
    "enable-log-rotation": bool({ description: "Rotate a single log-outputs file." }),
    "log-rotation-config-json": string({
      default: '{"maxsize": 100, "maxage": 0, "maxbackups": 0, "localtime": false, "compress": false}',
      shownDefault: "<lumberjack's>",
      description: "Log rotation settings (JSON)."
    })
  }
}

/** etcd's flags that are no longer supported and ignored with a warning (etcd's `ignored`) */
export const ignoredFlagNames = [
  "cluster-active-size",
  "cluster-remove-delay",
  "cluster-sync-interval",
  "config",
  "force",
  "max-result-buffer",
  "max-retry-attempts",
  "peer-heartbeat-interval",
  "peer-election-timeout",
  "retry-interval",
  "snapshot",
  "v",
  "vv"
] as const

/** The inert flags, by name. */
export const inertFlags: FlagSet = Object.assign({}, ...Object.values(inertFlagGroups))

/** etcd's IgnoredFlag: a boolean-like flag whose value is ignored. */
const ignoredFlags: FlagSet = Object.fromEntries(
  ignoredFlagNames.map((name) => [
    name,
    { ...bool({ hidden: true, description: "no longer supported - ignored" }), parse: () => true }
  ])
)

/** the inert flags and the ignored ones */
export const acceptedEtcdFlags: FlagSet = { ...inertFlags, ...ignoredFlags }

/** The group a flag belongs to, for the warning. */
export const inertReasonOf = (name: string): InertReason | undefined =>
  (Object.keys(inertFlagGroups) as Array<InertReason>).find((g) => Object.hasOwn(inertFlagGroups[g], name))
