/**
 * LMDB-specific behaviour: group commit (concurrent writers share transactions, hence fsyncs) and
 * fail-stop on a failed commit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { afterAll } from "vitest"
import type { BackendError, WriteOp } from "../../src/backend/backend.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
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
  it.live("32 writes staged together are committed in one transaction", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { backend, stats } = yield* makeLmdbBackend({ dataDir: freshDir() })
        const before = stats.commits
        const writes = Array.from({ length: 32 }, (_, i) => backend.write(put(i)))
        yield* Effect.all(writes, { concurrency: "unbounded", discard: true })
        expect(stats.commits - before).toBe(1)
        expect(stats.batches).toBe(32)
      })
    ))

  it.live("32 concurrent writers, each waiting for durability before its next write, share transactions", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const dir = freshDir()
        const { backend, stats } = yield* makeLmdbBackend({ dataDir: dir })
        const perWriter = 20
        yield* Effect.forEach(
          Array.from({ length: 32 }, (_, w) => w),
          (w) =>
            Effect.gen(function*() {
              for (let n = 0; n < perWriter; n++) yield* backend.write(put(n, w))
            }),
          { concurrency: "unbounded", discard: true }
        )
        // 640 durable writes; without group commit that is 640 transactions and fsyncs.
        expect(stats.batches).toBe(32 * perWriter)
        expect(stats.commits).toBeLessThanOrEqual((32 * perWriter) / 8)
        for (let w = 0; w < 32; w++) {
          expect(Buffer.from(backend.get("meta", Buffer.from(`writer${w}`))!).toString()).toBe(String(perWriter - 1))
        }
      })
    ))

  it.live("a failed commit fails its batches and every queued one with WriteFailed; later writes fail at once", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { backend, env } = yield* makeLmdbBackend({ dataDir: freshDir() })
        yield* backend.write(put(1))
        // Break the environment underneath the backend: its next commit cannot happen.
        yield* Effect.promise(() => env.close())
        const a = backend.write(put(2))
        const b = backend.write(put(3))
        const [ea, eb] = yield* Effect.all([Effect.exit(a), Effect.exit(b)])
        expect(failure(ea)?.reason).toBe("WriteFailed")
        expect(failure(eb)?.reason).toBe("WriteFailed")
        expect(failure(ea)?.message).toMatch(/^backend: commit failed: /)
        const later = yield* Effect.exit(backend.write(put(4)))
        expect(failure(later)?.reason).toBe("WriteFailed")
        expect(failure(yield* Effect.exit(backend.flush))?.reason).toBe("WriteFailed")
      })
    ))

  it.live("reads of keys the LMDB key limit excludes answer absent instead of throwing", () =>
    Effect.scoped(
      Effect.gen(function*() {
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
    ))
})
