/**
 * The bin's program (dist/cli/bin.cjs after `npm run bundle`, run by launch.ts, the `etcd-effect`
 * bin, with its V8 code cache). It reads the command line with the table (flags/parse.ts) itself,
 * so help, `version` and every flag error are answered here without loading anything else, and then
 * runs the command where it starts fastest:
 *
 * - `get`, `put`, `del` and `watch` on one plain-text endpoint on the lean path (lean/index.ts,
 *   bundled into this file): no effect, grpc-js or protobufjs.
 * - The other client commands (and whatever the lean path leaves over) from one CommonJS script
 *   with a V8 code cache (compile-cache.ts): their start-up is mostly compiling, and Node 20
 *   caches no ES module code.
 * - `serve`, `apiserver` and `bench` from the ES module build, split into chunks loaded on use: a
 *   long-running server keeps only the code it loaded (idle memory) and the cache would not pay.
 *   launch.ts imports it (a script compiled by `vm.Script` has no `import()` of its own).
 */
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { compileCacheDir, runCached } from "./compile-cache.js"
import { helpText } from "./flags/help.js"
import { parseCommandLine } from "./flags/parse.js"
import { API_VERSION, PROGRAM_VERSION } from "./flags/table.js"

const here = dirname(fileURLToPath(import.meta.url))

/**
 * Runs the command line `args`: undefined when done (or handed to the client bundle), else the URL
 * of the ES module build the caller must import (serve, apiserver, bench).
 */
export const bin = async (args: ReadonlyArray<string>): Promise<string | undefined> => {
  const parsed = parseCommandLine(args, process.env)
  if (parsed._tag === "error") {
    for (const line of parsed.lines) console.error(line)
    process.exitCode = parsed.exitCode
    return undefined
  }
  for (const w of parsed.warnings) console.error(`Warning: ${w}`)
  if (parsed._tag === "help") {
    process.stdout.write(`${parsed.note === undefined ? "" : `${parsed.note}\n`}${helpText(parsed.command)}`)
    return undefined
  }
  const runs = parsed.command.runs
  if (runs === "builtin") {
    process.stdout.write(`etcd-effect version: ${PROGRAM_VERSION}\nAPI version: ${API_VERSION}\n`)
    return undefined
  }
  if (runs === "server") return pathToFileURL(join(here, "esm", "main.js")).href
  const rest = runs === "lean" ? await (await import("./lean/index.js")).runLean(parsed, args) : args
  if (rest !== undefined) {
    process.argv = [...process.argv.slice(0, 2), ...rest]
    // one cache per command: `lease list` first must not leave `get` a cache without its code
    const { save } = runCached(join(here, "cjs", "main.cjs"), compileCacheDir(), parsed.command.path.replace(" ", "-"))
    process.once("exit", save)
  }
  return undefined
}
