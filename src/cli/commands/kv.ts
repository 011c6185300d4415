/**
 * `put`, `get`, `del` and `compaction` in the full program, flag for flag and line for line as
 * etcdctl 3.4: the arguments checked by usage.ts (the lean path checks them with the same code),
 * then one call.
 */
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import type { ParsedRun } from "../flags/parse.js"
import { clientSettings } from "./client-settings.js"
import { usage, withClient } from "./global.js"
import { printDelete, printGet, printPut } from "./kv-output.js"
import { write } from "./output.js"
import { compactionArgs, delArgs, getArgs, putArgs, UsageError } from "./usage.js"

/** etcdctl's argOrStdin: the whole of standard input */
export const readStdin = (): string => {
  try {
    return readFileSync(0, "utf8")
  } catch {
    return ""
  }
}

/** the command's own checks, then the global flags' */
const checked = <A>(a: A | UsageError, p: ParsedRun) => {
  if (a instanceof UsageError) return a
  const s = clientSettings(p)
  return s instanceof UsageError ? s : { args: a, settings: s }
}

export const runGet = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(getArgs(p), p)
  if (c instanceof UsageError) return usage(c)
  const { args: a, settings: s } = c
  if (a.printValueOnly && s.writeOut !== "simple") {
    return usage(new UsageError("print-value-only is only for `--write-out=simple`"))
  }
  return withClient(s, (client) =>
    Effect.map(
      client.kv.get(a.key, {
        prefix: a.prefix,
        fromKey: a.fromKey,
        rangeEnd: a.rangeEnd,
        revision: a.revision,
        limit: a.limit,
        keysOnly: a.keysOnly,
        countOnly: a.countOnly,
        serializable: a.serializable,
        sort: a.sort
      }),
      (res) => printGet({ ...a, writeOut: s.writeOut, hex: s.hex }, res)
    )
  )
}

export const runPut = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(putArgs(p, readStdin), p)
  if (c instanceof UsageError) return usage(c)
  const { args: a, settings: s } = c
  return withClient(s, (client) =>
    Effect.map(
      client.kv.put(a.key, a.value, {
        lease: a.lease,
        prevKv: a.prevKv,
        ignoreValue: a.ignoreValue,
        ignoreLease: a.ignoreLease
      }),
      (r) => printPut(s, r)
    )
  )
}

export const runDel = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(delArgs(p), p)
  if (c instanceof UsageError) return usage(c)
  const { args: a, settings: s } = c
  return withClient(s, (client) =>
    Effect.map(
      client.kv.delete(a.key, { prefix: a.prefix, fromKey: a.fromKey, rangeEnd: a.rangeEnd, prevKv: a.prevKv }),
      (res) => printDelete(s, res)
    )
  )
}

export const runCompaction = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(compactionArgs(p), p)
  if (c instanceof UsageError) return usage(c)
  const { args: a, settings: s } = c
  // etcdctl prints the simple line whatever -w says
  return withClient(s, (client) =>
    Effect.map(client.kv.compact(a.revision, { physical: a.physical }), () =>
      write(`compacted revision ${a.revision}\n`)
    )
  )
}

export { checked }
