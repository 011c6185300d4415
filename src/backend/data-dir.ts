/**
 * Opening a data dir (etcd's fileutil.TouchDirAll + the member dir checks + its flock on the db):
 *
 *   <data-dir>/member/etcd-effect.version   marker: this dir is ours, and its layout version
 *   <data-dir>/member/snap/db               the LMDB environment (file; LMDB adds db-lock)
 *   <data-dir>/member/wal/                  the write-ahead log's segments (wal.ts)
 *   <data-dir>/member/lock                  pid of the process holding the dir (informational)
 *
 * Layout 2 added the WAL. A layout-1 dir (no WAL) is upgraded in place when opened: its marker is
 * rewritten before any WAL segment exists, so an older build, which would ignore the log and
 * lose the acknowledged batches only it holds, refuses the dir instead. Layout 3 stores a checksum
 * with every LMDB value (value-checksum.ts): a layout-1 or -2 dir's marker is rewritten first, so
 * an older build refuses it from then on, and its values are sealed when the environment opens
 * (lmdb-env.ts's `ensureSealed`, decided by a mark inside LMDB, so a crash in between is harmless).
 *
 * A missing dir is created (0700, as etcd does). An existing dir must be empty or carry our marker
 * (else NotADataDir), be readable and writable (else Unreadable) and not be held by another open
 * (else Locked). Every failure is one line, for the serve program to print before exiting 1.
 *
 * The exclusive lock: LMDB itself allows many processes on one environment, so we add ours. On
 * Linux it is a listening socket in the abstract namespace named after the dir's device and inode:
 * binding is exclusive, and the kernel releases it when the process dies, even by SIGKILL, so a lock
 * can never go stale and no pid guessing is needed. Elsewhere (or when forced, for tests) it is a
 * lock file created with O_EXCL that holds the pid; a lock whose pid is dead is taken over.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import { BackendError } from "./backend.js"
import { makeDirs } from "./make-dirs.js"

export const MARKER_FILE = "etcd-effect.version"
export const MARKER_CONTENT = "etcd-effect data dir, layout 3\n"
/** layout 2: values without checksums */
const MARKER_CONTENT_V2 = "etcd-effect data dir, layout 2\n"
/** layout 1: the same without member/wal */
const MARKER_CONTENT_V1 = "etcd-effect data dir, layout 1\n"

export interface DataDirLayout {
  /** the data dir, absolute */
  readonly dir: string
  readonly memberDir: string
  readonly snapDir: string
  /** the WAL's directory */
  readonly walDir: string
  /** path of the LMDB environment file */
  readonly dbPath: string
  /** true when the dir was created or empty, i.e. this open initialised it */
  readonly fresh: boolean
}

export type LockMode = "socket" | "pidfile"

export interface OpenDataDirOptions {
  /** default: "socket" on Linux, "pidfile" elsewhere */
  readonly lockMode?: LockMode | undefined
}

const fail = (reason: BackendError["reason"], message: string, cause?: unknown) =>
  new BackendError(cause === undefined ? { reason, message } : { reason, message, cause })

const errCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : undefined

/** what the system calls these errors (Go prints them so; node's code alone says little) */
const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOTDIR: "not a directory",
  ENOSPC: "no space left on device"
}

const unreadable = (dir: string, e: unknown) => {
  const code = errCode(e)
  const text = code === undefined ? String(e) : ERRNO_TEXT[code] === undefined ? code : `${code} (${ERRNO_TEXT[code]})`
  return fail("Unreadable", `data dir ${dir} is not accessible: ${text}`, e)
}

/** Syncs a directory so a file just created or renamed in it survives a power loss. */
export const fsyncDir = (dir: string): void => {
  const fd = fs.openSync(dir, "r")
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** Probes read/write access by really creating a file: `access(2)` says yes to root on a read-only mount. */
const probeWritable = (dir: string): void => {
  const probe = path.join(dir, `.probe-${process.pid}-${Date.now()}`)
  fs.writeFileSync(probe, "")
  fs.unlinkSync(probe)
}

/**
 * True when the dir holds only what an open that died before writing the marker leaves behind
 * (member/, member/snap/ empty, a lock note, a marker temp file): such a dir is still fresh.
 */
const interruptedInit = (dir: string, entries: ReadonlyArray<string>): boolean => {
  if (entries.length !== 1 || entries[0] !== "member") return false
  try {
    const member = path.join(dir, "member")
    const inMember = fs.readdirSync(member)
    if (!inMember.every((e) => e === "snap" || e === "lock" || e === `${MARKER_FILE}.tmp`)) return false
    return !inMember.includes("snap") || fs.readdirSync(path.join(member, "snap")).length === 0
  } catch {
    return false
  }
}

/** Checks the dir and decides whether it is fresh; creates it when missing. Synchronous, no side effects on an existing dir. */
const inspect = (dir: string): { fresh: boolean; upgrade: boolean } => {
  let st: fs.Stats
  try {
    st = fs.statSync(dir)
  } catch (e) {
    if (errCode(e) !== "ENOENT") throw unreadable(dir, e)
    try {
      makeDirs(dir, 0o700)
      fsyncDir(path.dirname(dir))
    } catch (e2) {
      throw unreadable(dir, e2)
    }
    return { fresh: true, upgrade: false }
  }
  if (!st.isDirectory()) throw fail("NotADataDir", `data dir ${dir} is not a directory`)
  let entries: Array<string>
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK)
    entries = fs.readdirSync(dir)
  } catch (e) {
    throw unreadable(dir, e)
  }
  if (entries.length === 0 || interruptedInit(dir, entries)) return { fresh: true, upgrade: false }
  const marker = path.join(dir, "member", MARKER_FILE)
  let content: string
  try {
    content = fs.readFileSync(marker, "utf8")
  } catch (e) {
    const code = errCode(e)
    if (code === "ENOENT" || code === "ENOTDIR") {
      const etcd = fs.existsSync(path.join(dir, "member", "wal"))
      throw fail(
        "NotADataDir",
        etcd
          ? `data dir ${dir} belongs to etcd (bbolt/WAL layout), not etcd-effect`
          : `data dir ${dir} is not empty and is not an etcd-effect data dir (no member/${MARKER_FILE})`
      )
    }
    throw unreadable(dir, e)
  }
  if (content !== MARKER_CONTENT && content !== MARKER_CONTENT_V2 && content !== MARKER_CONTENT_V1) {
    throw fail(
      "NotADataDir",
      `data dir ${dir} has an unsupported layout (member/${MARKER_FILE}: ${JSON.stringify(content.trim())})`
    )
  }
  return { fresh: false, upgrade: content !== MARKER_CONTENT }
}

// ---- the lock --------------------------------------------------------------------------------

/** Lock files this process holds (pidfile mode), so a pid equal to ours is told apart from pid reuse. */
const heldPidLocks = new Set<string>()

const readPid = (file: string): number | undefined => {
  try {
    const n = Number.parseInt(fs.readFileSync(file, "utf8").trim(), 10)
    return Number.isSafeInteger(n) && n > 0 ? n : undefined
  } catch {
    return undefined
  }
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errCode(e) === "EPERM"
  }
}

const lockedError = (dir: string, pid: number | undefined) =>
  fail("Locked", `data dir ${dir} is in use by another etcd-effect process${pid !== undefined ? ` (pid ${pid})` : ""}`)

const writePidFile = (file: string): void => {
  const fd = fs.openSync(file, "w", 0o600)
  try {
    fs.writeSync(fd, `${process.pid}\n`)
  } finally {
    fs.closeSync(fd)
  }
}

/** Exclusive lock by an abstract-namespace socket: released by the kernel when we die. */
const acquireSocketLock = (dir: string, lockFile: string): Effect.Effect<void, BackendError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<net.Server, BackendError>((resume) => {
      const st = fs.statSync(dir)
      const name = `\0etcd-effect-data-dir:${st.dev}:${st.ino}`
      const server = net.createServer((socket) => socket.destroy())
      server.once("error", (e) => {
        server.close()
        resume(
          Effect.fail(
            errCode(e) === "EADDRINUSE"
              ? lockedError(dir, readPid(lockFile))
              : fail("Unreadable", `data dir ${dir}: cannot take its lock: ${errCode(e) ?? String(e)}`, e)
          )
        )
      })
      server.listen({ path: name, exclusive: true }, () => {
        server.unref()
        try {
          writePidFile(lockFile)
        } catch (e) {
          server.close()
          return resume(Effect.fail(unreadable(dir, e)))
        }
        resume(Effect.succeed(server))
      })
    }),
    (server) =>
      Effect.async<void>((resume) => {
        // Remove the pid note first: once the socket closes another process may write its own.
        try {
          if (readPid(lockFile) === process.pid) fs.unlinkSync(lockFile)
        } catch {
          // best effort; the socket is the lock
        }
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.asVoid)

/** Portable lock: a pid file created with O_EXCL; a file naming a dead pid is stale and taken over. */
const acquirePidLock = (dir: string, lockFile: string): Effect.Effect<void, BackendError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            const fd = fs.openSync(lockFile, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600)
            try {
              fs.writeSync(fd, `${process.pid}\n`)
              fs.fsyncSync(fd)
            } finally {
              fs.closeSync(fd)
            }
            heldPidLocks.add(lockFile)
            return
          } catch (e) {
            if (errCode(e) !== "EEXIST") throw unreadable(dir, e)
          }
          const pid = readPid(lockFile)
          const ours = pid === process.pid && heldPidLocks.has(lockFile)
          if (pid !== undefined && (ours || (pid !== process.pid && pidAlive(pid)))) throw lockedError(dir, pid)
          // Stale (dead pid, our own pid from a previous life, or garbage): move it aside and retry.
          try {
            const aside = `${lockFile}.stale-${process.pid}`
            fs.renameSync(lockFile, aside)
            fs.unlinkSync(aside)
          } catch (e) {
            if (errCode(e) !== "ENOENT") throw unreadable(dir, e)
          }
        }
        throw lockedError(dir, readPid(lockFile))
      },
      catch: (e) => (e instanceof BackendError ? e : unreadable(dir, e))
    }),
    () =>
      Effect.sync(() => {
        heldPidLocks.delete(lockFile)
        try {
          if (readPid(lockFile) === process.pid) fs.unlinkSync(lockFile)
        } catch {
          // already gone
        }
      })
  )

/**
 * Opens (creating if needed), checks and locks a data dir for this scope. The lock is released
 * when the scope closes.
 */
export const openDataDir = (
  dataDir: string,
  options: OpenDataDirOptions = {}
): Effect.Effect<DataDirLayout, BackendError, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = path.resolve(dataDir)
    const { fresh, upgrade } = yield* Effect.try({
      try: () => inspect(dir),
      catch: (e) => (e instanceof BackendError ? e : unreadable(dir, e))
    })
    const memberDir = path.join(dir, "member")
    const snapDir = path.join(memberDir, "snap")
    yield* Effect.try({
      try: () => {
        makeDirs(snapDir, 0o700)
        probeWritable(snapDir)
      },
      catch: (e) => unreadable(dir, e)
    })
    const mode = options.lockMode ?? (process.platform === "linux" ? "socket" : "pidfile")
    const lockFile = path.join(memberDir, "lock")
    yield* mode === "socket" ? acquireSocketLock(dir, lockFile) : acquirePidLock(dir, lockFile)
    const walDir = path.join(memberDir, "wal")
    if (fresh || upgrade) {
      // Written under the lock, atomically, and synced: a half-initialised dir never looks like ours.
      yield* Effect.try({
        try: () => {
          const tmp = path.join(memberDir, `${MARKER_FILE}.tmp`)
          const fd = fs.openSync(tmp, "w", 0o600)
          try {
            fs.writeSync(fd, MARKER_CONTENT)
            fs.fsyncSync(fd)
          } finally {
            fs.closeSync(fd)
          }
          fs.renameSync(tmp, path.join(memberDir, MARKER_FILE))
          fsyncDir(memberDir)
          fsyncDir(dir)
        },
        catch: (e) => unreadable(dir, e)
      })
    }
    // After the marker: a dir holding member/wal without our marker is taken for etcd's.
    yield* Effect.try({
      try: () => {
        if (!fs.existsSync(walDir)) {
          fs.mkdirSync(walDir, { mode: 0o700 })
          // Segments' names are synced in walDir; walDir's own name must be durable too.
          fsyncDir(memberDir)
        }
      },
      catch: (e) => unreadable(dir, e)
    })
    return { dir, memberDir, snapDir, walDir, dbPath: path.join(snapDir, "db"), fresh }
  })
