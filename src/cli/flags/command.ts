/**
 * A command of the `etcd-effect` program as the flag table declares it: its words, what help says
 * of it, its flags, and where the bin runs it. The tree of them is table.ts.
 */
import type { FlagSet } from "./flag.js"

/**
 * How flag errors are worded: "pflag" as etcdctl, kube-apiserver and etcd's benchmark (cobra and
 * pflag); "goflag" as etcd (Go's flag package: `-name` is `--name`, "invalid value … parse error").
 */
export type Dialect = "pflag" | "goflag"

/**
 * Where the bin runs a command: "lean" may run without effect (src/cli/lean/, get/put/del/watch),
 * "client" in the cached CommonJS build, "server" in the ES module build (serve, apiserver, bench),
 * "builtin" in the bin itself (version, help).
 */
export type Runs = "lean" | "client" | "server" | "builtin"

export interface CommandSpec {
  /** its words after the program: "get", "lease grant" */
  readonly path: string
  readonly summary: string
  /** the usage line after the command's words: "[options] <key> [range_end]" */
  readonly usage: string
  /** lines of help after the usage */
  readonly details?: ReadonlyArray<string> | undefined
  readonly flags: FlagSet
  /** its own flags also come from `<prefix>_<FLAG_NAME>` (serve: ETCD_…) */
  readonly envPrefix?: string | undefined
  /** the flag naming a config file that, when given (or in `<prefix>_<FLAG>`), replaces the environment */
  readonly configFileFlag?: string | undefined
  /** takes the client's global flags (--endpoints, -w, TLS, auth; ETCDCTL_…) */
  readonly globals: boolean
  readonly dialect: Dialect
  readonly runs: Runs
  /** a group of commands ("lease"): it runs none itself, its help lists them */
  readonly subcommands?: ReadonlyArray<CommandSpec> | undefined
}

/** The last word of a command's path: what selects it among its siblings. */
export const commandName = (c: CommandSpec): string => c.path.slice(c.path.lastIndexOf(" ") + 1)
