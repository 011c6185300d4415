/**
 * Commit listeners and the lessor are scoped subscriptions of the store (not single slots): several
 * listeners each get every commit and leave with their scope; a listener that throws stops the
 * store (a watcher would otherwise miss an acknowledged revision); one lessor at a time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Scope } from "effect"
import { MvccStore } from "../../src/mvcc/kv.js"
import { FakeLessor } from "./driver.js"
import { b, memoryStore } from "./helpers.js"

describe("store subscriptions", () => {
  it.effect("every subscribed listener gets every commit; a closed scope unsubscribes", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const a: Array<number> = []
      const c: Array<number> = []
      const scopeA = yield* Scope.make()
      yield* Scope.extend(
        st.subscribeCommits((rev) => a.push(rev)),
        scopeA
      )
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* st.subscribeCommits((rev) => c.push(rev))
          yield* st.put({ key: b("k"), value: b("1") })
        })
      )
      yield* st.put({ key: b("k"), value: b("2") })
      yield* Scope.close(scopeA, Exit.void)
      yield* st.put({ key: b("k"), value: b("3") })
      expect(a).toEqual([2, 3])
      expect(c).toEqual([2])
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("a listener that throws stops the store: the write dies, later requests fail", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const seen: Array<number> = []
      st.addCommitListener(() => {
        throw new Error("listener bug")
      })
      st.addCommitListener((rev) => seen.push(rev))
      const exit = yield* Effect.exit(st.put({ key: b("k"), value: b("1") }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      // the other listener still saw the revision
      expect(seen).toEqual([2])
      const later = yield* Effect.flip(st.range({ key: b("k") }))
      expect(later.message).toBe("etcdserver: server stopped")
    }).pipe(Effect.provide(memoryStore()))
  )

  it.effect("one lessor at a time; after its scope closes another may attach", () =>
    Effect.gen(function* () {
      const st = yield* MvccStore
      const first = yield* Scope.make()
      yield* Scope.extend(
        st.attachLessor(() => ({ lessor: new FakeLessor(), value: undefined })),
        first
      )
      const second = yield* Effect.exit(
        Effect.scoped(st.attachLessor(() => ({ lessor: new FakeLessor(), value: undefined })))
      )
      expect(Exit.isFailure(second) && Cause.isDie(second.cause)).toBe(true)
      yield* Scope.close(first, Exit.void)
      const lessor = new FakeLessor()
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* st.attachLessor(() => ({ lessor, value: undefined }))
          yield* st.put({ key: b("k"), value: b("v"), lease: 1n })
          expect(lessor.snapshot()).toEqual({ k: "1" })
        })
      )
    }).pipe(Effect.provide(memoryStore()))
  )
})
