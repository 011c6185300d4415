/**
 * Every bench scenario, small, against real etcd 3.4 and our server: exact counts (every watcher
 * gets every event, once, in order), no errors, ordered latency summaries, the headline figure
 * consistent with count and duration, and idle watchers that the server really holds while the
 * scope is open and drops when it closes.
 */
import { Effect, Exit, Scope } from "effect"
import { Etcd3 } from "etcd3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BenchOptions, type BenchResult, openIdleWatchers, run, type ScenarioName } from "../../src/bench/index.js"
import { serverTargets, type TestServer } from "../support/servers.js"

const ordered = (r: BenchResult) => {
  const l = r.latencyMs
  expect(l).toBeDefined()
  expect(l!.p50).toBeGreaterThan(0)
  expect(l!.p50).toBeLessThanOrEqual(l!.p90)
  expect(l!.p90).toBeLessThanOrEqual(l!.p99)
  expect(l!.p99).toBeLessThanOrEqual(l!.max)
  expect(l!.mean).toBeLessThanOrEqual(l!.max)
}

const clean = (r: BenchResult) => {
  expect(r.firstError).toBeUndefined()
  expect(r.errors).toBe(0)
  expect(r.durationMs).toBeGreaterThan(0)
  expect(r.clientCpuMs).toBeGreaterThanOrEqual(0)
}

/** Polls the server's watcher gauge until it reads `expected` (undefined: not observable). */
const eventually = async (read: () => Promise<number | undefined>, expected: number) => {
  const deadline = Date.now() + 5000
  let last: number | undefined
  while (Date.now() < deadline) {
    last = await read()
    if (last === undefined || last === expected) return
    await new Promise((r) => setTimeout(r, 25))
  }
  expect(last).toBe(expected)
}

describe.each(serverTargets.filter((t) => t.enabled))("bench scenarios ($name)", (target) => {
  let server: TestServer
  beforeAll(async () => {
    server = await target.start()
  })
  afterAll(async () => {
    await server?.dispose()
  })

  const bench = (scenario: ScenarioName, options: Omit<BenchOptions, "endpoints">) =>
    Effect.runPromise(run(scenario, { endpoints: [`http://${server.endpoint}`], stallTimeoutMs: 10_000, ...options }))

  it("put: every request answered, latency per request", async () => {
    const r = await bench("put", { total: 300, clients: 8, conns: 2, keySpaceSize: 50, valSize: 64 })
    clean(r)
    expect(r.count).toBe(300)
    expect(r.unit).toBe("puts/s")
    expect(r.higherIsBetter).toBe(true)
    expect(r.value).toBeCloseTo((r.count * 1000) / r.durationMs, 6)
    expect(r.endpoints).toEqual([server.endpoint])
    expect(r.params).toEqual({ conns: 2, clients: 8, total: 300, keySize: 8, valSize: 64, keySpaceSize: 50 })
    ordered(r)
  })

  it("put: a gRPC error status counts as an error, its message kept", async () => {
    // key size 0: an empty key, which etcd refuses with InvalidArgument
    const r = await bench("put", { total: 20, clients: 4, keySize: 0 })
    expect(r.count).toBe(0)
    expect(r.errors).toBe(20)
    expect(r.firstError).toBe("etcdserver: key is not provided")
  })

  it("txn-put: every txn answered and applied (one put each, no compares)", async () => {
    const r = await bench("txn-put", { total: 120, clients: 6, conns: 2, keySize: 13, keySpaceSize: 1, valSize: 16 })
    clean(r)
    expect(r.count).toBe(120)
    expect(r.unit).toBe("txns/s")
    expect(r.params).toEqual({ conns: 2, clients: 6, total: 120, keySize: 13, valSize: 16, keySpaceSize: 1 })
    ordered(r)
    // the one key (a size no other test here writes) was written by every txn: its version counts them
    const client = new Etcd3({ hosts: `http://${server.endpoint}` })
    try {
      const got = await client.get("0000000000000").exec()
      expect(Number(got.kvs[0]?.version)).toBe(120)
      expect(got.kvs[0]?.value.length).toBe(16)
    } finally {
      client.close()
    }
  })

  it("range: loads the keys first, then every range finds its key", async () => {
    const r = await bench("range", { total: 300, clients: 8, keySpaceSize: 40 })
    clean(r)
    expect(r.count).toBe(300)
    expect(r.unit).toBe("ranges/s")
    expect(r.params["conns"]).toBe(8)
    ordered(r)
  })

  it("watch: streams × watchers × puts events, pipelined or at a rate", async () => {
    const r = await bench("watch", { streams: 3, watchersPerStream: 20, putTotal: 40 })
    clean(r)
    expect(r.count).toBe(3 * 20 * 40)
    expect(r.unit).toBe("events/s")
    expect(r.value).toBeCloseTo((r.count * 1000) / r.durationMs, 6)
    expect(r.latencyMs).toBeUndefined()
    const paced = await bench("watch", { streams: 2, watchersPerStream: 5, putTotal: 20, putRate: 400, conns: 2 })
    clean(paced)
    expect(paced.count).toBe(2 * 5 * 20)
  })

  it("watch-latency: one latency per event per watcher, p99 as the headline", async () => {
    const r = await bench("watch-latency", {
      streams: 2,
      watchersPerStream: 4,
      putTotal: 25,
      putRate: 250,
      prevKv: true
    })
    clean(r)
    expect(r.count).toBe(2 * 4 * 25)
    expect(r.unit).toBe("ms (p99)")
    expect(r.higherIsBetter).toBe(false)
    ordered(r)
    expect(r.value).toBe(r.latencyMs!.p99)
    expect(r.params["prevKv"]).toBe(true)
    // 25 puts at 250/s take at least 96 ms
    expect(r.durationMs).toBeGreaterThanOrEqual(90)
  })

  it("watch-create: every create answered on one stream", async () => {
    const r = await bench("watch-create", { total: 500 })
    clean(r)
    expect(r.count).toBe(500)
    expect(r.unit).toBe("watches/s")
  })

  it("watch-catchup: every watcher replays the whole history", async () => {
    const r = await bench("watch-catchup", { history: 300, streams: 2, watchersPerStream: 3, keySpaceSize: 7 })
    clean(r)
    expect(r.count).toBe(300 * 2 * 3)
    expect(r.unit).toBe("events/s")
  })

  it("watch-idle and openIdleWatchers: the server holds the watchers until the scope closes", async () => {
    const r = await bench("watch-idle", { streams: 2, watchersPerStream: 30 })
    clean(r)
    expect(r.value).toBe(60)
    expect(r.unit).toBe("watchers")
    await eventually(() => server.watcherCount(), 0)

    const scope = await Effect.runPromise(Scope.make())
    const created = await Effect.runPromise(
      Scope.extend(openIdleWatchers({ endpoints: [server.endpoint], streams: 3, watchersPerStream: 25 }), scope)
    )
    expect(created).toBe(75)
    await eventually(() => server.watcherCount(), 75)
    await eventually(() => server.watchStreamCount(), 3)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await eventually(() => server.watcherCount(), 0)
  })
})
