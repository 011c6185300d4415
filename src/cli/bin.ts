#!/usr/bin/env node
/**
 * The `etcd-effect` bin (dist/cli/main.js after `npm run bundle`): the same program (main.ts)
 * built twice, and a lean path in front of it.
 *
 * - `--help`, `get`, `put`, `del` and `watch` on one plain-text endpoint run on the lean path
 *   (lean/index.ts, bundled into this file): no effect, @effect/cli, grpc-js or protobufjs.
 * - The other client commands (and whatever the lean path leaves over) run from one CommonJS
 *   script with a V8 code cache (compile-cache.ts): their start-up is mostly compiling, and
 *   Node 20 caches no ES module code.
 * - `serve`, `apiserver` and `bench` run from the ES module build, split into chunks loaded on
 *   use: a long-running server keeps only the code it loaded (idle memory) and the cache would
 *   not pay.
 */
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { compileCacheDir, runCached } from "./compile-cache.js"

const here = dirname(fileURLToPath(import.meta.url))
const longRunning = new Set(["serve", "apiserver", "bench"])
/** the words the lean path may serve (lean/index.ts): only these load it */
const leanWords = new Set(["--help", "get", "put", "del", "watch"])
const args = process.argv.slice(2)

// a function, not top-level await: the bundle is CommonJS (dist/cli/package.json), whose start is
// cheaper than an ES module's
const main = async (): Promise<void> => {
  // any word naming one (even as an argument) takes the ES module build: both run any command alike
  if (args.some((arg) => longRunning.has(arg))) {
    await import(pathToFileURL(join(here, "esm", "main.js")).href)
    return
  }
  const rest = leanWords.has(args[0] ?? "") ? await (await import("./lean/index.js")).runLean(args, here) : args
  if (rest !== undefined) {
    process.argv = [...process.argv.slice(0, 2), ...rest]
    // one cache per command word: `--help` first must not leave `get` a cache without the client
    const { save } = runCached(join(here, "cjs", "main.cjs"), compileCacheDir(), rest[0] ?? "")
    process.once("exit", save)
  }
}

void main()
