/**
 * A real full disk under the LMDB backend: a small tmpfs as the data dir, filled by writes until
 * one fails. The failing write is refused (an error, never a success), the backend stops, and
 * after the disk grows every acknowledged write is there at the next open; a write refused as out
 * of space (ENOSPC) is not. Which write finds the disk full (the WAL's, or LMDB's commit in the
 * background) depends on the sizes: both happen here.
 *
 * Mounting a tmpfs needs root: the tests skip otherwise (test/backend/disk-faults.test.ts injects
 * ENOSPC through src/backend/fault-io.ts everywhere).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll } from "vitest"
import { type BackendError, type BackendShape, isNoSpace } from "../../src/backend/backend.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { makeTempDir, removeDir } from "./harness.js"

const isRoot = process.getuid?.() === 0
const root = makeTempDir("full-disk")
const mounted: Array<string> = []
afterAll(() => {
  for (const m of mounted) execFileSync("umount", [m])
  removeDir(root)
})

let seq = 0
/** A fresh tmpfs of `kib` KiB. */
const tmpfs = (kib: number): string => {
  const dir = path.join(root, `m${seq++}`)
  fs.mkdirSync(dir)
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${kib}k`, "tmpfs", dir])
  mounted.push(dir)
  return dir
}
const grow = (dir: string, kib: number) => execFileSync("mount", ["-o", `remount,size=${kib}k`, dir])

const key = (i: number) => Buffer.from(`k${String(i).padStart(4, "0")}`)
const put = (i: number, size: number) => [{ bucket: "key" as const, key: key(i), value: Buffer.alloc(size, i % 251) }]

interface Outcome {
  /** acknowledged: index → value size */
  readonly acked: Map<number, number>
  /** the write that failed, and how */
  readonly failed: { readonly index: number; readonly error: BackendError }
}

/** Writes values of the given sizes in turn, one at a time, until one fails. */
const fillWith = (backend: BackendShape, sizes: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const acked = new Map<number, number>()
    for (let i = 0; ; i++) {
      const size = sizes[i % sizes.length]!
      const exit = yield* Effect.exit(backend.write(put(i, size)))
      if (Exit.isFailure(exit)) {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error?._tag).toBe("BackendError")
        // stopped: every later write is refused at once
        expect(Exit.isFailure(yield* Effect.exit(backend.write(put(i + 1, 10))))).toBe(true)
        return { acked, failed: { index: i, error: error! } } satisfies Outcome
      }
      acked.set(i, size)
    }
  })

const fillUp = (dataDir: string, sizes: ReadonlyArray<number>) =>
  Effect.scoped(Effect.flatMap(makeLmdbBackend({ dataDir }), ({ backend }) => fillWith(backend, sizes)))

/** What the backend holds after a reopen: index → value size (every value checked). */
const reopen = (dataDir: string) =>
  Effect.scoped(
    Effect.map(makeLmdbBackend({ dataDir }), ({ backend }) => {
      const held = new Map<number, number>()
      for (const [k, v] of backend.range("key", new Uint8Array(0), undefined)) {
        const i = Number(Buffer.from(k).toString().slice(1))
        expect(Buffer.from(v).equals(Buffer.alloc(v.length, i % 251))).toBe(true)
        held.set(i, v.length)
      }
      return held
    })
  )

const expectKept = (outcome: Outcome, held: Map<number, number>) => {
  for (const [i, size] of outcome.acked) expect(held.get(i), `acknowledged k${i}`).toBe(size)
  const extra = [...held.keys()].filter((i) => !outcome.acked.has(i))
  // only the failed write may be there, and only when its outcome was unknown (not "no space")
  expect(extra.every((i) => i === outcome.failed.index)).toBe(true)
  if (isNoSpace(outcome.failed.error)) expect(held.has(outcome.failed.index)).toBe(false)
}

describe.skipIf(!isRoot)("a real full disk (tmpfs; needs root to mount)", () => {
  it.live("writes until the disk is full: the failing one is refused, every acknowledged one is kept", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1024, max: 3072 }),
          fc.array(fc.integer({ min: 100, max: 48_000 }), { minLength: 1, maxLength: 6 }),
          async (kib, sizes) => {
            const disk = tmpfs(kib)
            const dataDir = path.join(disk, "data")
            const outcome = await Effect.runPromise(fillUp(dataDir, sizes))
            expect(outcome.failed.error.message).toMatch(
              /^backend: (WAL write|commit) failed: ENOSPC: no space left on device/
            )
            grow(disk, kib * 4)
            expectKept(outcome, await Effect.runPromise(reopen(dataDir)))
          }
        ),
        { numRuns: 8 }
      )
    )
  )

  it.live("the WAL finds the disk full (no LMDB commit meanwhile): refused as no space, cut back, never replayed", () =>
    Effect.gen(function* () {
      const disk = tmpfs(1024)
      const dataDir = path.join(disk, "data")
      const outcome = yield* Effect.scoped(
        Effect.flatMap(makeLmdbBackend({ dataDir, commitIntervalMs: 3_600_000 }), ({ backend }) =>
          fillWith(backend, [3000, 700, 9000])
        )
      )
      expect(outcome.failed.error.message).toMatch(/^backend: WAL write failed: ENOSPC: no space left on device/)
      expect(isNoSpace(outcome.failed.error)).toBe(true)
      grow(disk, 4096)
      const held = yield* reopen(dataDir)
      expectKept(outcome, held)
      expect(held.size).toBe(outcome.acked.size)
    })
  )
})
