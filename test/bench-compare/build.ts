/**
 * The compiled tree for the bench:compare end-to-end tests: `tsc -p tsconfig.build.json` when
 * dist/bench/compare.js is missing or older than any source under src/ or bench/.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const newest = (dir: string): number => {
  let t = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) t = Math.max(t, newest(p))
    else if (entry.name.endsWith(".ts")) t = Math.max(t, fs.statSync(p).mtimeMs)
  }
  return t
}

export const COMPARE_JS = "dist/bench/compare.js"

export const ensureBuilt = (): void => {
  const built = fs.existsSync(COMPARE_JS) ? fs.statSync(COMPARE_JS).mtimeMs : 0
  if (built >= Math.max(newest("src"), newest("bench"))) return
  // tsc emits even when a file elsewhere does not type-check; what matters here is the output
  const r = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { encoding: "utf8" })
  if (!fs.existsSync(COMPARE_JS)) throw new Error(`build failed:\n${r.stdout}${r.stderr}`)
}
