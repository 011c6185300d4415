/**
 * Crash safety of the LMDB backend: a child process writes batches with 8 concurrent writers and
 * prints an ack after each write Effect completes; it is SIGKILLed mid-load. After reopening,
 * every acknowledged batch is present and every batch is all-or-nothing. Two rounds on the same
 * data dir, so recovery from a crash is itself crashed into. The child's WAL segments are small
 * (64 KiB), so segments rotate and are deleted under the load the kill interrupts; the reopen must
 * have replayed acknowledged batches from the WAL (LMDB is committed only every 100 ms). The same
 * at the store level: puts acknowledged by the MvccStore on LMDB are there at their revisions after
 * SIGKILL and reopen.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import { afterAll, beforeAll } from "vitest"
import { layerLmdb, makeLmdbBackend } from "../../src/backend/lmdb.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault as kvStoreLayer } from "../../src/mvcc/kvstore.js"
import { crashBatchSize, crashValue } from "./fixtures/crash-batch.js"
import { bundleChild, type Child, hex, killChild, makeTempDir, removeDir, spawnChild } from "./harness.js"

const root = makeTempDir("crash")
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Reads the reopened backend; checks every batch is whole; returns the batch numbers present. */
const verify = (dir: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { backend, stats } = yield* makeLmdbBackend({ dataDir: dir })
      const metas = new Map<number, number>()
      for (const [k, v] of backend.range("meta", Buffer.from("batch/"), Buffer.from("batch0"))) {
        metas.set(Number(Buffer.from(k).toString().slice(6)), v[0]!)
      }
      const entries = new Map<number, Map<number, string>>()
      for (const [k, v] of backend.range("key", new Uint8Array(0), undefined)) {
        const n = Number(Buffer.from(k).readBigUInt64BE(0))
        let m = entries.get(n)
        if (m === undefined) entries.set(n, (m = new Map()))
        m.set(k[8]!, hex(v))
      }
      const problems: Array<string> = []
      for (const [n, k] of metas) {
        if (k !== crashBatchSize(n)) problems.push(`batch ${n}: meta says ${k}`)
        const m = entries.get(n)
        for (let i = 0; i < crashBatchSize(n); i++) {
          if (m?.get(i) !== hex(crashValue(n, i))) problems.push(`batch ${n}: entry ${i} missing or wrong`)
        }
        if (m !== undefined && m.size !== crashBatchSize(n)) problems.push(`batch ${n}: ${m.size} entries`)
      }
      for (const n of entries.keys())
        if (!metas.has(n)) problems.push(`batch ${n}: entries without meta (partial batch)`)
      return { present: new Set(metas.keys()), problems, replayed: stats.replayed }
    })
  )

describe("crash (LMDB backend, SIGKILL)", () => {
  it.live(
    "every acknowledged batch survives SIGKILL and no batch is partial, over two crashes",
    () =>
      Effect.gen(function* () {
        const dir = `${root}/data`
        let totalAcked = 0
        let replayed = 0
        for (let round = 0; round < 2; round++) {
          const from = round * 1_000_000
          const c = spawnChild(child.file, ["crash-writer", dir, String(from), "8", String(64 * 1024)])
          children.push(c)
          yield* Effect.promise(() => c.waitFor((l) => l.startsWith("ready")))
          const ackTarget = 150 + round * 100
          yield* Effect.promise(() => c.waitFor((l) => l.startsWith("ack ") && Number(l.slice(4)) >= from + ackTarget))
          // Kill at an arbitrary point of the commit cycle.
          yield* Effect.promise(() => sleep(Math.floor(Math.random() * 40)))
          c.proc.kill("SIGKILL")
          const exit = yield* Effect.promise(() => c.exited)
          // a writer that ended on its own (an error) says why: its exit code and stderr
          expect(exit, `crash-writer exited by itself; stderr: ${c.stderr()}`).toEqual({
            code: null,
            signal: "SIGKILL"
          })
          const acked = c.lines.filter((l) => l.startsWith("ack ")).map((l) => Number(l.slice(4)))
          expect(acked.length).toBeGreaterThan(ackTarget / 2)
          totalAcked += acked.length
          // The log was in use: segments left behind by the kill.
          expect(fs.readdirSync(`${dir}/member/wal`).filter((f) => f.endsWith(".wal")).length).toBeGreaterThan(0)
          const { present, problems, replayed: r } = yield* verify(dir)
          replayed += r
          expect(problems).toEqual([])
          const lost = acked.filter((n) => !present.has(n))
          expect(lost).toEqual([])
          // Present batches include every ack of earlier rounds too.
          expect(present.size).toBeGreaterThanOrEqual(totalAcked)
        }
        // Acknowledged batches came back from the WAL, not only from LMDB.
        expect(replayed).toBeGreaterThan(0)
      }),
    60_000
  )
})

describe("crash (MvccStore on LMDB, SIGKILL)", () => {
  it.live(
    "every acknowledged put is there at its revision after SIGKILL; revisions have no gaps",
    () =>
      Effect.gen(function* () {
        const dir = `${root}/store`
        const acked = new Map<string, number>()
        for (let round = 0; round < 2; round++) {
          const c = spawnChild(child.file, ["store-writer", dir, "8", `r${round}/`])
          children.push(c)
          yield* Effect.promise(() => c.waitFor((l) => l.startsWith("ready")))
          const target = 100 + 100 * round
          yield* Effect.promise(() => c.waitFor(() => c.lines.filter((l) => l.startsWith("ack ")).length >= target))
          yield* Effect.promise(() => sleep(Math.floor(Math.random() * 40)))
          c.proc.kill("SIGKILL")
          yield* Effect.promise(() => c.exited)
          for (const l of c.lines) {
            const [tag, key, rev] = l.split(" ")
            if (tag === "ack") acked.set(key!, Number(rev))
          }
          const maxAcked = Math.max(...acked.values())
          yield* Effect.scoped(
            Effect.gen(function* () {
              const ctx = yield* Layer.build(kvStoreLayer.pipe(Layer.provide(layerLmdb({ dataDir: dir }))))
              const kv = Context.get(ctx, MvccStore)
              expect(kv.rev()).toBeGreaterThanOrEqual(maxAcked)
              const all = yield* kv.range({ key: Buffer.from([0]), rangeEnd: Buffer.from([0]) })
              const byKey = new Map(all.kvs.map((x) => [Buffer.from(x.key).toString(), x]))
              const missing: Array<string> = []
              for (const [key, rev] of acked) {
                const x = byKey.get(key)
                if (x === undefined || x.modRevision !== rev || x.createRevision !== rev || x.version !== 1)
                  missing.push(key)
                else if (Buffer.from(x.value).toString() !== `value of ${key}`) missing.push(`${key} (value)`)
              }
              expect(missing).toEqual([])
              // Every key was put once, one revision each: revisions 2..rev() are exactly the keys' revisions.
              const revs = all.kvs.map((x) => x.modRevision).sort((a, b) => a - b)
              expect(revs).toEqual(Array.from({ length: kv.rev() - 1 }, (_, i) => i + 2))
            })
          )
        }
      }),
    60_000
  )
})
