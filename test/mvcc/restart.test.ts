/**
 * Restart on LMDB: write, close, reopen → same revision, data, history above the watermark, the
 * watermark itself, leases of live keys; an unfinished physical compaction resumes on open.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Backend } from "../../src/backend/backend.js"
import { layerLmdb } from "../../src/backend/lmdb.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { bytesToMain, isTombstoneKey, revToBytes } from "../../src/mvcc/kv-codec.js"
import { layer, layerConfig } from "../../src/mvcc/kvstore.js"
import { SCHEDULED_COMPACT_KEY } from "../../src/mvcc/kvstore-compaction.js"
import { FakeLessor, nEvent, nkv } from "./driver.js"
import { b, tempDir } from "./helpers.js"

const storeAndBackend = (dataDir: string) =>
  Layer.provideMerge(layer.pipe(Layer.provide(layerConfig())), layerLmdb({ dataDir }))

/** Opens the store over dataDir for the duration of `f`. */
const withStore = <A, E>(
  dataDir: string,
  f: (st: Context.Tag.Service<MvccStore>, be: Context.Tag.Service<Backend>) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(storeAndBackend(dataDir)), (ctx) =>
      f(Context.get(ctx, MvccStore), Context.get(ctx, Backend))
    )
  )

const everything = { key: b("\0"), rangeEnd: b("\0") }

describe("restart (LMDB)", () => {
  it.live("write, close, reopen: same revision, data, history and compaction watermark", () => {
    const { dir, cleanup } = tempDir()
    return Effect.gen(function* () {
      const before = yield* withStore(dir, (st) =>
        Effect.scoped(
          Effect.gen(function* () {
            yield* st.attachLessor(() => ({ lessor: new FakeLessor(), value: undefined }))
            yield* st.put({ key: b("a"), value: b("1") }) // 2
            yield* st.put({ key: b("b"), value: b("2"), lease: 1n }) // 3
            yield* st.put({ key: b("a"), value: b("3") }) // 4
            yield* st.deleteRange({ key: b("b") }) // 5
            yield* st.put({ key: b("c"), value: b("4"), lease: 2n }) // 6
            yield* st.txn({
              compare: [],
              success: [
                { _tag: "Put", request: { key: b("d"), value: b("5") } },
                { _tag: "DeleteRange", request: { key: b("a") } }
              ],
              failure: []
            }) // 7
            yield* st.compact(5, true)
            yield* st.put({ key: b("e"), value: b("6") }) // 8
            yield* st.compact(6) // watermark only; may be unfinished at close
            const history = []
            for (let r = 6; r <= 8; r++) history.push((yield* st.range({ ...everything, revision: r })).kvs.map(nkv))
            return { rev: st.rev(), compact: st.compactRevision(), history, events: st.eventsBetween(7, 8).map(nEvent) }
          })
        )
      )
      expect([before.rev, before.compact]).toEqual([8, 6])
      const after = yield* withStore(dir, (st) =>
        Effect.gen(function* () {
          const history = []
          for (let r = 6; r <= 8; r++) history.push((yield* st.range({ ...everything, revision: r })).kvs.map(nkv))
          const e = yield* Effect.flip(st.range({ ...everything, revision: 5 }))
          expect(e.message).toBe("etcdserver: mvcc: required revision has been compacted")
          const leases = st.keysWithLease().map(({ key, lease }) => [Buffer.from(key).toString(), lease])
          // writing continues at the next revision, versions and create revisions intact
          yield* st.put({ key: b("c"), value: b("7") })
          const c = nkv((yield* st.range({ key: b("c") })).kvs[0]!)
          return {
            rev: st.rev(),
            compact: st.compactRevision(),
            history,
            events: st.eventsBetween(7, 8).map(nEvent),
            leases,
            c
          }
        })
      )
      expect(after.rev).toBe(9)
      expect(after.compact).toBe(before.compact)
      expect(after.history).toEqual(before.history)
      expect(after.events).toEqual(before.events)
      expect(after.leases).toEqual([["c", 2n]])
      expect(after.c).toEqual({ key: "c", create: 6, mod: 9, version: 2, value: "7", lease: "0" })
    }).pipe(Effect.ensuring(Effect.sync(cleanup)))
  })

  it.live("an unfinished compaction resumes on open and finishes", () => {
    const { dir, cleanup } = tempDir()
    return Effect.gen(function* () {
      yield* withStore(dir, (st) =>
        Effect.gen(function* () {
          for (let i = 0; i < 20; i++) yield* st.put({ key: b(`k${i % 4}`), value: b(String(i)) }) // 2..21
          yield* st.deleteRange({ key: b("k0") }) // 22
        })
      )
      // as if the process died right after persisting scheduledCompactRev=22
      yield* Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Layer.build(layerLmdb({ dataDir: dir }))
          yield* Context.get(ctx, Backend).write([
            { bucket: "meta", key: SCHEDULED_COMPACT_KEY, value: revToBytes(22, 0) }
          ])
        })
      )
      yield* withStore(dir, (st, be) =>
        Effect.gen(function* () {
          expect(st.compactRevision()).toBe(22)
          expect(st.rev()).toBe(22)
          // the resumed compaction is queued first: a physical compaction after it waits for it
          yield* st.put({ key: b("x") }) // 23
          yield* st.compact(23, true)
          const keys = be
            .range("key", revToBytes(0, 0), undefined)
            .map(([k]) => `${bytesToMain(k)}${isTombstoneKey(k) ? "t" : ""}`)
          // latest of k1..k3 (rev 19, 20, 21) and x; k0's tombstone at 22 dropped by the compaction at 23
          expect(keys).toEqual(["19", "20", "21", "23"])
          expect(bytesToMain(be.get("meta", b("finishedCompactRev"))!)).toBe(23)
        })
      )
      // and after another restart the watermark is the finished one
      yield* withStore(dir, (st) => Effect.sync(() => expect([st.rev(), st.compactRevision()]).toEqual([23, 23])))
    }).pipe(Effect.ensuring(Effect.sync(cleanup)))
  })

  it.live("a store whose only record is the tombstone at the watermark restores its revision", () => {
    const { dir, cleanup } = tempDir()
    return Effect.gen(function* () {
      yield* withStore(dir, (st) =>
        Effect.gen(function* () {
          yield* st.put({ key: b("a") }) // 2
          yield* st.deleteRange({ key: b("a") }) // 3
          yield* st.put({ key: b("b") }) // 4
          yield* st.deleteRange({ key: b("b") }) // 5
          yield* st.compact(5, true)
          // only the tombstone at 5 is left
          yield* st.compact(5).pipe(Effect.flip)
        })
      )
      yield* withStore(dir, (st) =>
        Effect.gen(function* () {
          expect([st.rev(), st.compactRevision()]).toEqual([5, 5])
          expect(
            st
              .eventsBetween(5, 5)
              .map(nEvent)
              .map((e) => `${e.type} ${e.kv.key}`)
          ).toEqual(["DELETE b"])
          yield* st.compact(5).pipe(Effect.flip)
          yield* st.put({ key: b("b") })
          expect(nkv((yield* st.range({ key: b("b") })).kvs[0]!)).toMatchObject({ create: 6, mod: 6, version: 1 })
        })
      )
    }).pipe(Effect.ensuring(Effect.sync(cleanup)))
  })
})
