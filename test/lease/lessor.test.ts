import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, TestClock } from "effect"
import { Backend } from "../../src/backend/backend.js"
import { layerMemory } from "../../src/backend/memory.js"
import { EtcdError, GrpcCode } from "../../src/errors.js"
import { leaseIdToBytes } from "../../src/lease/lease-id.js"
import { decodeLeaseRecord, encodeLeaseRecord } from "../../src/lease/leasepb.js"
import { layerWith, Lessor, MaxLeaseTTL, minLeaseTTLFor } from "../../src/lease/lessor.js"
import { EventType } from "../../src/mvcc/key-value.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layer as kvLayer, layerConfig } from "../../src/mvcc/kvstore.js"
import { b, eventually, liveKeys, lmdbEnv, memoryEnv, recordCommits, str, tempDir } from "./helpers.js"

const notFound = new EtcdError({ code: GrpcCode.NotFound, message: "etcdserver: requested lease not found" })
const exists = new EtcdError({ code: GrpcCode.FailedPrecondition, message: "etcdserver: lease already exists" })
const tooLarge = new EtcdError({ code: GrpcCode.OutOfRange, message: "etcdserver: too large lease TTL" })

const failure = <A>(exit: Exit.Exit<A, EtcdError>) => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${String(exit.value)}`)
  const e = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (e === undefined) throw new Error(`expected a typed failure, got ${exit.cause._tag}`)
  return { code: e.code, message: e.message }
}
const errOf = (e: EtcdError) => ({ code: e.code, message: e.message })

describe("Lessor", () => {
  it("derives etcd's minimum TTL from the election timeout", () => {
    expect(minLeaseTTLFor(1000, 100)).toBe(2) // etcd defaults: ceil(15 × 100 ms)
    expect(minLeaseTTLFor(5000, 500)).toBe(8) // ceil(15 × 500 ms = 7.5 s)
    expect(minLeaseTTLFor(3000, 100)).toBe(5) // ceil(45 × 100 ms = 4.5 s)
  })

  it.effect("grant: auto and given ids, minimum TTL, exact errors", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const backend = yield* Backend
      const a = yield* lessor.grant({ ttl: 10 })
      expect(a.id > 0n).toBe(true)
      expect(a.ttl).toBe(10)
      const given = yield* lessor.grant({ id: 42n, ttl: 1 })
      expect(given).toMatchObject({ id: 42n, ttl: 2 })
      expect(failure(yield* Effect.exit(lessor.grant({ id: 42n, ttl: 5 })))).toEqual(errOf(exists))
      expect(failure(yield* Effect.exit(lessor.grant({ ttl: MaxLeaseTTL + 1 })))).toEqual(errOf(tooLarge))
      expect((yield* lessor.grant({ id: 7n, ttl: MaxLeaseTTL })).ttl).toBe(MaxLeaseTTL)
      // the record is persisted as etcd's leasepb.Lease with the raised TTL
      expect(decodeLeaseRecord(backend.get("lease", leaseIdToBytes(42n))!)).toEqual({
        id: 42n,
        ttl: 2,
        remainingTTL: 0
      })
      // auto ids: positive, distinct, never an id already granted
      const ids = new Set<bigint>([a.id, 42n, 7n])
      for (let i = 0; i < 200; i++) {
        const g = yield* lessor.grant({ ttl: 60 })
        expect(g.id > 0n && g.id < 1n << 63n).toBe(true)
        expect(ids.has(g.id)).toBe(false)
        ids.add(g.id)
      }
      expect((yield* lessor.leases).leases.length).toBe(203)
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("put with an unknown lease fails; revoke and renew of unknown leases fail", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      expect(failure(yield* Effect.exit(store.put({ key: b("k"), value: b("v"), lease: 99n })))).toEqual(
        errOf(notFound)
      )
      expect(failure(yield* Effect.exit(lessor.revoke(99n)))).toEqual(errOf(notFound))
      expect(failure(yield* Effect.exit(lessor.renew(99n)))).toEqual(errOf(notFound))
      // the keep-alive stream answers TTL 0 instead of failing
      expect(yield* lessor.keepAlive(99n)).toMatchObject({ id: 99n, ttl: 0 })
      // TimeToLive answers TTL -1
      expect(yield* lessor.timeToLive({ id: 99n, keys: true })).toMatchObject({
        id: 99n,
        ttl: -1,
        grantedTTL: 0,
        keys: []
      })
      const { id } = yield* lessor.grant({ ttl: 5 })
      yield* store.put({ key: b("k"), value: b("v"), lease: id })
      yield* lessor.revoke(id)
      expect(failure(yield* Effect.exit(lessor.revoke(id)))).toEqual(errOf(notFound))
      expect(failure(yield* Effect.exit(store.put({ key: b("k2"), value: b("v"), lease: id })))).toEqual(
        errOf(notFound)
      )
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("revoke deletes every attached key in ONE revision, in key order, with the lease record", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      const backend = yield* Backend
      const commits = yield* recordCommits
      const { id } = yield* lessor.grant({ id: 5n, ttl: 30 })
      const other = yield* lessor.grant({ id: 6n, ttl: 30 })
      for (const k of ["c", "a", "e", "b"]) yield* store.put({ key: b(k), value: b(k), lease: id })
      yield* store.put({ key: b("d"), value: b("plain") })
      yield* store.put({ key: b("f"), value: b("other"), lease: other.id })
      // "e" moves to no lease: it must survive the revoke
      yield* store.put({ key: b("e"), value: b("e2") })
      const before = store.rev()
      const ttl = yield* lessor.timeToLive({ id, keys: true })
      expect(ttl.keys.map(str)).toEqual(["a", "b", "c"])

      const resp = yield* lessor.revoke(id)
      expect(resp.header.revision).toBe(before + 1)
      expect(store.rev()).toBe(before + 1)
      const last = commits[commits.length - 1]!
      expect(last.rev).toBe(before + 1)
      expect(last.events.map((e) => [e.type, str(e.kv.key), e.kv.modRevision])).toEqual([
        [EventType.DELETE, "a", before + 1],
        [EventType.DELETE, "b", before + 1],
        [EventType.DELETE, "c", before + 1]
      ])
      expect(commits.filter((c) => c.rev > before).length).toBe(1)
      expect([...(yield* liveKeys).entries()]).toEqual([
        ["d", 0n],
        ["e", 0n],
        ["f", 6n]
      ])
      expect(backend.get("lease", leaseIdToBytes(id))).toBeUndefined()
      expect(backend.get("lease", leaseIdToBytes(6n))).toBeDefined()
      expect((yield* lessor.leases).leases).toEqual([{ id: 6n }])

      // a lease with no keys: no new revision, record still deleted
      yield* lessor.grant({ id: 8n, ttl: 30 })
      const r = yield* lessor.revoke(8n)
      expect(r.header.revision).toBe(before + 1)
      expect(store.rev()).toBe(before + 1)
      expect(backend.get("lease", leaseIdToBytes(8n))).toBeUndefined()
      // the id can be granted again afterwards
      expect((yield* lessor.grant({ id: 8n, ttl: 3 })).ttl).toBe(3)
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("keys deleted or overwritten by others are detached from their lease", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      yield* lessor.grant({ id: 1n, ttl: 30 })
      yield* lessor.grant({ id: 2n, ttl: 30 })
      for (const k of ["a", "b", "c", "d"]) yield* store.put({ key: b(k), value: b(k), lease: 1n })
      yield* store.deleteRange({ key: b("a") })
      yield* store.put({ key: b("b"), value: b("x"), lease: 2n })
      yield* store.txn({
        compare: [],
        success: [
          { _tag: "Put", request: { key: b("z"), value: b("z"), lease: 1n } },
          { _tag: "DeleteRange", request: { key: b("c") } }
        ],
        failure: []
      })
      expect((yield* lessor.timeToLive({ id: 1n, keys: true })).keys.map(str)).toEqual(["d", "z"])
      expect((yield* lessor.timeToLive({ id: 2n, keys: true })).keys.map(str)).toEqual(["b"])
      yield* lessor.revoke(1n)
      expect([...(yield* liveKeys).keys()]).toEqual(["b"])
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("TimeToLive and Leases report granted and remaining TTLs; renew answers the granted TTL", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      yield* lessor.grant({ id: 1n, ttl: 10 })
      yield* lessor.grant({ id: 2n, ttl: 4 })
      yield* lessor.grant({ id: 3n, ttl: 7 })
      yield* store.put({ key: b("k"), value: b("v"), lease: 1n })
      yield* TestClock.adjust("2500 millis")
      expect(yield* lessor.timeToLive({ id: 1n })).toMatchObject({ id: 1n, ttl: 7, grantedTTL: 10, keys: [] })
      expect((yield* lessor.timeToLive({ id: 1n, keys: true })).keys.map(str)).toEqual(["k"])
      expect((yield* lessor.timeToLive({ id: 2n })).ttl).toBe(1)
      expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([2n, 3n, 1n])
      const r = yield* lessor.renew(1n)
      expect(r).toMatchObject({ id: 1n, ttl: 10 })
      expect(r.header.revision).toBe(store.rev())
      expect((yield* lessor.timeToLive({ id: 1n })).ttl).toBe(10)
      expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([2n, 3n, 1n])
      yield* TestClock.adjust("1 second")
      // t = 3.5 s: lease 2 renewed to 7.5 s now expires after lease 3 (7 s)
      expect((yield* lessor.keepAlive(2n)).ttl).toBe(4)
      expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([3n, 2n, 1n])
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("expiry: the expiry fiber revokes an expired lease and its keys go in one DELETE revision", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      const commits = yield* recordCommits
      yield* lessor.grant({ id: 1n, ttl: 5 })
      yield* lessor.grant({ id: 2n, ttl: 60 })
      for (const k of ["x", "m", "a"]) yield* store.put({ key: b(k), value: b(k), lease: 1n })
      yield* store.put({ key: b("keep"), value: b("v"), lease: 2n })
      const before = store.rev()
      yield* TestClock.adjust("4999 millis")
      expect((yield* liveKeys).size).toBe(4)
      expect((yield* lessor.timeToLive({ id: 1n })).ttl).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect([...(yield* liveKeys).keys()]).toEqual(["keep"])
      expect(store.rev()).toBe(before + 1)
      expect(commits.at(-1)!.events.map((e) => [e.type, str(e.kv.key)])).toEqual([
        [EventType.DELETE, "a"],
        [EventType.DELETE, "m"],
        [EventType.DELETE, "x"]
      ])
      expect((yield* lessor.timeToLive({ id: 1n })).ttl).toBe(-1)
      expect((yield* lessor.leases).leases).toEqual([{ id: 2n }])
      expect(yield* lessor.keepAlive(1n)).toMatchObject({ ttl: 0 })
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("the expiry fiber checks every 500 ms: a lease expiring between checks goes at the next one", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      yield* TestClock.adjust("200 millis")
      yield* lessor.grant({ id: 1n, ttl: 3 }) // expires at 3.2 s; checks at 3.0 s and 3.5 s
      yield* store.put({ key: b("k"), value: b("v"), lease: 1n })
      yield* TestClock.adjust("3299 millis") // t = 3.499 s
      expect((yield* liveKeys).size).toBe(1)
      yield* TestClock.adjust("1 millis") // t = 3.5 s
      expect((yield* liveKeys).size).toBe(0)
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("keepalive extends expiry", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      yield* lessor.grant({ id: 1n, ttl: 5 })
      yield* store.put({ key: b("k"), value: b("v"), lease: 1n })
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("4 seconds")
        expect(yield* lessor.keepAlive(1n)).toMatchObject({ id: 1n, ttl: 5 })
      }
      // 20 s in, well past the first expiry: still alive with its key
      expect((yield* liveKeys).size).toBe(1)
      yield* TestClock.adjust("4500 millis")
      expect((yield* lessor.timeToLive({ id: 1n })).ttl).toBe(0)
      expect((yield* liveKeys).size).toBe(1)
      yield* TestClock.adjust("500 millis")
      expect((yield* liveKeys).size).toBe(0)
      expect(yield* lessor.keepAlive(1n)).toMatchObject({ ttl: 0 })
    }).pipe(Effect.provide(memoryEnv()))
  )

  it.effect("renewing a lease that expired before the expiry fiber saw it revokes it and answers not found", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      const commits = yield* recordCommits
      yield* lessor.grant({ id: 1n, ttl: 2 })
      yield* lessor.grant({ id: 2n, ttl: 2 })
      yield* store.put({ key: b("k1"), value: b("v"), lease: 1n })
      yield* store.put({ key: b("k2"), value: b("v"), lease: 2n })
      yield* TestClock.adjust("3 seconds")
      // expired but not yet revoked: still listed, and a put may still attach to it (as in etcd)
      expect((yield* lessor.leases).leases.length).toBe(2)
      yield* store.put({ key: b("k3"), value: b("v"), lease: 1n })
      const before = store.rev()
      expect(failure(yield* Effect.exit(lessor.renew(1n)))).toEqual(errOf(notFound))
      expect(store.rev()).toBe(before + 1)
      expect(commits.at(-1)!.events.map((e) => str(e.kv.key))).toEqual(["k1", "k3"])
      expect(yield* lessor.keepAlive(2n)).toMatchObject({ id: 2n, ttl: 0 })
      expect((yield* liveKeys).size).toBe(0)
      expect((yield* lessor.leases).leases).toEqual([])
    }).pipe(Effect.provide(memoryEnv({ expiryCheckInterval: "1 hour" })))
  )

  it.effect("many expiring leases: at most revokeRate/2 revoked per check, one revision each", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      for (let i = 1; i <= 25; i++) {
        yield* lessor.grant({ id: BigInt(i), ttl: 2 })
        yield* store.put({ key: b(`k${String(i).padStart(2, "0")}`), value: b("v"), lease: BigInt(i) })
      }
      const before = store.rev()
      yield* TestClock.adjust("2 seconds")
      expect(store.rev()).toBe(before + 10)
      yield* TestClock.adjust("500 millis")
      expect(store.rev()).toBe(before + 20)
      yield* TestClock.adjust("500 millis")
      expect(store.rev()).toBe(before + 25)
      expect((yield* liveKeys).size).toBe(0)
    }).pipe(Effect.provide(memoryEnv({ revokeRate: 20 })))
  )

  it.effect("concurrent revoke, renew and grant of one id: the keys go once, the new lease survives", () =>
    Effect.gen(function* () {
      const lessor = yield* Lessor
      const store = yield* MvccStore
      const backend = yield* Backend
      const commits = yield* recordCommits
      yield* lessor.grant({ id: 9n, ttl: 30 })
      for (const k of ["a", "b"]) yield* store.put({ key: b(k), value: b(k), lease: 9n })
      const before = store.rev()
      const results = yield* Effect.all(
        [
          Effect.exit(lessor.revoke(9n)),
          Effect.exit(lessor.revoke(9n)),
          Effect.exit(lessor.renew(9n)),
          Effect.exit(lessor.grant({ id: 9n, ttl: 40 }))
        ],
        { concurrency: "unbounded" }
      )
      expect(results.filter(Exit.isSuccess).length).toBeGreaterThanOrEqual(1)
      expect(commits.filter((c) => c.rev > before).length).toBe(1)
      expect((yield* liveKeys).size).toBe(0)
      const live = yield* lessor.timeToLive({ id: 9n })
      const record = backend.get("lease", leaseIdToBytes(9n))
      // whatever the interleaving: memory and disk agree on whether lease 9 exists
      expect(live.ttl === -1).toBe(record === undefined)
    }).pipe(Effect.provide(memoryEnv()))
  )
})

describe("Lessor on LMDB", () => {
  it.effect("restart: leases and attachments survive, expiry is refreshed (TTL + election timeout)", () => {
    const { dir, cleanup } = tempDir()
    return Effect.gen(function* () {
      // first life
      yield* Effect.gen(function* () {
        const lessor = yield* Lessor
        const store = yield* MvccStore
        yield* lessor.grant({ id: 1n, ttl: 10 })
        yield* lessor.grant({ id: 2n, ttl: 100 })
        yield* lessor.grant({ id: 3n, ttl: 30 })
        yield* lessor.grant({ id: 4n, ttl: 2 })
        yield* store.put({ key: b("c"), value: b("1"), lease: 1n })
        yield* store.put({ key: b("a"), value: b("1"), lease: 1n })
        yield* store.put({ key: b("b"), value: b("3"), lease: 3n })
        yield* store.put({ key: b("z"), value: b("4"), lease: 4n })
        yield* store.put({ key: b("plain"), value: b("p") })
        yield* lessor.revoke(3n)
        yield* TestClock.adjust("6 seconds") // lease 4 expires at 2 s
        yield* eventually(Effect.map(liveKeys, (m) => !m.has("z")))
        expect((yield* lessor.timeToLive({ id: 1n })).ttl).toBe(4)
      }).pipe(Effect.provide(lmdbEnv(dir)))

      // down for a long time: far past every expiry
      yield* TestClock.adjust("100 seconds")

      // second life
      yield* Effect.gen(function* () {
        const lessor = yield* Lessor
        const store = yield* MvccStore
        expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([1n, 2n])
        expect(yield* lessor.timeToLive({ id: 1n, keys: true })).toMatchObject({ ttl: 11, grantedTTL: 10 })
        expect((yield* lessor.timeToLive({ id: 1n, keys: true })).keys.map(str)).toEqual(["a", "c"])
        expect((yield* lessor.timeToLive({ id: 2n })).ttl).toBe(101)
        expect([...(yield* liveKeys).entries()]).toEqual([
          ["a", 1n],
          ["c", 1n],
          ["plain", 0n]
        ])
        expect(failure(yield* Effect.exit(store.put({ key: b("b"), value: b("x"), lease: 3n })))).toEqual(
          errOf(notFound)
        )
        expect(failure(yield* Effect.exit(store.put({ key: b("z"), value: b("x"), lease: 4n })))).toEqual(
          errOf(notFound)
        )
        const commits = yield* recordCommits
        const before = store.rev()
        yield* TestClock.adjust("10999 millis")
        expect((yield* liveKeys).size).toBe(3)
        yield* TestClock.adjust("1 millis")
        yield* eventually(Effect.map(liveKeys, (m) => m.size === 1))
        expect(store.rev()).toBe(before + 1)
        expect(commits.map((c) => c.events.map((e) => [e.type, str(e.kv.key)]))).toEqual([
          [
            [EventType.DELETE, "a"],
            [EventType.DELETE, "c"]
          ]
        ])
      }).pipe(Effect.provide(lmdbEnv(dir)))

      // third life: the expiry revoke was durable
      yield* Effect.gen(function* () {
        const lessor = yield* Lessor
        expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([2n])
        expect([...(yield* liveKeys).keys()]).toEqual(["plain"])
      }).pipe(Effect.provide(lmdbEnv(dir)))
    }).pipe(Effect.ensuring(Effect.sync(cleanup)))
  })
})

describe("Lessor start-up", () => {
  const storeOnly = kvLayer.pipe(Layer.provide(layerConfig()), Layer.provideMerge(layerMemory))

  it.effect("rebuilt over the same store: records and attachments come back; a closed lessor detaches itself", () =>
    Effect.gen(function* () {
      const store = yield* MvccStore
      const backend = yield* Backend
      // a record written by an earlier run, with a TTL below the minimum
      yield* backend.write([
        { bucket: "lease", key: leaseIdToBytes(5n), value: encodeLeaseRecord({ id: 5n, ttl: 1, remainingTTL: 0 }) }
      ])
      yield* Effect.scoped(
        Effect.gen(function* () {
          const lessor = yield* Lessor
          expect(yield* lessor.timeToLive({ id: 5n })).toMatchObject({ ttl: 3, grantedTTL: 2 })
          yield* store.put({ key: b("k"), value: b("v"), lease: 5n })
          yield* lessor.grant({ id: 6n, ttl: 50 })
        }).pipe(Effect.provide(layerWith()))
      )
      // no lessor plugged in: any lease is unknown to the store
      expect(failure(yield* Effect.exit(store.put({ key: b("x"), value: b("v"), lease: 6n })))).toEqual(errOf(notFound))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const lessor = yield* Lessor
          expect((yield* lessor.leases).leases.map((l) => l.id)).toEqual([5n, 6n])
          expect((yield* lessor.timeToLive({ id: 5n, keys: true })).keys.map(str)).toEqual(["k"])
          yield* lessor.revoke(5n)
          expect((yield* liveKeys).size).toBe(0)
        }).pipe(Effect.provide(layerWith()))
      )
    }).pipe(Effect.provide(storeOnly))
  )

  it.effect("an unreadable lease record stops start-up with a clear message", () =>
    Effect.gen(function* () {
      const backend = yield* Backend
      yield* backend.write([{ bucket: "lease", key: leaseIdToBytes(3n), value: Uint8Array.from([0x08, 0x80]) }])
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(layerWith())))
      // a typed RecoveryError in the layer's error channel (issue 15), not a defect
      expect(Exit.isFailure(exit) && Cause.isFailType(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.squash(exit.cause)).toMatchObject({
          _tag: "RecoveryError",
          reason: "LeaseRecovery",
          message: "lease bucket: record 0000000000000003 is unreadable: truncated varint"
        })
      }
    }).pipe(Effect.provide(storeOnly))
  )
})
