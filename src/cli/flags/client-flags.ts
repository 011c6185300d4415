/**
 * The client commands' flags, etcdctl 3.4's names, defaults and meanings: the global ones (also
 * from ETCDCTL_<NAME>, as etcdctl reads them) and each command's own. etcdctl flags this program
 * does not serve are not here, so they are refused as unknown: --debug, --discovery-srv (-d),
 * --discovery-srv-name, --insecure-discovery, `watch -i`, `endpoint --cluster`, `get --max-bytes`.
 */
import type { CommandSpec } from "./command.js"
import { bool, duration, int64, string, strings } from "./flag.js"

export const globalFlags = {
  cacert: string({ description: "verify certificates of TLS servers using this CA bundle" }),
  cert: string({ description: "identify secure client using this TLS certificate file" }),
  "command-timeout": duration({
    default: "5s",
    description: "timeout for short running command (excluding dial timeout)"
  }),
  "dial-timeout": duration({ default: "2s", description: "dial timeout for client connections" }),
  endpoints: strings({ default: ["127.0.0.1:2379"], description: "gRPC endpoints" }),
  hex: bool({ description: "print byte strings as hex encoded strings" }),
  "insecure-skip-tls-verify": bool({ description: "skip server certificate verification (testing only)" }),
  "insecure-transport": bool({
    default: true,
    description: "disable transport security for client connections"
  }),
  "keepalive-time": duration({ default: "2s", description: "keepalive time for client connections (10s at least)" }),
  "keepalive-timeout": duration({ default: "6s", description: "keepalive timeout for client connections" }),
  key: string({ description: "identify secure client using this TLS key file" }),
  password: string({ description: "password for authentication (then --user is the name only)" }),
  user: string({ description: "username[:password] for authentication" }),
  "write-out": string({ short: "w", default: "simple", description: "set the output format (simple, json)" })
} as const

const client = (
  path: string,
  summary: string,
  usage: string,
  flags: CommandSpec["flags"],
  details?: ReadonlyArray<string>
): CommandSpec => ({
  path,
  summary,
  usage,
  flags,
  details,
  globals: true,
  dialect: "pflag",
  runs: path === "get" || path === "put" || path === "del" || path === "watch" ? "lean" : "client"
})

export const getFlags = {
  consistency: string({ default: "l", description: "Linearizable(l) or Serializable(s)" }),
  "count-only": bool({ description: "Get only the count (etcdctl 3.5)" }),
  "from-key": bool({ description: "Get keys greater than or equal to the given key (byte compare)" }),
  "keys-only": bool({ description: "Get only the keys" }),
  limit: int64({ description: "Maximum number of results" }),
  order: string({ description: "Order of results; ASCEND or DESCEND (ASCEND by default)" }),
  prefix: bool({ description: "Get keys with matching prefix" }),
  "print-value-only": bool({ description: 'Only write values when using the "simple" output format' }),
  rev: int64({ description: "Specify the kv revision" }),
  "sort-by": string({ description: "Sort target; CREATE, KEY, MODIFY, VALUE, or VERSION" })
} as const

export const putFlags = {
  "ignore-lease": bool({ description: "updates the key using its current lease" }),
  "ignore-value": bool({ description: "updates the key using its current value" }),
  lease: string({ default: "0", description: "lease ID (in hexadecimal) to attach to the key" }),
  "prev-kv": bool({ description: "return the previous key-value pair before modification" })
} as const

export const delFlags = {
  "from-key": bool({ description: "delete keys greater than or equal to the given key (byte compare)" }),
  prefix: bool({ description: "delete keys with matching prefix" }),
  "prev-kv": bool({ description: "return deleted key-value pairs" })
} as const

export const watchFlags = {
  prefix: bool({ description: "Watch on a prefix if prefix is set" }),
  "prev-kv": bool({ description: "get the previous key-value pair before the event happens" }),
  "progress-notify": bool({ description: "get periodic watch progress notification from server (etcdctl 3.5)" }),
  rev: int64({ description: "Revision to start watching" })
} as const

export const compactionFlags = {
  physical: bool({ description: "'true' to wait for compaction to physically remove all old revisions" })
} as const

export const timetoliveFlags = { keys: bool({ description: "Get keys attached to this lease" }) } as const
export const keepAliveFlags = {
  once: bool({ description: "Resets the keep-alive time to its original value and exits immediately" })
} as const

export const get = client("get", "Gets the key or a range of keys", "[options] <key> [range_end]", getFlags)
export const put = client(
  "put",
  "Puts the given key into the store",
  "[options] <key> <value> (<value> can also be given from stdin)",
  putFlags,
  [
    "A <value> that begins with '-' would be read as a flag: put '--' before it,",
    "as in `put <key> -- <value>` or `put -- <key> <value>`. Without <value> (and",
    "--ignore-value), the value is read from standard input: `cat file | put <key>`."
  ]
)
export const del = client(
  "del",
  "Removes the specified key or range of keys [key, range_end)",
  "[options] <key> [range_end]",
  delFlags
)
export const watch = client(
  "watch",
  "Watches events stream on keys or prefixes",
  "[options] <key or prefix> [range_end]",
  watchFlags,
  ["Runs until interrupted; resumes where it stopped across lost connections and server restarts."]
)
export const compaction = client("compaction", "Compacts the event history in etcd", "[options] <revision>", {
  ...compactionFlags
})

export const lease: CommandSpec = {
  ...client("lease", "Lease related commands", "<subcommand>", {}),
  subcommands: [
    client("lease grant", "Creates leases", "<ttl>", {}),
    client("lease revoke", "Revokes leases", "<leaseID>", {}),
    client("lease timetolive", "Get lease information", "<leaseID> [options]", timetoliveFlags),
    client("lease list", "List all active leases", "", {}),
    client("lease keep-alive", "Keeps leases alive (renew)", "[options] <leaseID>", keepAliveFlags)
  ]
}

export const endpoint: CommandSpec = {
  ...client("endpoint", "Endpoint related commands", "<subcommand>", {}),
  subcommands: [client("endpoint status", "Prints out the status of endpoints specified in `--endpoints` flag", "", {})]
}

export const version: CommandSpec = {
  path: "version",
  summary: "Prints the version of etcd-effect",
  usage: "",
  flags: {},
  globals: true,
  dialect: "pflag",
  runs: "builtin"
}
