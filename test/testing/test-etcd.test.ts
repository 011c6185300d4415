/**
 * Testing.layer, used the way docs/client.md's "Testing your program" says: @effect/vitest's
 * `layer(...)` shares one in-memory member and client across a block's tests, `Effect.provide`
 * gives a test its own. The tests' bodies run on @effect/vitest's TestClock; the server does not
 * (test-clock.ts): a watch from a past revision is caught up by the server's sync loop, which on
 * the TestClock would never run — this file hangs if that choice is undone.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, Effect, FastCheck as fc, Fiber, Stream, TestClock } from "effect"
import { Client, Server, Testing } from "../../src/index.js"

const text = (b: Uint8Array) => Buffer.from(b).toString()

/** the first `n` events under `prefix` from `startRevision` on, as "PUT key=value" lines */
const watched = (prefix: string, startRevision: bigint, n: number) =>
  Effect.gen(function* () {
    const etcd = yield* Client.EtcdClient
    const events = yield* etcd.watch(prefix, { prefix: true, startRevision }).pipe(
      Stream.flatMap((r) => Stream.fromIterable(r.events)),
      Stream.take(n),
      Stream.runCollect
    )
    return [...events].map(
      (e) => `${e.type === Client.EventType.PUT ? "PUT" : "DELETE"} ${text(e.kv.key)}=${text(e.kv.value)}`
    )
  })

layer(Testing.layer())("Testing.layer shared by a block's tests", (it) => {
  it.effect("a watch from a past revision gets the events before and after it started", () =>
    Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      const { header } = yield* etcd.kv.put("/past/a", "1")
      yield* etcd.kv.put("/past/b", "2")
      yield* etcd.kv.delete("/past/a")
      expect(yield* watched("/past/", header.revision, 3)).toEqual([
        "PUT /past/a=1",
        "PUT /past/b=2",
        "DELETE /past/a="
      ])
    })
  )

  it.effect("the test body keeps the TestClock: time moves only when the test adjusts it", () =>
    Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      const before = yield* Clock.currentTimeMillis
      const sleeper = yield* Effect.fork(Effect.sleep("1 hour"))
      yield* TestClock.adjust("1 hour")
      yield* Fiber.join(sleeper)
      expect((yield* Clock.currentTimeMillis) - before).toBe(3_600_000)
      // the server is unaffected by the test's hour: a lease of 60 s is still alive
      const lease = yield* etcd.lease.grant(60)
      expect((yield* etcd.lease.timeToLive(lease.id)).ttl).toBeGreaterThan(50n)
    })
  )

  it.effect("a keep-alive started in the test body runs on the client's clock, the live one", () =>
    Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      const lease = yield* etcd.lease.grant(2)
      // renewals every third of the TTL of real time; on the test's TestClock only the first would come
      const renewals = yield* etcd.lease.keepAliveStream(lease.id).pipe(Stream.take(3), Stream.runCollect)
      expect([...renewals].map((r) => r.ttl)).toEqual([2n, 2n, 2n])
    })
  )

  it.effect("the server of the layer is the client's: the member EtcdServer names answers", () =>
    Effect.gen(function* () {
      const server = yield* Server.EtcdServer
      const etcd = yield* Client.EtcdClient
      const status = yield* etcd.maintenance.status()
      expect(status.header.memberId).toBe(server.memberId)
      expect(server.endpoints).toHaveLength(1)
    })
  )

  it.effect.prop(
    "a watch from any revision replays exactly the writes after it, in order",
    { values: fc.array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 8 }), from: fc.nat() },
    ({ from, values }) =>
      Effect.gen(function* () {
        const etcd = yield* Client.EtcdClient
        const prefix = `/prop/${(yield* Effect.sync(() => Math.random())).toString(36).slice(2)}/`
        const revisions: Array<bigint> = []
        for (const [i, v] of values.entries()) revisions.push((yield* etcd.kv.put(`${prefix}${i}`, v)).header.revision)
        const start = from % values.length
        const got = yield* watched(prefix, revisions[start]!, values.length - start)
        expect(got).toEqual(values.slice(start).map((v, i) => `PUT ${prefix}${start + i}=${v}`))
      }),
    { fastCheck: { numRuns: 25 } }
  )
})

describe("Testing.layer fresh per test", () => {
  it.effect("Effect.provide gives a test its own member: nothing of another test's writes", () =>
    Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      expect((yield* etcd.kv.get("/", { prefix: true })).count).toBe(0n)
      const { header } = yield* etcd.kv.put("/fresh", "1")
      expect(header.revision).toBe(2n)
    }).pipe(Effect.provide(Testing.layer()))
  )
})
