/**
 * `put`, `get`, `del` and `compaction`, flag for flag and line for line as etcdctl 3.4.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { RangeOptions } from "../../client/index.js"
import { globalOptions, usage, withClient } from "./global.js"
import { printDelete, printGet, printPut } from "./kv-output.js"
import { parseLeaseId, write } from "./output.js"

const key = Args.text({ name: "key" })
const rangeEnd = Args.text({ name: "range_end" }).pipe(Args.optional)
const prefix = Options.boolean("prefix").pipe(Options.withDescription("operate on keys with matching prefix"))
const fromKey = Options.boolean("from-key").pipe(
  Options.withDescription("operate on keys that are greater than or equal to the given key using byte compare")
)
const prevKv = Options.boolean("prev-kv").pipe(Options.withDescription("return the previous key-value pair"))

const range = (prefix: boolean, fromKey: boolean, end: Option.Option<string>): RangeOptions | string => {
  if (prefix && fromKey) return "`--prefix` and `--from-key` cannot be set at the same time, choose one"
  if ((prefix || fromKey) && Option.isSome(end)) {
    return `too many arguments, only accept one argument when \`--${prefix ? "prefix" : "from-key"}\` is set`
  }
  return { prefix, fromKey, rangeEnd: Option.getOrUndefined(end) }
}

export const put = Command.make(
  "put",
  {
    ...globalOptions,
    key,
    value: Args.text({ name: "value" }),
    lease: Options.text("lease").pipe(
      Options.withDescription("lease ID (in hexadecimal) to attach to the key"),
      Options.withDefault("0")
    ),
    prevKv
  },
  (o) => {
    const lease = parseLeaseId(o.lease)
    if (lease === undefined)
      return usage(`bad lease ID (strconv.ParseInt: parsing "${o.lease}": invalid syntax), expecting ID in Hex`)
    return withClient(o, (c) =>
      Effect.map(c.kv.put(o.key, o.value, { lease, prevKv: o.prevKv }), (r) => printPut(o.writeOut, r))
    )
  }
).pipe(Command.withDescription("Puts the given key into the store"))

export const get = Command.make(
  "get",
  {
    ...globalOptions,
    key,
    rangeEnd,
    prefix,
    fromKey,
    rev: Options.integer("rev").pipe(Options.withDescription("specify the kv revision"), Options.withDefault(0)),
    limit: Options.integer("limit").pipe(Options.withDescription("maximum number of results"), Options.withDefault(0)),
    keysOnly: Options.boolean("keys-only").pipe(Options.withDescription("get only the keys")),
    countOnly: Options.boolean("count-only").pipe(Options.withDescription("get only the count")),
    printValueOnly: Options.boolean("print-value-only").pipe(
      Options.withDescription('only write values when using the "simple" output format')
    )
  },
  (o) => {
    const r = range(o.prefix, o.fromKey, o.rangeEnd)
    if (typeof r === "string") return usage(r)
    return withClient(o, (c) =>
      Effect.map(
        c.kv.get(o.key, { ...r, revision: o.rev, limit: o.limit, keysOnly: o.keysOnly, countOnly: o.countOnly }),
        (res) => printGet(o, res)
      )
    )
  }
).pipe(Command.withDescription("Gets the key or a range of keys"))

export const del = Command.make("del", { ...globalOptions, key, rangeEnd, prefix, fromKey, prevKv }, (o) => {
  const r = range(o.prefix, o.fromKey, o.rangeEnd)
  if (typeof r === "string") return usage(r)
  return withClient(o, (c) =>
    Effect.map(c.kv.delete(o.key, { ...r, prevKv: o.prevKv }), (res) => printDelete(o.writeOut, res))
  )
}).pipe(Command.withDescription("Removes the specified key or range of keys [key, range_end)"))

export const compaction = Command.make(
  "compaction",
  {
    ...globalOptions,
    revision: Args.text({ name: "revision" }),
    physical: Options.boolean("physical").pipe(
      Options.withDescription("'true' to wait for compaction to physically remove all old revisions")
    )
  },
  (o) => {
    if (!/^-?\d+$/.test(o.revision)) return usage(`strconv.ParseInt: parsing "${o.revision}": invalid syntax`)
    const rev = BigInt(o.revision)
    // etcdctl prints the simple line whatever -w says.
    return withClient(o, (c) =>
      Effect.map(c.kv.compact(rev, { physical: o.physical }), () => write(`compacted revision ${rev}\n`))
    )
  }
).pipe(Command.withDescription("Compacts the event history in etcd"))
