#!/usr/bin/env node
/**
 * The `etcd-effect` bin (dist/cli/main.js after `npm run bundle`): the same program (main.ts)
 * built twice. The client commands and `--help` run from one CommonJS script with a V8 code cache
 * (compile-cache.ts): their start-up is mostly compiling, and Node 20 caches no ES module code.
 * `serve`, `apiserver` and `bench` run from the ES module build, split into chunks loaded on use:
 * a long-running server keeps only the code it loaded (idle memory) and the cache would not pay.
 */
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { compileCacheDir, runCached } from "./compile-cache.js"

const here = dirname(fileURLToPath(import.meta.url))
const longRunning = new Set(["serve", "apiserver", "bench"])

// any word naming one (even as an argument) takes the ES module build: both run any command alike
if (process.argv.slice(2).some((arg) => longRunning.has(arg))) {
  await import(pathToFileURL(join(here, "esm", "main.js")).href)
} else {
  // one cache per command word: `--help` first must not leave `get` a cache without the client
  const { save } = runCached(join(here, "cjs", "main.cjs"), compileCacheDir(), process.argv[2] ?? "")
  process.once("exit", save)
}
