/**
 * LMDB-specific behaviour: WAL group commit (concurrent writers share fdatasyncs), LMDB
 * transactions batched off the acknowledgement path, replay of the log at open (exactly once,
 * torn tail dropped), and fail-stop on a failed WAL sync or LMDB commit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import { afterAll } from "vitest"
import type { BackendError, WriteOp } from "../../src/backend/backend.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { nodeWalIo, type WalIo } from "../../src/backend/wal.js"
import { decodeRecords } from "../../src/backend/wal-record.js"
import { hex, makeTempDir, removeDir } from "./harness.js"

const root = makeTempDir("lmdb")
afterAll(() => removeDir(root))
let seq = 0
const freshDir = () => `${root}/d${seq++}`

const put = (n: number, w = 0): Array<WriteOp> => {
  const k = Buffer.alloc(8)
  k.writeUInt32BE(w, 0)
  k.writeUInt32BE(n, 4)
  return [
    { bucket: "key", key: k, value: Buffer.from(`v${w}-${n}`) },
    { bucket: "meta", key: Buffer.from(`writer${w}`), value: Buffer.from(String(n)) }
  ]
}

const failure = (exit: Exit.Exit<void, BackendError>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("LMDB backend", () => {
  it.live("32 writes staged together share one WAL fdatasync and later one LMDB transaction", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend, stats } = yield* makeLmdbBackend({ dataDir: freshDir(), commitIntervalMs: 3_600_000 })
        const writes = Array.from({ length: 32 }, (_, i) => backend.write(put(i)))
        yield* Effect.all(writes, { concurrency: "unbounded", discard: true })
        expect(stats.walSyncs).toBe(1)
        expect(stats.batches).toBe(32)
        // Acknowledged from the WAL alone: LMDB has not been written yet.
        expect(stats.commits).toBe(0)
        yield* backend.defragment
        expect(stats.commits).toBe(1)
      })
    )
  )

  it.live("32 concurrent writers share WAL syncs; LMDB is committed when enough ops wait, not per batch", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = freshDir()
        // No timer: only the op limit (1000) triggers LMDB transactions.
        const { backend, stats } = yield* makeLmdbBackend({
          dataDir: dir,
          commitIntervalMs: 3_600_000,
          commitLimitOps: 1000
        })
        const perWriter = 20
        yield* Effect.forEach(
          Array.from({ length: 32 }, (_, w) => w),
          (w) =>
            Effect.gen(function* () {
              for (let n = 0; n < perWriter; n++) yield* backend.write(put(n, w))
            }),
          { concurrency: "unbounded", discard: true }
        )
        // 640 durable writes; without group commit that is 640 fdatasyncs.
        expect(stats.batches).toBe(32 * perWriter)
        expect(stats.walSyncs).toBeLessThanOrEqual((32 * perWriter) / 8)
        // 1280 ops: one transaction once 1000 were waiting, the rest still in the WAL (and overlay).
        expect(stats.commits).toBe(1)
        for (let w = 0; w < 32; w++) {
          expect(Buffer.from(backend.get("meta", Buffer.from(`writer${w}`))!).toString()).toBe(String(perWriter - 1))
        }
        yield* backend.defragment
        expect(stats.commits).toBe(2)
      })
    )
  )

  it.live("with the default 100 ms interval, LMDB transactions are far fewer than batches", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend, stats } = yield* makeLmdbBackend({ dataDir: freshDir() })
        const until = Date.now() + 400
        yield* Effect.forEach(
          Array.from({ length: 32 }, (_, w) => w),
          (w) =>
            Effect.gen(function* () {
              for (let n = 0; Date.now() < until; n++) yield* backend.write(put(n, w))
            }),
          { concurrency: "unbounded", discard: true }
        )
        expect(stats.batches).toBeGreaterThan(100)
        // one per 100 ms (plus one for a tick cut short): ~4, however many batches
        expect(stats.commits).toBeGreaterThan(0)
        expect(stats.commits).toBeLessThanOrEqual(6)
      })
    )
  )

  it.live(
    "acknowledged batches live in the WAL until LMDB has them: a copy of the dir replays them, exactly once",
    () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const copy = freshDir()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { backend, stats } = yield* makeLmdbBackend({ dataDir: dir, commitIntervalMs: 3_600_000 })
            yield* backend.write(put(1))
            yield* backend.defragment // batch 1 in LMDB
            for (let n = 2; n <= 10; n++) yield* backend.write(put(n))
            expect(stats.commits).toBe(1)
            // What a power cut now would leave: LMDB with batch 1, the WAL with 1..10.
            fs.cpSync(`${dir}/member`, `${copy}/member`, { recursive: true, filter: (src) => !src.endsWith("/lock") })
          })
        )
        const contents = (dataDir: string) =>
          Effect.scoped(
            Effect.gen(function* () {
              const { backend, stats } = yield* makeLmdbBackend({ dataDir })
              return {
                replayed: stats.replayed,
                writer0: Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString(),
                keys: backend.range("key", new Uint8Array(0), undefined).length
              }
            })
          )
        expect(yield* contents(copy)).toEqual({ replayed: 9, writer0: "10", keys: 10 })
        // Replayed into LMDB with the applied mark: nothing left to replay.
        expect(yield* contents(copy)).toEqual({ replayed: 0, writer0: "10", keys: 10 })
        // The original was closed cleanly: everything applied, the log deleted.
        expect(yield* contents(dir)).toEqual({ replayed: 0, writer0: "10", keys: 10 })
        expect(fs.readdirSync(`${dir}/member/wal`)).toEqual([])
      })
  )

  it.live("a torn tail (the last record half written) is dropped at open, whole", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const copy = freshDir()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { backend } = yield* makeLmdbBackend({ dataDir: dir, commitIntervalMs: 3_600_000 })
          for (let n = 1; n <= 5; n++) yield* backend.write(put(n))
          fs.cpSync(`${dir}/member`, `${copy}/member`, { recursive: true, filter: (src) => !src.endsWith("/lock") })
        })
      )
      const walDir = `${copy}/member/wal`
      const [segment] = fs.readdirSync(walDir)
      const content = fs.readFileSync(`${walDir}/${segment}`)
      const records = decodeRecords(content)
      expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5])
      // The last record's second half never reached the disk.
      const tear = records[3]!.end + Math.floor((records[4]!.end - records[3]!.end) / 2)
      content.fill(0, tear)
      fs.writeFileSync(`${walDir}/${segment}`, content)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { backend, stats } = yield* makeLmdbBackend({ dataDir: copy })
          expect(stats.replayed).toBe(4)
          expect(Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString()).toBe("4")
          expect(backend.range("key", new Uint8Array(0), undefined).length).toBe(4)
        })
      )
    })
  )

  it.live(
    "a failed WAL fdatasync fails its group and every queued batch; reads keep acknowledged data only; later writes fail",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          let broken = false
          const walIo: WalIo = {
            writev: nodeWalIo.writev,
            fdatasync: (fd, cb) =>
              broken
                ? setImmediate(() => cb(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" })))
                : nodeWalIo.fdatasync(fd, cb)
          }
          const { backend } = yield* makeLmdbBackend({ dataDir: freshDir(), walIo })
          yield* backend.write(put(1))
          broken = true
          const a = backend.write(put(2))
          const b = backend.write(put(3, 1))
          // staged: visible at once
          expect(Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString()).toBe("2")
          const [ea, eb] = yield* Effect.all([Effect.exit(a), Effect.exit(b)])
          expect(failure(ea)?.reason).toBe("WriteFailed")
          expect(failure(ea)?.message).toBe("backend: WAL write failed: EIO: i/o error, fdatasync")
          expect(failure(eb)?.reason).toBe("WriteFailed")
          // never acknowledged: gone from reads; the acknowledged batch stays
          expect(Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString()).toBe("1")
          expect(backend.get("meta", Buffer.from("writer1"))).toBeUndefined()
          expect(failure(yield* Effect.exit(backend.write(put(4))))?.reason).toBe("WriteFailed")
          expect(failure(yield* Effect.exit(backend.flush))?.reason).toBe("WriteFailed")
        })
      )
  )

  it.live(
    "a failed LMDB commit is fail-stop; the batches the WAL acknowledged stay readable and come back on reopen",
    () =>
      Effect.gen(function* () {
        const dir = freshDir()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { backend, env } = yield* makeLmdbBackend({ dataDir: dir, commitIntervalMs: 3_600_000 })
            yield* backend.write(put(1))
            // Break the environment underneath the backend: its next LMDB transaction cannot happen.
            yield* Effect.promise(() => env.close())
            // The WAL still acknowledges.
            yield* backend.write(put(2))
            const applied = yield* Effect.exit(backend.defragment)
            expect(failure(applied)?.reason).toBe("WriteFailed")
            expect(failure(applied)?.message).toMatch(/^backend: commit failed: /)
            expect(Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString()).toBe("2")
            const later = yield* Effect.exit(backend.write(put(3)))
            expect(failure(later)?.reason).toBe("WriteFailed")
            expect(failure(yield* Effect.exit(backend.flush))?.reason).toBe("WriteFailed")
          })
        )
        // The log was kept at close: the next open replays both acknowledged batches.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { backend, stats } = yield* makeLmdbBackend({ dataDir: dir })
            expect(stats.replayed).toBe(2)
            expect(Buffer.from(backend.get("meta", Buffer.from("writer0"))!).toString()).toBe("2")
          })
        )
      })
  )

  it.live("reads of keys the LMDB key limit excludes answer absent instead of throwing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* makeLmdbBackend({ dataDir: freshDir() })
        expect(backend.get("key", new Uint8Array(0))).toBeUndefined()
        expect(backend.get("key", new Uint8Array(5000))).toBeUndefined()
        const long = (prefix: Uint8Array, extra: number) => Buffer.concat([prefix, Buffer.alloc(extra, 0xff)])
        const k1978 = Buffer.alloc(1978, 0x10)
        yield* backend.write([...put(7), { bucket: "key", key: k1978, value: Buffer.from("x") }])
        const keys = (s: Uint8Array, e: Uint8Array | undefined) => backend.range("key", s, e).map(([k]) => hex(k))
        // bounds longer than any key: start just past the 1978-byte key, end just past it
        expect(keys(long(k1978, 1), undefined)).toEqual([])
        expect(keys(Buffer.alloc(1990, 0x00), long(k1978, 5))).toEqual([hex(put(7)[0]!.key), hex(k1978)])
        // the 1978-byte key is a prefix of this end, so it is below it
        expect(keys(Buffer.alloc(1990, 0x00), Buffer.alloc(1990, 0x10))).toEqual([hex(put(7)[0]!.key), hex(k1978)])
        const below = Buffer.alloc(1990, 0x10)
        below[1000] = 0x0f
        expect(keys(Buffer.alloc(1990, 0x00), below)).toEqual([hex(put(7)[0]!.key)])
      })
    )
  )
})
