/**
 * The lean path of the bin (bin.ts): the commands a start-up is measured by, served without
 * loading effect, @effect/cli, grpc-js or protobufjs (their evaluation and @effect/cli building
 * the whole command tree were ~3/4 of a `get`'s start-up: docs/benchmarks.md, "CLI start-up").
 *
 * - `etcd-effect --help`: the full program's help text, written into dist/cli/help.txt by the
 *   build (`npm run bundle`) from the same bundle, printed as is.
 * - `get`, `put`, `del`, `watch` on one plain-text endpoint (argv.ts says which command lines).
 *
 * Everything else, and every case these do not cover, is left to the full program: `runLean`
 * then answers the command line it must run (the same one, or a watch's with a new `--rev`).
 * `ETCD_EFFECT_LEAN=0` turns the lean path off (tests compare the two).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { leanCommand } from "./argv.js"
import { runUnary } from "./unary.js"
import { runWatch } from "./watch.js"

/** Serves `args` (the words after the program); undefined when done, else the command line for the full program. */
export const runLean = async (
  args: ReadonlyArray<string>,
  distCli: string
): Promise<ReadonlyArray<string> | undefined> => {
  if (process.env["ETCD_EFFECT_LEAN"] === "0") return args
  if (args.length === 1 && args[0] === "--help") {
    let help: string
    try {
      help = readFileSync(join(distCli, "help.txt"), "utf8")
    } catch {
      return args // not built with it (an old build): the full program prints it
    }
    process.stdout.write(help)
    return undefined
  }
  const command = leanCommand(args, process.env)
  if (command === undefined) return args
  if (command._tag === "watch") return runWatch(command)
  return (await runUnary(command)) ? undefined : args
}
