/**
 * `mkdir -p`, without the loop of Node 20's own: `fs.mkdirSync(p, { recursive: true })` (and the
 * async form) never returns for a path whose parent exists but answers ENOENT to a new entry, as
 * /proc does (`--data-dir /proc/x`): node then makes the parent, which exists, and tries the path
 * again, for ever, synchronously, so not even SIGINT or SIGTERM gets through. Here each directory
 * is made once after its parents, and a second ENOENT is the answer.
 */
import * as fs from "node:fs"
import * as path from "node:path"

const code = (e: unknown): unknown => (typeof e === "object" && e !== null && "code" in e ? e.code : undefined)

/** Makes `dir` and its missing parents (`mode` for each made); an existing directory is fine. */
export const makeDirs = (dir: string, mode = 0o777): void => {
  try {
    fs.mkdirSync(dir, { mode })
    return
  } catch (e) {
    if (code(e) === "EEXIST" && fs.statSync(dir).isDirectory()) return
    const parent = path.dirname(dir)
    if (code(e) !== "ENOENT" || parent === dir) throw e
  }
  makeDirs(path.dirname(dir), mode)
  try {
    fs.mkdirSync(dir, { mode })
  } catch (e) {
    // made meanwhile by someone else: as good
    if (code(e) !== "EEXIST" || !fs.statSync(dir).isDirectory()) throw e
  }
}
