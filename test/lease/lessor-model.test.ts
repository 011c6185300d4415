/**
 * Random grant / attach-put / delete / revoke / renew / advance-time sequences against a simple
 * model of which keys exist (with which lease) and which leases live, under TestClock.
 *
 * Model of expiry: the expiry fiber checks at every multiple of its interval (etcd's 500 ms, or a
 * longer one so that "expired but not yet checked" windows are common; the layer starts at t = 0)
 * and revokes every lease whose expiry is <= that check's time. Between checks an expired
 * lease still exists: puts may attach to it, and a renew revokes it and answers "not found".
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck, TestClock } from "effect"
import { Lessor } from "../../src/lease/lessor.js"
import { EventType } from "../../src/mvcc/key-value.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { b, liveKeys, memoryEnv, recordCommits, str } from "./helpers.js"

const MIN_TTL = 2

type Op =
  | { readonly op: "grant"; readonly id: number; readonly ttl: number }
  | { readonly op: "put"; readonly key: string; readonly lease: number }
  | { readonly op: "del"; readonly key: string }
  | { readonly op: "revoke"; readonly id: number }
  | { readonly op: "renew"; readonly id: number }
  | { readonly op: "keepAlive"; readonly id: number }
  | { readonly op: "advance"; readonly ms: number }

const id = FastCheck.integer({ min: 1, max: 3 })
const key = FastCheck.constantFrom("a", "b", "c", "d", "e", "f")
const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("grant" as const),
      id,
      ttl: FastCheck.integer({ min: 0, max: 6 })
    }),
    weight: 3
  },
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("put" as const),
      key,
      lease: FastCheck.integer({ min: 0, max: 4 })
    }),
    weight: 4
  },
  { arbitrary: FastCheck.record({ op: FastCheck.constant("del" as const), key }), weight: 1 },
  { arbitrary: FastCheck.record({ op: FastCheck.constant("revoke" as const), id }), weight: 1 },
  { arbitrary: FastCheck.record({ op: FastCheck.constant("renew" as const), id }), weight: 2 },
  { arbitrary: FastCheck.record({ op: FastCheck.constant("keepAlive" as const), id }), weight: 2 },
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("advance" as const),
      ms: FastCheck.constantFrom(1, 250, 499, 500, 1000, 1700, 2001, 2250, 3000)
    }),
    weight: 3
  }
)

class Model {
  constructor(readonly checkMs: number) {}
  now = 0
  readonly leases = new Map<bigint, { ttl: number; expiry: number }>()
  readonly keys = new Map<string, bigint>()

  /** Revokes a lease; returns the keys it deleted, sorted. */
  revoke(id: bigint): Array<string> {
    this.leases.delete(id)
    const gone = [...this.keys]
      .filter(([, l]) => l === id)
      .map(([k]) => k)
      .sort()
    for (const k of gone) this.keys.delete(k)
    return gone
  }

  /** Advances time; returns, per expiry check, the keys of each lease revoked there. */
  advance(ms: number): Array<Array<string>> {
    const end = this.now + ms
    const revoked: Array<Array<string>> = []
    for (let t = (Math.floor(this.now / this.checkMs) + 1) * this.checkMs; t <= end; t += this.checkMs) {
      const due = [...this.leases].filter(([, l]) => l.expiry <= t).map(([id]) => id)
      for (const id of due) revoked.push(this.revoke(id))
    }
    this.now = end
    return revoked
  }
}

const code = (exit: Exit.Exit<unknown, { readonly message: string }>): string | undefined =>
  Exit.isSuccess(exit)
    ? undefined
    : exit.cause._tag === "Fail"
      ? exit.cause.error.message
      : `defect: ${exit.cause._tag}`

const NOT_FOUND = "etcdserver: requested lease not found"
const EXISTS = "etcdserver: lease already exists"

describe("Lessor vs model", () => {
  it.effect.prop(
    "random lease/key/time sequences keep keys and leases as the model says",
    [FastCheck.array(opArb, { minLength: 1, maxLength: 30 }), FastCheck.constantFrom(500, 1500)],
    ([ops, checkMs]) =>
      Effect.gen(function* () {
        const lessor = yield* Lessor
        const store = yield* MvccStore
        const commits = yield* recordCommits
        const m = new Model(checkMs)
        for (const o of ops) {
          const seen = commits.length
          switch (o.op) {
            case "grant": {
              const exit = yield* Effect.exit(lessor.grant({ id: BigInt(o.id), ttl: o.ttl }))
              if (m.leases.has(BigInt(o.id))) expect(code(exit)).toBe(EXISTS)
              else {
                const ttl = Math.max(o.ttl, MIN_TTL)
                expect(exit).toEqual(Exit.succeed({ header: { revision: store.rev() }, id: BigInt(o.id), ttl }))
                m.leases.set(BigInt(o.id), { ttl, expiry: m.now + ttl * 1000 })
              }
              break
            }
            case "put": {
              const lease = BigInt(o.lease)
              const exit = yield* Effect.exit(store.put({ key: b(o.key), value: b("v"), lease }))
              if (lease !== 0n && !m.leases.has(lease)) expect(code(exit)).toBe(NOT_FOUND)
              else {
                expect(code(exit)).toBeUndefined()
                m.keys.set(o.key, lease)
              }
              break
            }
            case "del": {
              yield* store.deleteRange({ key: b(o.key) })
              m.keys.delete(o.key)
              break
            }
            case "revoke": {
              const exit = yield* Effect.exit(lessor.revoke(BigInt(o.id)))
              if (!m.leases.has(BigInt(o.id))) {
                expect(code(exit)).toBe(NOT_FOUND)
                expect(commits.length).toBe(seen)
              } else {
                expect(code(exit)).toBeUndefined()
                const gone = m.revoke(BigInt(o.id))
                // one revision with every attached key, in key order (none when it had no keys)
                const fresh = commits.slice(seen)
                expect(fresh.map((c) => c.events.map((e) => `${e.type}:${str(e.kv.key)}`))).toEqual(
                  gone.length === 0 ? [] : [gone.map((k) => `${EventType.DELETE}:${k}`)]
                )
              }
              break
            }
            case "renew":
            case "keepAlive": {
              const lid = BigInt(o.id)
              const l = m.leases.get(lid)
              const exit = yield* Effect.exit(o.op === "renew" ? lessor.renew(lid) : lessor.keepAlive(lid))
              const alive = l !== undefined && l.expiry > m.now
              if (l !== undefined && !alive) m.revoke(lid) // expired, not yet checked: revoked now
              if (alive) {
                expect(exit).toEqual(Exit.succeed(expect.objectContaining({ id: lid, ttl: l.ttl })))
                l.expiry = m.now + l.ttl * 1000
              } else if (o.op === "renew") expect(code(exit)).toBe(NOT_FOUND)
              else expect(exit).toEqual(Exit.succeed(expect.objectContaining({ id: lid, ttl: 0 })))
              break
            }
            case "advance": {
              const revoked = m.advance(o.ms)
              yield* TestClock.adjust(o.ms)
              // one DELETE revision per revoked lease that had keys, each in key order
              const expected = revoked
                .filter((ks) => ks.length > 0)
                .map((ks) => ks.map((k) => `${EventType.DELETE}:${k}`))
              const fresh = commits.slice(seen).map((c) => c.events.map((e) => `${e.type}:${str(e.kv.key)}`))
              expect(fresh.sort()).toEqual(expected.sort())
              break
            }
          }
          // the whole observable state after every step
          expect(Object.fromEntries(yield* liveKeys)).toEqual(Object.fromEntries(m.keys))
          const listed = (yield* lessor.leases).leases.map((l) => l.id).sort()
          expect(listed).toEqual([...m.leases.keys()].sort())
          for (const [lid, l] of m.leases) {
            const ttl = yield* lessor.timeToLive({ id: lid, keys: true })
            expect(ttl.ttl).toBe(Math.max(0, Math.trunc((l.expiry - m.now) / 1000)))
            expect(ttl.grantedTTL).toBe(l.ttl)
            expect(ttl.keys.map(str)).toEqual(
              [...m.keys]
                .filter(([, x]) => x === lid)
                .map(([k]) => k)
                .sort()
            )
          }
        }
      }).pipe(Effect.provide(memoryEnv({ expiryCheckInterval: checkMs }))),
    {
      fastCheck: {
        numRuns: 150,
        // always-run regression: renew/keep-alive of a lease past expiry that no check has seen yet
        examples: [
          [
            [
              { op: "advance", ms: 1 },
              { op: "grant", id: 1, ttl: 0 },
              { op: "put", key: "a", lease: 1 },
              { op: "advance", ms: 2001 },
              { op: "renew", id: 1 }
            ],
            1500
          ],
          [
            [
              { op: "grant", id: 2, ttl: 2 },
              { op: "advance", ms: 2250 },
              { op: "keepAlive", id: 2 },
              { op: "grant", id: 2, ttl: 3 }
            ],
            1500
          ]
        ]
      }
    }
  )
})
