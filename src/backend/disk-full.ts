/**
 * A full disk, told apart from other write failures, so that the write it refused can say so
 * (etcd's "database space exceeded") and the member's last line names it.
 *
 * - The WAL's writes get ENOSPC from the kernel (wal.ts carries on after a short write, as Go's
 *   os.File.Write does, so the call that finds the disk full reports it).
 * - LMDB reports a short write as EIO (mdb.c's mdb_page_flush: "short write, filesystem full?"),
 *   and an ENOSPC from a write as itself; lmdb-js rejects the commit with a generic "Commit
 *   failed" whose `commitError` promise holds the real error. An EIO from LMDB while the file
 *   system holding the data has less than 1 MiB left to write is the full disk.
 */
import * as fs from "node:fs"

export const NO_SPACE_TEXT = "no space left on device"

/** Below this many bytes free, an LMDB short write (EIO) is the disk being full. */
const NEARLY_FULL_BYTES = 1024 * 1024

const codeOf = (e: unknown): unknown => (typeof e === "object" && e !== null && "code" in e ? e.code : undefined)

/** An error as the kernel's ENOSPC reads in Node: code "ENOSPC", Go's text. */
export const noSpaceError = (): NodeJS.ErrnoException => {
  const e: NodeJS.ErrnoException = new Error(`ENOSPC: ${NO_SPACE_TEXT}`)
  e.code = "ENOSPC"
  e.errno = -28
  return e
}

/** Whether the file system holding `path` has (nearly) no space left; false when it cannot be asked. */
export const nearlyFull = (path: string): boolean => {
  try {
    const s = fs.statfsSync(path)
    return s.bavail * s.bsize < NEARLY_FULL_BYTES
  } catch {
    return false
  }
}

/**
 * The cause of a failed LMDB commit: lmdb-js's real error (from `commitError`), as ENOSPC when it
 * is the disk being full (ENOSPC, or EIO with the disk at `path` nearly full). Handles the
 * `commitError` promise, which lmdb-js otherwise leaves rejected with nobody listening.
 */
export const lmdbCommitCause = async (e: unknown, path: string): Promise<unknown> => {
  let cause = e
  const pending = typeof e === "object" && e !== null && "commitError" in e ? e.commitError : undefined
  if (pending instanceof Promise) {
    // rejected by lmdb-js in the same callback that rejected the commit: settled by the next macrotask
    cause = await Promise.race([
      pending.then(
        () => e,
        (real: unknown) => real
      ),
      new Promise<unknown>((resolve) => setImmediate(() => resolve(e)))
    ])
  }
  const code = codeOf(cause)
  if (code === "ENOSPC" || code === 28) return noSpaceError()
  if ((code === "EIO" || code === 5) && nearlyFull(path)) return noSpaceError()
  return cause
}
