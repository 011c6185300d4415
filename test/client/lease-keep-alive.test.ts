/**
 * The client's lease keep-alive on the Clock (clientv3's keepAliveCtxCloser/sendKeepAliveLoop
 * rhythm): a renewal a third of the TTL after each answer, the lease lost once its last granted TTL
 * has run out with no renewal answered, retries after a broken stream on the retry schedule. Every
 * timer is the TestClock's here; the server is a real one over loopback, behind a fault proxy.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue, Stream, TestClock } from "effect"
import type { LeaseKeepAliveResult } from "../../src/client/index.js"
import { serverTargets } from "../support/servers.js"
import { scopedClient, useProxiedServer } from "./helpers.js"

const ours = serverTargets.find((t) => t.name === "etcd-effect")!

describe("lease keep-alive on the Clock", () => {
  const env = useProxiedServer(ours)

  /** every renewal of `id` through the proxy, as it arrives */
  const renewals = (id: bigint) =>
    Effect.gen(function* () {
      const c = yield* scopedClient(env.proxy.endpoint)
      const q = yield* Queue.unbounded<LeaseKeepAliveResult>()
      yield* c.lease.keepAliveStream(id).pipe(
        Stream.runForEach((r) => Queue.offer(q, r)),
        Effect.forkScoped
      )
      return q
    })

  it.scoped("renews a third of the TTL after each answer", () =>
    Effect.gen(function* () {
      const direct = yield* scopedClient(env.server.endpoint)
      // long enough that a wall-clock timer would outlast the test's timeout
      const lease = yield* direct.lease.grant(600)
      const q = yield* renewals(lease.id)
      const first = yield* Queue.take(q)
      expect(first.ttl).toBe(600n)
      yield* TestClock.adjust("200 seconds")
      const second = yield* Queue.take(q)
      expect(second.id).toBe(lease.id)
      expect(second.ttl).toBe(600n)
    })
  )

  it.scoped("loses the lease once its TTL has run out with no renewal answered", () =>
    Effect.gen(function* () {
      const direct = yield* scopedClient(env.server.endpoint)
      const viaProxy = yield* scopedClient(env.proxy.endpoint)
      const lease = yield* direct.lease.grant(300)
      const ka = yield* viaProxy.lease.keepAlive(lease.id)
      const lost = yield* Effect.fork(ka.lost)
      while ((yield* ka.latest)._tag === "None") yield* Effect.yieldNow()
      env.proxy.refuse(true)
      env.proxy.cutAll()
      yield* Effect.addFinalizer(() => Effect.sync(() => env.proxy.refuse(false)))
      yield* TestClock.adjust("300 seconds")
      const error = yield* Fiber.join(lost)
      expect(error.reason).toBe("deadline")
      expect(error.message).toMatch(/keep-alive deadline exceeded/)
    })
  )

  it.scoped("renews again after a broken stream, on the retry schedule", () =>
    Effect.gen(function* () {
      const direct = yield* scopedClient(env.server.endpoint)
      const lease = yield* direct.lease.grant(30)
      const q = yield* renewals(lease.id)
      yield* Queue.take(q)
      expect(env.proxy.cutAll()).toBeGreaterThan(0)
      // the retry waits on the Clock: its backoff (≤ 500 ms) and then a new call's first renewal
      const next = yield* Effect.fork(Queue.take(q))
      yield* TestClock.adjust("1 second")
      const again = yield* Fiber.join(next)
      expect(again.ttl).toBe(30n)
    })
  )
})
