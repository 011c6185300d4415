/**
 * Which parsed command lines the lean path (index.ts) serves: `get`, `put`, `del` and `watch`
 * against one plain-text endpoint, checked by the same code as the full program (usage.ts,
 * client-settings.ts), so a usage error reads the same from both. TLS or auth (flags or
 * ETCDCTL_USER / ETCDCTL_PASSWORD), several or https endpoints are `undefined`: the full program
 * runs them.
 */
import { type Endpoint, parseEndpoint } from "../../client/endpoint.js"
import { type ClientSettings, clientSettings } from "../commands/client-settings.js"
import {
  delArgs,
  type DelArgs,
  getArgs,
  type GetArgs,
  putArgs,
  type PutArgs,
  UsageError,
  watchArgs,
  type WatchArgs
} from "../commands/usage.js"
import type { ParsedRun } from "../flags/parse.js"

export interface LeanGlobal {
  readonly endpoint: Endpoint
  readonly settings: ClientSettings
}

export type LeanCommand =
  | { readonly _tag: "get"; readonly global: LeanGlobal; readonly args: GetArgs }
  | { readonly _tag: "put"; readonly global: LeanGlobal; readonly args: PutArgs }
  | { readonly _tag: "del"; readonly global: LeanGlobal; readonly args: DelArgs }
  | {
      readonly _tag: "watch"
      readonly global: LeanGlobal
      readonly args: WatchArgs
      /** the command line without its --rev, for handing the watch to the full program at a new start */
      readonly withoutRev: ReadonlyArray<string>
    }

/** The words of a command line without any --rev (and its value), for a watch handed over. */
export const withoutRev = (argv: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === "--") {
      out.push(...argv.slice(i))
      break
    }
    if (a === "--rev") {
      i++
      continue
    }
    if (a.startsWith("--rev=")) continue
    out.push(a)
  }
  return out
}

/**
 * The lean reading of a parsed command line: the command, its usage error (printed by the caller
 * as the full program would), or undefined for the full program.
 */
export const leanCommand = (
  p: ParsedRun,
  argv: ReadonlyArray<string>,
  stdin: () => string
): LeanCommand | UsageError | undefined => {
  const name = p.command.path
  if (name !== "get" && name !== "put" && name !== "del" && name !== "watch") return undefined
  const args =
    name === "get" ? getArgs(p) : name === "put" ? putArgs(p, stdin) : name === "del" ? delArgs(p) : watchArgs(p)
  if (args instanceof UsageError) return args
  const settings = clientSettings(p)
  if (settings instanceof UsageError) return settings
  if (settings.tls || settings.user !== undefined || settings.password !== undefined) return undefined
  if (settings.endpoints.length !== 1) return undefined
  let endpoint: Endpoint
  try {
    endpoint = parseEndpoint(settings.endpoints[0]!)
  } catch {
    return undefined
  }
  if (endpoint.tls) return undefined
  const global: LeanGlobal = { endpoint, settings }
  switch (name) {
    case "get":
      return { _tag: "get", global, args: args as GetArgs }
    case "put":
      return { _tag: "put", global, args: args as PutArgs }
    case "del":
      return { _tag: "del", global, args: args as DelArgs }
    default:
      return { _tag: "watch", global, args: args as WatchArgs, withoutRev: withoutRev(argv) }
  }
}
