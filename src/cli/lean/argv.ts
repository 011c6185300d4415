/**
 * The command lines the lean path (index.ts) serves, recognised without @effect/cli: `get`, `put`,
 * `del` and `watch` with their own flags and the plain global ones, against one plain-text
 * endpoint. Anything else — TLS or auth flags (or ETCDCTL_USER / ETCDCTL_PASSWORD), several or
 * https endpoints, `--help`, a flag it does not know, a usage error, a form whose reading by
 * @effect/cli is subtle (a boolean flag followed by "true"/"no"/…, which @effect/cli takes as the
 * flag's value; a value that starts with "-"; a repeated flag) — is `undefined`: the full program
 * (main.ts) runs it, so its output and errors stay exactly its own.
 */
import { type Endpoint, parseEndpoint } from "../../client/endpoint.js"
import { durationMillis } from "../commands/duration-text.js"
import { parseLeaseId, type WriteOut } from "../commands/output.js"

export interface LeanGlobal {
  readonly endpoint: Endpoint
  readonly writeOut: WriteOut
  readonly dialTimeoutMs: number
  readonly commandTimeoutMs: number
}

export interface LeanRange {
  readonly key: string
  readonly rangeEnd: string | undefined
  readonly prefix: boolean
  readonly fromKey: boolean
}

export type LeanCommand =
  | (LeanRange & {
      readonly _tag: "get"
      readonly global: LeanGlobal
      readonly revision: bigint
      readonly limit: bigint
      readonly keysOnly: boolean
      readonly countOnly: boolean
      readonly printValueOnly: boolean
    })
  | {
      readonly _tag: "put"
      readonly global: LeanGlobal
      readonly key: string
      readonly value: string
      readonly lease: bigint
      readonly prevKv: boolean
    }
  | (LeanRange & { readonly _tag: "del"; readonly global: LeanGlobal; readonly prevKv: boolean })
  | (LeanRange & {
      readonly _tag: "watch"
      readonly global: LeanGlobal
      readonly revision: bigint
      readonly prevKv: boolean
      readonly progressNotify: boolean
      /** the command line without its --rev, for handing the watch to the full program at a new start */
      readonly withoutRev: ReadonlyArray<string>
    })

interface Spec {
  readonly booleans: ReadonlyArray<string>
  readonly values: ReadonlyArray<string>
  /** allowed positional counts */
  readonly positionals: ReadonlyArray<number>
}

const GLOBAL_VALUES = ["endpoints", "write-out", "dial-timeout", "command-timeout"]

const SPECS: Record<string, Spec> = {
  get: {
    booleans: ["prefix", "from-key", "keys-only", "count-only", "print-value-only"],
    values: ["rev", "limit"],
    positionals: [1, 2]
  },
  put: { booleans: ["prev-kv"], values: ["lease"], positionals: [2] },
  del: { booleans: ["prefix", "from-key", "prev-kv"], values: [], positionals: [1, 2] },
  watch: { booleans: ["prefix", "prev-kv", "progress-notify"], values: ["rev"], positionals: [1, 2] }
}

/** @effect/cli's words for a boolean flag's value (internal/primitive.ts, trueValues / falseValues) */
const BOOLEAN_WORDS = new Set(["true", "1", "y", "yes", "on", "false", "0", "n", "no", "off"])

const decimal = (text: string): bigint | undefined => (/^\d{1,15}$/.test(text) ? BigInt(text) : undefined)

/** The lean reading of `args` (the words after the program), or undefined for the full program. */
export const leanCommand = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): LeanCommand | undefined => {
  const name = args[0]
  const spec = name === undefined ? undefined : SPECS[name]
  if (name === undefined || spec === undefined) return undefined
  if (env["ETCDCTL_USER"] !== undefined || env["ETCDCTL_PASSWORD"] !== undefined) return undefined
  const flags = new Map<string, string | true>()
  const positionals: Array<string> = []
  const withoutRev: Array<string> = [name]
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith("-")) {
      positionals.push(arg)
      withoutRev.push(arg)
      continue
    }
    let flag: string
    let value: string | undefined
    if (arg === "-w") flag = "write-out"
    else {
      const m = /^--([a-z-]+)(?:=(.+))?$/.exec(arg)
      if (m === null) return undefined
      flag = m[1]!
      value = m[2]
    }
    if (flags.has(flag)) return undefined
    if (spec.booleans.includes(flag)) {
      if (value !== undefined) return undefined
      const next = args[i + 1]
      if (next !== undefined && BOOLEAN_WORDS.has(next)) return undefined
      flags.set(flag, true)
      withoutRev.push(arg)
      continue
    }
    if (!spec.values.includes(flag) && !GLOBAL_VALUES.includes(flag)) return undefined
    if (value === undefined) {
      value = args[++i]
      if (value === undefined) return undefined
    }
    if (value.startsWith("-")) return undefined
    flags.set(flag, value)
    if (flag !== "rev") withoutRev.push(`--${flag}`, value)
  }
  if (!spec.positionals.includes(positionals.length)) return undefined

  const text = (flag: string): string | undefined => {
    const v = flags.get(flag)
    return typeof v === "string" ? v : undefined
  }
  const bool = (flag: string): boolean => flags.get(flag) === true

  // global flags, as global.ts reads them
  const endpoints = text("endpoints") ?? env["ETCDCTL_ENDPOINTS"] ?? "127.0.0.1:2379"
  if (endpoints.includes(",") || endpoints.trim() === "") return undefined
  let endpoint: Endpoint
  try {
    endpoint = parseEndpoint(endpoints)
  } catch {
    return undefined
  }
  if (endpoint.tls) return undefined
  const writeOut = text("write-out") ?? "simple"
  if (writeOut !== "simple" && writeOut !== "json") return undefined
  const dialTimeoutMs = durationMillis(text("dial-timeout") ?? "2s") ?? 2000
  const commandTimeoutMs = durationMillis(text("command-timeout") ?? "5s") ?? 5000
  if (dialTimeoutMs <= 0 || commandTimeoutMs <= 0) return undefined
  const global: LeanGlobal = { endpoint, writeOut, dialTimeoutMs, commandTimeoutMs }

  const key = positionals[0]!
  const rangeEnd = positionals[1]
  const prefix = bool("prefix")
  const fromKey = bool("from-key")
  // kv.ts / watch.ts report these as usage errors: theirs to print
  if (prefix && fromKey) return undefined
  if ((prefix || fromKey) && rangeEnd !== undefined) return undefined
  const revision = decimal(text("rev") ?? "0")
  if (revision === undefined) return undefined

  switch (name) {
    case "get": {
      const limit = decimal(text("limit") ?? "0")
      if (limit === undefined) return undefined
      return {
        _tag: "get",
        global,
        key,
        rangeEnd,
        prefix,
        fromKey,
        revision,
        limit,
        keysOnly: bool("keys-only"),
        countOnly: bool("count-only"),
        printValueOnly: bool("print-value-only")
      }
    }
    case "put": {
      const lease = parseLeaseId(text("lease") ?? "0")
      if (lease === undefined) return undefined
      return { _tag: "put", global, key, value: positionals[1]!, lease, prevKv: bool("prev-kv") }
    }
    case "del":
      return { _tag: "del", global, key, rangeEnd, prefix, fromKey, prevKv: bool("prev-kv") }
    default:
      return {
        _tag: "watch",
        global,
        key,
        rangeEnd,
        prefix,
        fromKey: false,
        revision,
        prevKv: bool("prev-kv"),
        progressNotify: bool("progress-notify"),
        withoutRev
      }
  }
}
