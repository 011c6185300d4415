#!/usr/bin/env node
/**
 * The `etcd-effect` bin (dist/cli/main.js after `npm run bundle`): runs the bin's program
 * (bin.ts, bundled as dist/cli/bin.cjs) with a V8 code cache (compile-cache.ts), so a one-shot
 * command neither parses the ~100 KB bundle nor compiles the functions it runs (an earlier run of
 * the same command compiled them: one cache per lean command word), then imports the ES module
 * build when the command is a server's.
 */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { bin } from "./bin.js"
import { compileCacheDir, runCached } from "./compile-cache.js"

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)

/** the lean path's words: each compiles other functions, so each keeps its own cache */
const LEAN_WORDS = new Set(["get", "put", "del", "watch"])

const word = args.find((a) => LEAN_WORDS.has(a)) ?? "other"
const { exports, save } = runCached(join(here, "bin.cjs"), compileCacheDir(), `bin-${word}`)
process.once("exit", save)
void (exports as { readonly bin: typeof bin }).bin(args).then((url) => (url === undefined ? undefined : import(url)))
