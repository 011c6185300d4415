/**
 * `apiserver`'s flags: kube-apiserver's names (pflag, as kube-apiserver reads them), and ours for
 * the embedded etcd-effect server.
 */
import type { CommandSpec } from "./command.js"
import { bool, choice, duration, int, string, strings } from "./flag.js"

export const apiserverFlags = {
  "etcd-servers": strings({
    description: "etcd endpoints; none: an embedded etcd-effect server"
  }),
  "etcd-prefix": string({ default: "/registry", description: "The prefix to prepend to all resource paths in etcd." }),
  "etcd-cafile": string({ description: "CA file used to secure etcd communication." }),
  "etcd-certfile": string({ description: "Certificate file used to secure etcd communication." }),
  "etcd-keyfile": string({ description: "Key file used to secure etcd communication." }),
  "data-dir": string({
    shownDefault: "<in memory>",
    description: "Data directory of the embedded etcd-effect server."
  }),
  "watch-cache": bool({ default: true, description: "Enable watch caching in the apiserver." }),
  "default-watch-cache-size": int({
    default: 100,
    description: "Default watch cache size (0 disables it)."
  }),
  "etcd-compaction-interval": duration({
    default: "5m",
    description: "Interval of the apiserver's compaction requests (0: none)."
  }),
  "event-ttl": duration({ default: "1h", description: "Amount of time to retain events." }),
  "encryption-provider-config": string({
    description: "Encryption providers for storing secrets in etcd."
  }),
  "bind-address": string({ default: "127.0.0.1", description: "The IP address on which to listen." }),
  port: int({ default: 8080, description: "The port on which to serve (0 picks a free one)." }),
  "tls-cert-file": string({ description: "File containing the x509 certificate for HTTPS." }),
  "tls-private-key-file": string({ description: "File containing the x509 private key of --tls-cert-file." }),
  "log-level": choice({
    choices: ["debug", "info", "warn", "error"],
    default: "warn",
    description: "debug, info, warn or error (logfmt lines on stderr)."
  })
} as const

export const apiserver: CommandSpec = {
  path: "apiserver",
  summary: "Serves the Kubernetes API over etcd (kube-apiserver's flags)",
  usage: "[options]",
  details: [
    "Namespaces, ConfigMaps, Secrets, Leases, Events and CRDs, for kubectl and client-go.",
    "Without --etcd-servers it runs an etcd-effect server in the same process. SIGINT or SIGTERM",
    "stops it gracefully: watches end, requests in flight finish (up to 60 s), then exit 0."
  ],
  flags: apiserverFlags,
  globals: false,
  dialect: "pflag",
  runs: "server"
}
