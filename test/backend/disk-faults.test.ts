/**
 * Disk faults over the real backend (src/backend/fault-io.ts injects them into the WAL's I/O):
 * a WAL torn at any offset of its last records (power lost mid-write) recovers with every whole
 * record and without the torn one, which was never acknowledged; ENOSPC while writing refuses the
 * write with NOSPACE and loses nothing acknowledged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll } from "vitest"
import { faultyWalIo } from "../../src/backend/fault-io.js"
import { layerLmdb, makeLmdbBackend } from "../../src/backend/lmdb.js"
import { listSegments } from "../../src/backend/wal.js"
import { decodeRecords } from "../../src/backend/wal-record.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { makeTempDir, removeDir } from "./harness.js"

const root = makeTempDir("disk-faults")
afterAll(() => removeDir(root))
let seq = 0
const freshDir = () => `${root}/d${seq++}`
const BATCHES = 8

describe("disk faults", () => {
  it.live("a WAL torn at any offset of its last 3 records recovers every whole record, never the torn one", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const pristine = freshDir()
      yield* Effect.scoped(
        Effect.gen(function* () {
          // no LMDB apply: the batches live in the WAL only, as after a crash
          const { backend } = yield* makeLmdbBackend({ dataDir: dir, commitIntervalMs: 3_600_000 })
          for (let i = 0; i < BATCHES; i++) {
            yield* backend.write([{ bucket: "key", key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`) }])
          }
          fs.cpSync(dir, pristine, { recursive: true })
        })
      )
      fs.rmSync(path.join(pristine, "member", "lock"), { force: true })
      const segment = listSegments(path.join(pristine, "member", "wal")).at(-1)!
      const records = decodeRecords(fs.readFileSync(segment.path))
      expect(records.length).toBe(BATCHES)
      const firstCut = records[BATCHES - 4]!.end
      const end = records[BATCHES - 1]!.end
      let runs = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.integer({ min: firstCut, max: end }), async (cut) => {
            runs++
            const d = freshDir()
            fs.cpSync(pristine, d, { recursive: true })
            const seg = path.join(d, "member", "wal", path.basename(segment.path))
            const bytes = fs.readFileSync(seg)
            // what never reached the disk reads as the segment's zero fill
            bytes.fill(0, cut, end)
            fs.writeFileSync(seg, bytes)
            const survivors = await Effect.runPromise(
              Effect.scoped(
                Effect.map(makeLmdbBackend({ dataDir: d }), ({ backend }) =>
                  backend.range("key", new Uint8Array(0), undefined).map(([k]) => Buffer.from(k).toString())
                )
              )
            )
            const whole = records.filter((r) => r.end <= cut).length
            expect(survivors).toEqual(Array.from({ length: whole }, (_, i) => `k${i}`))
            fs.rmSync(d, { recursive: true, force: true })
          }),
          { numRuns: 40 }
        )
      )
      expect(runs).toBe(40)
    })
  )

  it.live(
    "ENOSPC while writing the WAL: that put fails with NOSPACE, every acknowledged put is there after reopen",
    () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const store = (walIo?: ReturnType<typeof faultyWalIo>) =>
          layerDefault.pipe(Layer.provide(layerLmdb({ dataDir: dir, ...(walIo === undefined ? {} : { walIo }) })))
        const put = (key: string) =>
          Effect.flatMap(MvccStore, (s) => s.put({ key: Buffer.from(key), value: Buffer.from(`v-${key}`) }))
        const exits = yield* Effect.scoped(
          Effect.gen(function* () {
            const out: Array<Exit.Exit<unknown, unknown>> = []
            for (const k of ["a", "b", "c", "d", "e"]) out.push(yield* Effect.exit(put(k)))
            return out
          }).pipe(Effect.provide(store(faultyWalIo({ call: "writev", code: "ENOSPC", after: 3 }))))
        )
        expect(exits.slice(0, 3).every(Exit.isSuccess)).toBe(true)
        const refused = exits[3]!
        expect(
          Exit.isFailure(refused) && refused.cause._tag === "Fail" ? refused.cause.error : undefined
        ).toMatchObject({
          message: "etcdserver: mvcc: database space exceeded"
        })
        // the store stopped: later writes are refused, never acknowledged
        expect(Exit.isFailure(exits[4]!)).toBe(true)
        const keys = yield* Effect.scoped(
          Effect.flatMap(MvccStore, (s) => s.range({ key: Buffer.from("a"), rangeEnd: Buffer.from("z") })).pipe(
            Effect.provide(store())
          )
        )
        expect(keys.kvs.map((kv) => Buffer.from(kv.key).toString())).toEqual(["a", "b", "c"])
      })
  )
})
