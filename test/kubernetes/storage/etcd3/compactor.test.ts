/**
 * The apiserver's compactor (etcd3/compact.go) on the TestClock, against our embedded server and
 * a real etcd 3.4: nothing before one interval, a first round that only writes compact_rev_key
 * (no compaction at bootstrap), then each interval a compaction at the revision seen one
 * interval before; two compactors on one etcd compact once per interval between them (the key's
 * version is their clock); an interval of 0 turns it off.
 */
import { it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import type { EtcdClientShape } from "../../../../src/client/index.js"
import { toText } from "../../../../src/client/key-value.js"
import { COMPACT_REV_KEY } from "../../../../src/kubernetes/storage/etcd3/compact.js"
import { type CompactState, runCompactor } from "../../../../src/kubernetes/storage/etcd3/compactor.js"
import { type InProcessServer, startInProcess } from "../../../server/support/in-process.js"
import { EtcdProcess, skipEtcd } from "../../../support/etcd.js"
import { clientFor } from "../conformance/support.js"

/** real time passes (I/O of the round the clock just started), the TestClock stays */
const settle = (check: () => Effect.Effect<boolean, unknown>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      if (yield* check()) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
    }
    throw new Error("not settled")
  })

const key = (client: EtcdClientShape) =>
  Effect.map(client.kv.get(COMPACT_REV_KEY), (r) => {
    const kv = r.kvs[0]
    return kv === undefined ? undefined : { version: kv.version, value: toText(kv.value) }
  })

/** a revision's reads fail once it is compacted away */
const readable = (client: EtcdClientShape, rev: bigint) =>
  Effect.map(Effect.either(client.kv.get("anything", { revision: rev })), (r) => r._tag === "Right")

const suite = (name: string, endpoint: () => string) =>
  describe(`compactor on ${name}`, () => {
    let a: Awaited<ReturnType<typeof clientFor>>
    let b: Awaited<ReturnType<typeof clientFor>>
    beforeAll(async () => {
      a = await clientFor([endpoint()])
      b = await clientFor([endpoint()])
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
    })

    it.scoped(
      "one compactor: nothing before an interval; bootstrap round; then a compaction every interval at the revision of the round before",
      () =>
        Effect.gen(function* () {
          const c = a.client
          const start = yield* key(c)
          const rounds: Array<CompactState> = []
          const fiber = yield* Effect.fork(runCompactor(c, "5 minutes", [], (s) => rounds.push(s)))
          yield* TestClock.adjust("4 minutes")
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
          expect(rounds).toEqual([])
          expect(yield* key(c)).toEqual(start)
          yield* TestClock.adjust("1 minute")
          yield* settle(() => Effect.succeed(rounds.length === 1))
          // another run of this suite may have moved the key's version: this compactor syncs first
          const first = rounds[0]!
          for (const c2 of [c.kv.put("filler", "1"), c.kv.put("filler", "2")]) yield* c2
          yield* TestClock.adjust("5 minutes")
          yield* settle(() => Effect.succeed(rounds.length === 2))
          yield* TestClock.adjust("5 minutes")
          yield* settle(() => Effect.succeed(rounds.length === 3))
          const compacting = rounds.filter((r) => r.compacted > 0n)
          expect(compacting.length).toBeGreaterThanOrEqual(1)
          // the last compaction was at the revision of the round before it; older revisions are gone
          const last = rounds[rounds.length - 1]!
          expect(last.compacted).toBe(rounds[rounds.length - 2]!.rev)
          expect(yield* readable(c, last.compacted - 1n)).toBe(false)
          expect(yield* readable(c, last.compacted)).toBe(true)
          expect(yield* key(c)).toEqual({ version: last.version, value: rounds[rounds.length - 2]!.rev.toString() })
          expect(first.version).toBeGreaterThan(0n)
          yield* Fiber.interrupt(fiber)
        })
    )

    it.scoped("two compactors on one etcd: one compaction per interval between them", () =>
      Effect.gen(function* () {
        const rounds: Array<[string, CompactState]> = []
        const initial = yield* key(a.client)
        const before = initial?.version ?? 0n
        const f1 = yield* Effect.fork(runCompactor(a.client, "5 minutes", [], (s) => rounds.push(["a", s])))
        const f2 = yield* Effect.fork(runCompactor(b.client, "5 minutes", [], (s) => rounds.push(["b", s])))
        for (let i = 1; i <= 4; i++) {
          yield* a.client.kv.put("filler", String(i))
          yield* TestClock.adjust("5 minutes")
          yield* settle(() => Effect.succeed(rounds.length === 2 * i))
        }
        // the first interval both learn the key's version (on a fresh key one of them wins the
        // bootstrap round, which compacts nothing); from then on exactly one txn per interval
        // succeeds, and it compacts
        const wins = (yield* key(a.client))!.version - before
        expect(wins).toBe(before === 0n ? 4n : 3n)
        // (a round that lost reports the compaction it learned from the key: the earlier one too)
        const compactions = new Set(
          rounds
            .filter(([, s]) => s.compacted > 0n && s.compacted.toString() !== initial?.value)
            .map(([, s]) => s.compacted)
        )
        expect(compactions.size).toBe(3)
        yield* Fiber.interrupt(f1)
        yield* Fiber.interrupt(f2)
      })
    )

    it.scoped("an interval of 0 turns it off", () =>
      Effect.gen(function* () {
        const start = yield* key(a.client)
        const rounds: Array<CompactState> = []
        const fiber = yield* Effect.fork(runCompactor(a.client, 0, [], (s) => rounds.push(s)))
        yield* TestClock.adjust("1 hour")
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
        expect(rounds).toEqual([])
        expect(yield* key(a.client)).toEqual(start)
        yield* Fiber.interrupt(fiber)
      })
    )
  })

let embedded: InProcessServer
beforeAll(async () => {
  embedded = await startInProcess()
})
afterAll(async () => {
  await embedded?.close()
})
suite("the embedded etcd-effect server", () => embedded.endpoint)

describe.skipIf(skipEtcd)("", () => {
  let etcd: EtcdProcess
  beforeAll(async () => {
    etcd = await EtcdProcess.start()
  })
  afterAll(async () => {
    await etcd?.dispose()
  })
  suite("etcd 3.4", () => etcd.endpoint)
})
