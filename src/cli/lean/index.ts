/**
 * The lean path of the bin (bin.ts): `get`, `put`, `del` and `watch` on one plain-text endpoint,
 * served without loading effect, grpc-js or protobufjs (their evaluation was ~3/4 of a `get`'s
 * start-up: docs/benchmarks.md, "CLI start-up"). The command line is the table's reading
 * (flags/parse.ts), checked by the full program's own code (argv.ts).
 *
 * Everything else, and every case these do not cover, is left to the full program: `runLean`
 * then answers the command line it must run (the same one, or a watch's with a new `--rev`).
 * `ETCD_EFFECT_LEAN=0` turns the lean path off (tests compare the two).
 */
import { readFileSync } from "node:fs"
import { UsageError } from "../commands/usage.js"
import type { ParsedRun } from "../flags/parse.js"
import { leanCommand } from "./argv.js"
import { runUnary } from "./unary.js"
import { runWatch } from "./watch.js"

/** Serves `p` (read from `argv`); undefined when done, else the command line for the full program. */
export const runLean = async (
  p: ParsedRun,
  argv: ReadonlyArray<string>
): Promise<ReadonlyArray<string> | undefined> => {
  if (process.env["ETCD_EFFECT_LEAN"] === "0") return argv
  let fromStdin: string | undefined
  const stdin = () => {
    try {
      fromStdin = readFileSync(0, "utf8")
    } catch {
      fromStdin = ""
    }
    return fromStdin
  }
  const command = leanCommand(p, argv, stdin)
  if (command === undefined) return argv
  if (command instanceof UsageError) {
    console.error(`Error: ${command.message}`)
    process.exitCode = command.exitCode
    return undefined
  }
  if (command._tag === "watch") return runWatch(command)
  if (await runUnary(command)) return undefined
  // the full program cannot read standard input again: the value it held goes as an argument
  if (fromStdin === undefined) return argv
  return argv.includes("--") ? [...argv, fromStdin] : [...argv, "--", fromStdin]
}
