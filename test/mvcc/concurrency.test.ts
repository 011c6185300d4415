/**
 * Many concurrent writers on LMDB (group commit): every revision is committed and announced once,
 * in order; each response's revision carries exactly that request's change; the state survives a
 * restart.
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { nEvent, nkv } from "./driver.js"
import type { MEvent } from "./model.js"
import { b, lmdbStore, tempDir } from "./helpers.js"

const withStore = <A, E>(dir: string, f: (st: MvccStoreShape) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(lmdbStore(dir)), (ctx) => f(Context.get(ctx, MvccStore))))

it.live("concurrent writers: one revision each, committed and announced in order", () => {
  const { dir, cleanup } = tempDir()
  const N = 96
  return Effect.gen(function* () {
    const final = yield* withStore(dir, (st) =>
      Effect.gen(function* () {
        const announced: Array<[number, ReadonlyArray<MEvent>]> = []
        const revs: Array<number> = []
        const invisible: Array<number> = []
        st.addCommitListener((rev, evs) => {
          // visible before the listener runs (a throw here would only be logged by the store)
          if (st.rev() !== rev) invisible.push(rev)
          announced.push([rev, evs.map(nEvent)])
        })
        const results = yield* Effect.forEach(
          Array.from({ length: N }, (_, i) => i),
          (i) =>
            i % 3 === 2
              ? Effect.map(
                  st.txn({
                    compare: [{ key: b(`k${i % 7}`), target: 0, result: 1, version: -1 }],
                    success: [{ _tag: "Put", request: { key: b(`t${i}`), value: b(String(i)) } }],
                    failure: []
                  }),
                  (r) => ({ i, key: `t${i}`, rev: r.header.revision })
                )
              : Effect.map(st.put({ key: b(`k${i % 7}`), value: b(String(i)) }), (r) => ({
                  i,
                  key: `k${i % 7}`,
                  rev: r.header.revision
                })),
          { concurrency: "unbounded" }
        )
        for (const r of results) revs.push(r.rev)
        expect(invisible).toEqual([])
        // every request got its own revision, 2..N+1
        expect([...revs].sort((x, y) => x - y)).toEqual(Array.from({ length: N }, (_, i) => i + 2))
        expect(announced.map(([r]) => r)).toEqual(Array.from({ length: N }, (_, i) => i + 2))
        for (const r of results) {
          const evs = announced[r.rev - 2]![1]
          expect(evs.map((e) => `${e.type} ${e.kv.key}=${e.kv.value}@${e.kv.mod}`)).toEqual([
            `PUT ${r.key}=${r.i}@${r.rev}`
          ])
        }
        expect(st.rev()).toBe(N + 1)
        // versions count the writes per key in revision order
        const all = yield* st.range({ key: b("\0"), rangeEnd: b("\0") })
        for (const kv of all.kvs.map(nkv)) {
          const writes = announced.filter(([, evs]) => evs[0]!.kv.key === kv.key)
          expect(kv.version).toBe(writes.length)
          expect(kv.mod).toBe(writes[writes.length - 1]![0])
          expect(kv.create).toBe(writes[0]![0])
        }
        return all.kvs.map(nkv)
      })
    )
    const restored = yield* withStore(dir, (st) =>
      Effect.map(st.range({ key: b("\0"), rangeEnd: b("\0") }), (r) => [st.rev(), r.kvs.map(nkv)] as const)
    )
    expect(restored).toEqual([N + 1, final])
  }).pipe(Effect.ensuring(Effect.sync(cleanup)))
})
