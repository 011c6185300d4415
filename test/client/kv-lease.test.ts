/**
 * KV and Lease against a real server: results as etcdctl sees them, etcd's exact errors, the
 * typed txn builder, and lease keep-alive across a broken connection and on loss.
 */
import { Effect, Exit, Fiber, Option, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import {
  Compare,
  EtcdClient,
  type EtcdClientShape,
  type EtcdError,
  LeaseLost,
  Op,
  toText
} from "../../src/client/index.js"
import { GrpcCode } from "../../src/errors.js"
import { etcdctlAvailable, ETCDCTL_BIN, runCommand } from "../support/etcd.js"
import { serverTargets } from "../support/servers.js"
import { provideClient, scopedClient, useProxiedServer } from "./helpers.js"

describe.each(serverTargets.filter((t) => t.enabled))("kv and lease ($name)", (target) => {
  const env = useProxiedServer(target)

  const run = <A, E>(f: (c: EtcdClientShape) => Effect.Effect<A, E>) =>
    Effect.runPromise(Effect.flatMap(EtcdClient, f).pipe(provideClient(env.server.endpoint)))
  const fail = <A>(f: (c: EtcdClientShape) => Effect.Effect<A, EtcdError>) =>
    Effect.runPromise(Effect.flatMap(EtcdClient, f).pipe(Effect.flip, provideClient(env.server.endpoint)))

  it.skipIf(!etcdctlAvailable)("put and get agree with etcdctl", async () => {
    const put = await run((c) => c.kv.put("/kv/a", "hello"))
    const ctl = await runCommand(ETCDCTL_BIN, ["--endpoints", env.server.endpoint, "get", "/kv/a", "-w", "json"])
    const json = JSON.parse(ctl.stdout)
    const got = await run((c) => c.kv.get("/kv/a"))
    expect(got.kvs).toHaveLength(1)
    expect(toText(got.kvs[0]!.value)).toBe("hello")
    expect(got.kvs[0]!.modRevision).toBe(put.header.revision)
    expect(BigInt(json.kvs[0].mod_revision)).toBe(got.kvs[0]!.modRevision)
    expect(BigInt(json.kvs[0].create_revision)).toBe(got.kvs[0]!.createRevision)
    expect(BigInt(json.kvs[0].version)).toBe(got.kvs[0]!.version)
    // All 64 bits of the ids survive (etcdctl prints them as bare JSON numbers: read the digits).
    const raw = (field: string) => BigInt(new RegExp(`"${field}":(\\d+)`).exec(ctl.stdout)![1]!)
    expect(raw("member_id")).toBe(got.header.memberId)
    expect(raw("cluster_id")).toBe(got.header.clusterId)
  })

  it("reads ranges with prefix, from-key, limit, keys-only, count-only, revision and sort", async () => {
    const r = await run((c) =>
      Effect.gen(function* () {
        const first = yield* c.kv.put("/rng/a", "1")
        yield* c.kv.put("/rng/b", "2")
        yield* c.kv.put("/rng/c", "3")
        yield* c.kv.put("/rng/a", "4")
        return {
          prefix: yield* c.kv.get("/rng/", { prefix: true }),
          fromKey: yield* c.kv.get("/rng/b", { fromKey: true }),
          limited: yield* c.kv.get("/rng/", { prefix: true, limit: 2 }),
          keysOnly: yield* c.kv.get("/rng/", { prefix: true, keysOnly: true }),
          count: yield* c.kv.get("/rng/", { prefix: true, countOnly: true }),
          old: yield* c.kv.get("/rng/a", { revision: first.header.revision }),
          sorted: yield* c.kv.get("/rng/", { prefix: true, sort: { target: "VALUE", order: "DESCEND" } })
        }
      })
    )
    const ks = (res: { kvs: ReadonlyArray<{ key: Uint8Array }> }) => res.kvs.map((kv) => toText(kv.key))
    expect(ks(r.prefix)).toEqual(["/rng/a", "/rng/b", "/rng/c"])
    expect(ks(r.fromKey).slice(0, 2)).toEqual(["/rng/b", "/rng/c"])
    expect(ks(r.limited)).toEqual(["/rng/a", "/rng/b"])
    expect(r.limited.more).toBe(true)
    expect(r.limited.count).toBe(3n)
    expect(r.keysOnly.kvs.every((kv) => kv.value.length === 0)).toBe(true)
    expect(r.count.kvs).toEqual([])
    expect(r.count.count).toBe(3n)
    expect(toText(r.old.kvs[0]!.value)).toBe("1")
    expect(r.sorted.kvs.map((kv) => toText(kv.value))).toEqual(["4", "3", "2"])
  })

  it("deletes with previous values and counts", async () => {
    const r = await run((c) =>
      Effect.gen(function* () {
        yield* c.kv.put("/del/a", "1")
        yield* c.kv.put("/del/b", "2")
        return yield* c.kv.delete("/del/", { prefix: true, prevKv: true })
      })
    )
    expect(r.deleted).toBe(2n)
    expect(r.prevKvs.map((kv) => `${toText(kv.key)}=${toText(kv.value)}`)).toEqual(["/del/a=1", "/del/b=2"])
  })

  it("runs transactions with typed results for the branch taken", async () => {
    const r = await run((c) =>
      Effect.gen(function* () {
        yield* c.kv.put("/txn/k", "v1")
        const ok = yield* c.kv
          .txn()
          .when(Compare.value("/txn/k").equals("v1"), Compare.version("/txn/k").greater(0))
          .success(Op.put("/txn/k", "v2", { prevKv: true }), Op.get("/txn/k"))
          .failure(Op.delete("/txn/k")).commit
        const no = yield* c.kv
          .txn()
          .when(Compare.modRevision("/txn/k").less(1))
          .success(Op.put("/txn/k", "never"))
          .failure(Op.get("/txn/k"), Op.txn([], [Op.get("/txn/missing")], [])).commit
        return { ok, no }
      })
    )
    expect(r.ok.succeeded).toBe(true)
    if (r.ok.succeeded) {
      const [put, get] = r.ok.responses
      expect(toText(put.prevKv!.value)).toBe("v1")
      expect(toText(get.kvs[0]!.value)).toBe("v2")
    }
    expect(r.no.succeeded).toBe(false)
    if (!r.no.succeeded) {
      const [get, nested] = r.no.responses
      expect(toText(get.kvs[0]!.value)).toBe("v2")
      expect(nested.succeeded).toBe(true)
    }
  })

  it("fails with etcd's exact errors and gRPC codes", async () => {
    const empty = await fail((c) => c.kv.put("", "x"))
    expect([empty.code, empty.message]).toEqual([GrpcCode.InvalidArgument, "etcdserver: key is not provided"])
    const dup = await fail((c) => c.kv.txn().success(Op.put("/e/a", "1"), Op.put("/e/a", "2")).commit)
    expect([dup.code, dup.message]).toEqual([
      GrpcCode.InvalidArgument,
      "etcdserver: duplicate key given in txn request"
    ])
    const future = await fail((c) => c.kv.compact(1_000_000))
    expect([future.code, future.message]).toEqual([
      GrpcCode.OutOfRange,
      "etcdserver: mvcc: required revision is a future revision"
    ])
    const rev = await run((c) => Effect.map(c.kv.put("/e/b", "1"), (p) => p.header.revision))
    await run((c) => c.kv.compact(rev))
    const again = await fail((c) => c.kv.compact(rev))
    expect([again.code, again.message]).toEqual([
      GrpcCode.OutOfRange,
      "etcdserver: mvcc: required revision has been compacted"
    ])
    const old = await fail((c) => c.kv.get("/e/b", { revision: rev - 1n }))
    expect(old.message).toBe("etcdserver: mvcc: required revision has been compacted")
    const noLease = await fail((c) => c.lease.revoke(0x1234n))
    expect([noLease.code, noLease.message]).toEqual([GrpcCode.NotFound, "etcdserver: requested lease not found"])
  })

  it("grants, lists, inspects and revokes leases; revoking deletes attached keys", async () => {
    const r = await run((c) =>
      Effect.gen(function* () {
        const lease = yield* c.lease.grant(60)
        yield* c.kv.put("/lease/a", "1", { lease: lease.id })
        const ttl = yield* c.lease.timeToLive(lease.id, { keys: true })
        const list = yield* c.lease.leases()
        yield* c.lease.revoke(lease.id)
        const after = yield* c.kv.get("/lease/a")
        const gone = yield* c.lease.timeToLive(lease.id)
        return { lease, ttl, list, after, gone }
      })
    )
    expect(r.lease.ttl).toBe(60n)
    expect(r.ttl.grantedTtl).toBe(60n)
    expect(r.ttl.ttl).toBeGreaterThan(55n)
    expect(r.ttl.keys.map(toText)).toEqual(["/lease/a"])
    expect(r.list.ids).toContain(r.lease.id)
    expect(r.after.kvs).toEqual([])
    expect(r.gone.ttl).toBe(-1n)
  })

  it("keeps a lease alive across a broken connection", async () => {
    const r = await Effect.runPromise(
      Effect.gen(function* () {
        const direct = yield* scopedClient(env.server.endpoint)
        const viaProxy = yield* scopedClient(env.proxy.endpoint)
        const lease = yield* direct.lease.grant(3)
        yield* direct.kv.put("/ka/key", "1", { lease: lease.id })
        const ka = yield* viaProxy.lease.keepAlive(lease.id)
        yield* Effect.sleep("1200 millis")
        // Down for 1.5 s (half the TTL): connections reset, new ones refused.
        env.proxy.refuse(true)
        env.proxy.cutAll()
        yield* Effect.sleep("1500 millis")
        env.proxy.refuse(false)
        yield* Effect.sleep("3500 millis") // well past the TTL since the break
        const lost = yield* Effect.timeout(ka.lost, "10 millis").pipe(Effect.option)
        const ttl = yield* direct.lease.timeToLive(lease.id)
        const key = yield* direct.kv.get("/ka/key")
        const latest = yield* ka.latest
        return { lost, ttl, key, latest }
      }).pipe(Effect.scoped)
    )
    expect(Option.isNone(r.lost)).toBe(true)
    expect(r.ttl.ttl).toBeGreaterThan(0n)
    expect(r.key.kvs).toHaveLength(1)
    expect(Option.isSome(r.latest)).toBe(true)
  }, 20_000)

  it("reports a revoked lease as lost", async () => {
    const lost = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* scopedClient(env.server.endpoint)
        const lease = yield* c.lease.grant(2)
        const ka = yield* c.lease.keepAlive(lease.id)
        yield* Effect.sleep("200 millis")
        yield* c.lease.revoke(lease.id)
        return yield* Effect.timeoutFail(ka.lost, { duration: "5 seconds", onTimeout: () => "not reported" })
      }).pipe(Effect.scoped)
    )
    expect(lost).toBeInstanceOf(LeaseLost)
    expect(lost.reason).toBe("expired")
  }, 10_000)

  it("reports a lease as lost when no renewal can reach the server before it expires", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const direct = yield* scopedClient(env.server.endpoint)
        const viaProxy = yield* scopedClient(env.proxy.endpoint)
        const lease = yield* direct.lease.grant(2)
        const ka = yield* viaProxy.lease.keepAlive(lease.id)
        // Wait for the first renewal, then cut the client off for good.
        yield* Effect.repeat(ka.latest, { until: Option.isSome, schedule: Schedule.spaced("20 millis") })
        env.proxy.refuse(true)
        env.proxy.cutAll()
        const started = Date.now()
        const lost = yield* Effect.timeoutFail(ka.lost, { duration: "6 seconds", onTimeout: () => "not reported" })
        env.proxy.refuse(false)
        const ttl = yield* direct.lease.timeToLive(lease.id)
        return { lost, waited: Date.now() - started, ttl }
      }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => env.proxy.refuse(false))))
    )
    expect(result.lost.reason).toBe("deadline")
    expect(result.waited).toBeLessThan(3000)
    // Reported no later than the server's own expiry: its remaining TTL is 0 (or it is revoked).
    expect(result.ttl.ttl <= 0n).toBe(true)
  }, 15_000)

  it("keepAlive stops with its scope", async () => {
    const { id } = await run((c) => c.lease.grant(2))
    const fiber = Effect.runFork(
      Effect.gen(function* () {
        const c = yield* scopedClient(env.server.endpoint)
        const ka = yield* c.lease.keepAlive(id)
        yield* Effect.sleep("500 millis")
        return yield* ka.latest
      }).pipe(Effect.scoped)
    )
    const exit = await Effect.runPromise(Fiber.await(fiber))
    expect(Exit.isSuccess(exit)).toBe(true)
    await new Promise((r) => setTimeout(r, 3000)) // no renewals after the scope: it expires
    const ttl = await run((c) => c.lease.timeToLive(id))
    expect(ttl.ttl).toBe(-1n)
  }, 10_000)
})
