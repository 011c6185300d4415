/**
 * What etcdctl 3.4 checks of a command's arguments before it sends anything, with its words and
 * exit codes (128 for bad arguments, 4 for a feature it lacks): each function turns a parsed
 * command line into the request to send, or the usage error. Plain functions: the lean path
 * (src/cli/lean/) and the full program check a command line with the same code.
 */
import type { ParsedRun } from "../flags/parse.js"
import type { compactionFlags, delFlags, getFlags, putFlags, watchFlags } from "../flags/client-flags.js"
import type { FlagSet, ValuesOf } from "../flags/flag.js"
import { parseInt, ValueError } from "../flags/go-values.js"

export const EXIT_BAD_FEATURE = 4
export const EXIT_BAD_ARGS = 128

export class UsageError {
  constructor(
    readonly message: string,
    readonly exitCode: number = EXIT_BAD_ARGS
  ) {}
}

/** The values of a command's own flags (the table holds the kinds; the parser filled every name). */
export const valuesOf = <S extends FlagSet>(p: ParsedRun): ValuesOf<S> => p.values as ValuesOf<S>

const BOTH_RANGES = "`--prefix` and `--from-key` cannot be set at the same time, choose one"
const ONE_ARG = "too many arguments, only accept one argument when `--prefix` or `--from-key` is set"

/** etcdctl's lease ids: strconv.ParseInt(text, 16, 64) */
export const parseLeaseHex = (text: string): bigint | ValueError => parseInt(text, 64, 16)

export const SORT_TARGETS = { CREATE: "CREATE", KEY: "KEY", MODIFY: "MOD", VALUE: "VALUE", VERSION: "VERSION" } as const
type SortTarget = (typeof SORT_TARGETS)[keyof typeof SORT_TARGETS]
type SortOrder = "NONE" | "ASCEND" | "DESCEND"

export interface GetArgs {
  readonly key: string
  readonly rangeEnd: string | undefined
  readonly prefix: boolean
  readonly fromKey: boolean
  readonly revision: bigint
  readonly limit: bigint
  readonly keysOnly: boolean
  readonly countOnly: boolean
  readonly printValueOnly: boolean
  readonly serializable: boolean
  /** absent: by key, ascending (the store's order) */
  readonly sort: { readonly target: SortTarget; readonly order: SortOrder } | undefined
}

export const getArgs = (p: ParsedRun): GetArgs | UsageError => {
  const o = valuesOf<typeof getFlags>(p)
  if (p.args.length === 0) {
    return new UsageError("get command needs one argument as key and an optional argument as range_end")
  }
  if (o.prefix && o["from-key"]) return new UsageError(BOTH_RANGES)
  if (o["keys-only"] && o["count-only"]) {
    return new UsageError("`--keys-only` and `--count-only` cannot be set at the same time, choose one")
  }
  if (o.consistency !== "l" && o.consistency !== "s") {
    return new UsageError(`unknown consistency flag ${JSON.stringify(o.consistency)}`, EXIT_BAD_FEATURE)
  }
  if (p.args.length > 1 && (o.prefix || o["from-key"])) return new UsageError(ONE_ARG)
  const order = o.order.toUpperCase()
  if (order !== "" && order !== "ASCEND" && order !== "DESCEND") {
    return new UsageError(`bad sort order ${o.order}`, EXIT_BAD_FEATURE)
  }
  const target = o["sort-by"].toUpperCase()
  if (target !== "" && !(target in SORT_TARGETS))
    return new UsageError(`bad sort target ${o["sort-by"]}`, EXIT_BAD_FEATURE)
  const sortTarget = target === "" ? "KEY" : SORT_TARGETS[target as keyof typeof SORT_TARGETS]
  const sortOrder: SortOrder = order === "" ? "NONE" : (order as SortOrder)
  return {
    key: p.args[0]!,
    rangeEnd: p.args[1],
    prefix: o.prefix,
    fromKey: o["from-key"],
    // etcdctl sends --rev only when positive; a negative limit is no limit
    revision: o.rev > 0n ? o.rev : 0n,
    limit: o.limit > 0n ? o.limit : 0n,
    keysOnly: o["keys-only"],
    countOnly: o["count-only"],
    printValueOnly: o["print-value-only"],
    serializable: o.consistency === "s",
    sort: sortTarget === "KEY" && sortOrder === "NONE" ? undefined : { target: sortTarget, order: sortOrder }
  }
}

export interface PutArgs {
  readonly key: string
  readonly value: string
  readonly lease: bigint
  readonly prevKv: boolean
  readonly ignoreValue: boolean
  readonly ignoreLease: boolean
}

const PUT_ARGS = "put command needs 1 argument and input from stdin or 2 arguments"

/** `stdin` reads the value when the command line has none (etcdctl's argOrStdin). */
export const putArgs = (p: ParsedRun, stdin: () => string): PutArgs | UsageError => {
  const o = valuesOf<typeof putFlags>(p)
  if (p.args.length === 0) return new UsageError(PUT_ARGS)
  const ignoreValue = o["ignore-value"]
  if (ignoreValue && p.args.length > 1) {
    return new UsageError("put command needs only 1 argument when 'ignore-value' is set")
  }
  let value = ""
  if (!ignoreValue) {
    value = p.args[1] ?? stdin()
    if (value === "") return new UsageError(PUT_ARGS)
  }
  const lease = parseLeaseHex(o.lease)
  if (lease instanceof ValueError) return new UsageError(`bad lease ID (${lease.reason}), expecting ID in Hex`)
  return { key: p.args[0]!, value, lease, prevKv: o["prev-kv"], ignoreValue, ignoreLease: o["ignore-lease"] }
}

export interface DelArgs {
  readonly key: string
  readonly rangeEnd: string | undefined
  readonly prefix: boolean
  readonly fromKey: boolean
  readonly prevKv: boolean
}

export const delArgs = (p: ParsedRun): DelArgs | UsageError => {
  const o = valuesOf<typeof delFlags>(p)
  if (p.args.length === 0 || p.args.length > 2) {
    return new UsageError("del command needs one argument as key and an optional argument as range_end")
  }
  if (o.prefix && o["from-key"]) return new UsageError(BOTH_RANGES)
  if (p.args.length > 1 && (o.prefix || o["from-key"])) return new UsageError(ONE_ARG)
  return { key: p.args[0]!, rangeEnd: p.args[1], prefix: o.prefix, fromKey: o["from-key"], prevKv: o["prev-kv"] }
}

export interface WatchArgs {
  readonly key: string
  readonly rangeEnd: string | undefined
  readonly prefix: boolean
  readonly revision: bigint
  readonly prevKv: boolean
  readonly progressNotify: boolean
}

export const watchArgs = (p: ParsedRun): WatchArgs | UsageError => {
  const o = valuesOf<typeof watchFlags>(p)
  const words = p.dashAt < 0 ? p.args : p.args.slice(0, p.dashAt)
  if (p.dashAt >= 0 && p.args.length > p.dashAt) {
    return new UsageError("watch's exec-command (after --) is not supported by etcd-effect", EXIT_BAD_FEATURE)
  }
  if (words.length === 0 || words.length > 2) return new UsageError("bad number of arguments")
  if (o.prefix && words.length > 1)
    return new UsageError("too many arguments, only accept one argument when `--prefix` is set")
  return {
    key: words[0]!,
    rangeEnd: words[1],
    prefix: o.prefix,
    revision: o.rev > 0n ? o.rev : 0n,
    prevKv: o["prev-kv"],
    progressNotify: o["progress-notify"]
  }
}

export const compactionArgs = (p: ParsedRun): { revision: bigint; physical: boolean } | UsageError => {
  const o = valuesOf<typeof compactionFlags>(p)
  if (p.args.length !== 1) return new UsageError("compaction command needs 1 argument")
  const revision = parseInt(p.args[0]!, 64, 10)
  // etcdctl exits 1 (ExitError) here, not 128
  if (revision instanceof ValueError) return new UsageError(revision.reason, 1)
  return { revision, physical: o.physical }
}

/** `lease grant <ttl>` */
export const leaseTtl = (p: ParsedRun): bigint | UsageError => {
  if (p.args.length !== 1) return new UsageError("lease grant command needs TTL argument")
  const ttl = parseInt(p.args[0]!, 64, 10)
  return ttl instanceof ValueError ? new UsageError(`bad TTL (${ttl.reason})`) : ttl
}

export const TIMETOLIVE_ARGS = "lease timetolive command needs lease ID as argument"

/** `lease timetolive <leaseID>`: the count only (the id is read after the global flags, as etcdctl does) */
export const timetoliveArgs = (p: ParsedRun): UsageError | undefined =>
  p.args.length === 1 ? undefined : new UsageError(TIMETOLIVE_ARGS)

/** `lease revoke|timetolive|keep-alive <leaseID>` */
export const leaseIdArg = (p: ParsedRun, missing: string): bigint | UsageError => {
  if (p.args.length !== 1) return new UsageError(missing)
  const id = parseLeaseHex(p.args[0]!)
  return id instanceof ValueError ? new UsageError(`bad lease ID arg (${id.reason}), expecting ID in Hex`) : id
}
