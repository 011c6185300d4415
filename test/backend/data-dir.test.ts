/**
 * Data dir checks: created when missing; refused when not ours (NotADataDir), not accessible
 * (Unreadable) or held by another open (Locked: another process, or this one); a lock left by a
 * dead process never blocks; scope close releases the lock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import type { BackendError } from "../../src/backend/backend.js"
import { type LockMode, MARKER_CONTENT, MARKER_FILE, openDataDir } from "../../src/backend/data-dir.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { bundleChild, type Child, killChild, makeTempDir, removeDir, spawnChild } from "./harness.js"

const root = makeTempDir("datadir")
let child: { file: string; dir: string }
const children: Array<Child> = []
beforeAll(async () => {
  child = await bundleChild()
})
afterAll(async () => {
  for (const c of children) await killChild(c)
  removeDir(root)
  if (child !== undefined) removeDir(child.dir)
})
let seq = 0
const freshPath = () => path.join(root, `d${seq++}`)

const failure = <A>(exit: Exit.Exit<A, BackendError>): BackendError | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** Opens and closes at once; the failure if any. */
const tryOpen = (dir: string, lockMode?: LockMode) =>
  Effect.scoped(openDataDir(dir, { lockMode })).pipe(Effect.exit, Effect.map(failure))

const start = (args: ReadonlyArray<string>, options?: { uid?: number; gid?: number }) => {
  const c = spawnChild(child.file, args, options)
  children.push(c)
  return c
}

const childTryOpen = async (args: ReadonlyArray<string>, options?: { uid?: number; gid?: number }) => {
  const c = start(["try-open", ...args], options)
  const line = await c.waitFor((l) => l.startsWith("{"))
  await c.exited
  return JSON.parse(line) as { ok: boolean; reason?: string; message?: string }
}

/** A pid that certainly belonged to a process that has exited. */
const deadPid = (): number => {
  const r = spawnSync(process.execPath, ["-e", ""])
  expect(r.pid).toBeGreaterThan(0)
  return r.pid!
}

describe("data dir", () => {
  it.live("a missing dir is created with the layout and marker; reopening finds it ours", () =>
    Effect.gen(function* () {
      const dir = path.join(freshPath(), "nested", "data")
      const layout = yield* Effect.scoped(openDataDir(dir))
      expect(layout.fresh).toBe(true)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(fs.readFileSync(path.join(dir, "member", MARKER_FILE), "utf8")).toBe(MARKER_CONTENT)
      expect(fs.statSync(path.join(dir, "member", "snap")).isDirectory()).toBe(true)
      expect(fs.statSync(path.join(dir, "member", "wal")).isDirectory()).toBe(true)
      const again = yield* Effect.scoped(openDataDir(dir))
      expect(again.fresh).toBe(false)
      expect(again.dbPath).toBe(path.join(dir, "member", "snap", "db"))
    })
  )

  it.live("an empty existing dir, or one left by an open that died before its marker, is initialised", () =>
    Effect.gen(function* () {
      const empty = freshPath()
      fs.mkdirSync(empty)
      expect((yield* Effect.scoped(openDataDir(empty))).fresh).toBe(true)
      const half = freshPath()
      fs.mkdirSync(path.join(half, "member", "snap"), { recursive: true })
      fs.writeFileSync(path.join(half, "member", "lock"), "12345\n")
      expect((yield* Effect.scoped(openDataDir(half))).fresh).toBe(true)
    })
  )

  it.live("a dir that is not ours fails with NotADataDir and is left untouched", () =>
    Effect.gen(function* () {
      const foreign = freshPath()
      fs.mkdirSync(foreign)
      fs.writeFileSync(path.join(foreign, "photo.jpg"), "not a db")
      const e1 = yield* tryOpen(foreign)
      expect(e1?.reason).toBe("NotADataDir")
      expect(e1?.message).toBe(
        `data dir ${foreign} is not empty and is not an etcd-effect data dir (no member/${MARKER_FILE})`
      )
      expect(fs.readdirSync(foreign)).toEqual(["photo.jpg"])

      const etcd = freshPath()
      fs.mkdirSync(path.join(etcd, "member", "wal"), { recursive: true })
      fs.mkdirSync(path.join(etcd, "member", "snap"), { recursive: true })
      fs.writeFileSync(path.join(etcd, "member", "snap", "db"), "bbolt")
      const e2 = yield* tryOpen(etcd)
      expect(e2?.reason).toBe("NotADataDir")
      expect(e2?.message).toContain("belongs to etcd")

      const file = path.join(freshPath() + ".file")
      fs.writeFileSync(file, "")
      const e3 = yield* tryOpen(file)
      expect(e3?.reason).toBe("NotADataDir")
      expect(e3?.message).toBe(`data dir ${file} is not a directory`)

      const future = freshPath()
      fs.mkdirSync(path.join(future, "member"), { recursive: true })
      fs.writeFileSync(path.join(future, "member", MARKER_FILE), "etcd-effect data dir, layout 99\n")
      const e4 = yield* tryOpen(future)
      expect(e4?.reason).toBe("NotADataDir")
      expect(e4?.message).toContain("unsupported layout")
      for (const e of [e1, e2, e3, e4]) expect(e?.message).not.toContain("\n")
    })
  )

  it.live("a layout-1 dir (before the WAL) is upgraded in place: marker rewritten, member/wal created, data kept", () =>
    Effect.gen(function* () {
      const dir = freshPath()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { backend } = yield* makeLmdbBackend({ dataDir: dir })
          yield* backend.write([{ bucket: "key", key: Buffer.from("k"), value: Buffer.from("v") }])
        })
      )
      // What a layout-1 build left: no wal dir, the old marker.
      fs.rmSync(path.join(dir, "member", "wal"), { recursive: true })
      fs.writeFileSync(path.join(dir, "member", MARKER_FILE), "etcd-effect data dir, layout 1\n")
      const layout = yield* Effect.scoped(openDataDir(dir))
      expect(layout.fresh).toBe(false)
      expect(fs.readFileSync(path.join(dir, "member", MARKER_FILE), "utf8")).toBe(MARKER_CONTENT)
      expect(MARKER_CONTENT).toBe("etcd-effect data dir, layout 3\n")
      expect(fs.statSync(layout.walDir).isDirectory()).toBe(true)
      const value = yield* Effect.scoped(
        Effect.map(makeLmdbBackend({ dataDir: dir }), ({ backend }) =>
          Buffer.from(backend.get("key", Buffer.from("k"))!).toString()
        )
      )
      expect(value).toBe("v")
    })
  )

  it.live("an unreadable dir fails with Unreadable", () =>
    Effect.gen(function* () {
      const dir = freshPath()
      yield* Effect.scoped(openDataDir(dir))
      fs.chmodSync(dir, 0o700)
      if (process.getuid?.() === 0) {
        // root passes every permission check, so ask as nobody: the dir is root's and 0700.
        fs.chmodSync(root, 0o755)
        const r = yield* Effect.promise(() => childTryOpen([dir], { uid: 65534, gid: 65534 }))
        expect(r).toEqual({
          ok: false,
          reason: "Unreadable",
          message: `data dir ${dir} is not accessible: EACCES (permission denied)`
        })
      } else {
        fs.chmodSync(dir, 0o000)
        const e = yield* tryOpen(dir)
        fs.chmodSync(dir, 0o700)
        expect(e?.reason).toBe("Unreadable")
      }
    })
  )

  for (const lockMode of ["socket", "pidfile"] as const) {
    describe(`lock (${lockMode})`, () => {
      it.live("a second open in the same process fails with Locked; scope close releases the lock", () =>
        Effect.gen(function* () {
          const dir = freshPath()
          const scope = yield* Scope.make()
          yield* openDataDir(dir, { lockMode }).pipe(Scope.extend(scope))
          const e = yield* tryOpen(dir, lockMode)
          expect(e?.reason).toBe("Locked")
          expect(e?.message).toBe(`data dir ${dir} is in use by another etcd-effect process (pid ${process.pid})`)
          // The LMDB layer refuses too, before touching LMDB.
          const viaLayer = yield* Effect.scoped(makeLmdbBackend({ dataDir: dir, lockMode })).pipe(
            Effect.exit,
            Effect.map(failure)
          )
          expect(viaLayer?.reason).toBe("Locked")
          yield* Scope.close(scope, Exit.void)
          expect(yield* tryOpen(dir, lockMode)).toBeUndefined()
        })
      )

      it.live("an open in another process fails with Locked until that process dies (SIGKILL)", () =>
        Effect.gen(function* () {
          const dir = freshPath()
          const holder = start(["hold", dir, lockMode])
          const ready = yield* Effect.promise(() => holder.waitFor((l) => l.startsWith("ready")))
          const pid = Number(ready.split(" ")[1])
          const e = yield* tryOpen(dir, lockMode)
          expect(e?.reason).toBe("Locked")
          expect(e?.message).toBe(`data dir ${dir} is in use by another etcd-effect process (pid ${pid})`)
          const other = yield* Effect.promise(() => childTryOpen([dir, lockMode]))
          expect(other).toMatchObject({ ok: false, reason: "Locked" })
          yield* Effect.promise(() => killChild(holder))
          // socket: the kernel dropped it; pidfile: the pid is dead, so the lock is stale.
          expect(yield* tryOpen(dir, lockMode)).toBeUndefined()
        })
      )

      it.live("a stale lock naming a dead pid is taken over", () =>
        Effect.gen(function* () {
          const dir = freshPath()
          yield* Effect.scoped(openDataDir(dir, { lockMode }))
          const lockFile = path.join(dir, "member", "lock")
          fs.writeFileSync(lockFile, `${deadPid()}\n`)
          const scope = yield* Scope.make()
          yield* openDataDir(dir, { lockMode }).pipe(Scope.extend(scope))
          expect(fs.readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`)
          yield* Scope.close(scope, Exit.void)
          // our own pid left by an earlier life of this process (pid reuse after restart) is stale too
          fs.writeFileSync(lockFile, `${process.pid}\n`)
          expect(yield* tryOpen(dir, lockMode)).toBeUndefined()
        })
      )
    })
  }
})
