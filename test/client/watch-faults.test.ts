/**
 * Watch under faults: a TCP proxy cuts the client's connection at random moments (and in the middle
 * of responses), the server is killed and restarted, and the delivered events must still be exactly
 * the committed history — no loss, no duplicate, same order, whole revisions — including cuts in
 * the middle of a catch-up of more than 1000 revisions (where etcd3's client loses events).
 */
import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { serverTargets } from "../support/servers.js"
import {
  collectUntil,
  historyProblems,
  lastRevision,
  provideClient,
  scopedClient,
  useProxiedServer,
  writeHistory
} from "./helpers.js"
import { EtcdClient } from "../../src/client/index.js"

const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 100000)

describe.each(serverTargets.filter((t) => t.enabled))("watch under faults ($name)", (target) => {
  const env = useProxiedServer(target)

  it(`catch-up over 3000 revisions survives cuts in mid-stream (seed ${SEED})`, async () => {
    const history = await Effect.runPromise(
      Effect.flatMap(EtcdClient, (c) => writeHistory(c, { prefix: "/catchup/", count: 3000, valueBytes: 200 })).pipe(
        provideClient(env.server.endpoint)
      )
    )
    const until = lastRevision(history)
    const cutsBefore = env.proxy.stats.cuts
    // Each connection lives for a random 5–350 KB (a 1000-revision batch is ~270 KB): most cuts land
    // inside a batch, many inside a frame. Cuts by bytes, not by time: a cut every 20–200 ms starves
    // a server that needs longer than that for a batch (a loaded machine), which proves nothing
    // about resuming (the live-writes test below cuts by time, with small responses).
    const stop = env.proxy.cutEachConnection({ seed: SEED, minBytes: 5_000, maxBytes: 350_000 })
    const responses = await Effect.runPromise(
      Effect.flatMap(EtcdClient, (c) =>
        collectUntil(c.watch("/catchup/", { prefix: true, startRevision: history[0]!.rev }), until)
      ).pipe(provideClient(env.proxy.endpoint))
    ).finally(stop)
    expect(env.proxy.stats.cuts - cutsBefore).toBeGreaterThanOrEqual(3)
    expect(historyProblems(responses, history)).toEqual([])
  }, 60_000)

  it(`live writes while the connection is cut at random (seed ${SEED + 1})`, async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const direct = yield* scopedClient(env.server.endpoint)
        const viaProxy = yield* EtcdClient
        // createdNotify: the created header revision is where the watch begins (exclusive).
        const watch = viaProxy.watch("/live/", { prefix: true, createdNotify: true })
        const started = yield* Effect.makeLatch(false)
        let delivered = 0
        const fiber = yield* watch.pipe(
          Stream.tap((r) => (delivered++, r.created ? started.open : Effect.void)),
          Stream.timeout("8 seconds"),
          Stream.takeUntil((r) => r.events.some((e) => Buffer.from(e.kv.key).toString() === "/live/end")),
          Stream.runCollect,
          Effect.fork
        )
        yield* started.await
        // a cut every 5–60 ms once the watch delivered something since the last one
        const stop = env.proxy.chaos({
          seed: SEED + 1,
          minMs: 5,
          maxMs: 60,
          maxBytes: 20_000,
          progress: () => delivered
        })
        const history = yield* writeHistory(direct, { prefix: "/live/", count: 1500, concurrency: 8 })
        const end = yield* direct.kv.put("/live/end", "done")
        const responses = Array.from(yield* Fiber.join(fiber))
        stop()
        return {
          responses,
          history: [...history, { rev: end.header.revision, type: 0 as const, key: "/live/end", value: "done" }]
        }
      }).pipe(Effect.scoped, provideClient(env.proxy.endpoint))
    )
    expect(result.responses[0]!.created).toBe(true)
    expect(result.responses.filter((r) => r.created)).toHaveLength(1) // created only once, not per reconnect
    expect(historyProblems(result.responses, result.history)).toEqual([])
  }, 60_000)

  it("keeps watching across a server crash and restart", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* EtcdClient
        const before = yield* writeHistory(client, { prefix: "/restart/", count: 200 })
        const fiber = yield* client.watch("/restart/", { prefix: true, startRevision: before[0]!.rev }).pipe(
          Stream.timeout("8 seconds"),
          Stream.takeUntil((r) => r.events.some((e) => Buffer.from(e.kv.key).toString() === "/restart/end")),
          Stream.runCollect,
          Effect.fork
        )
        yield* Effect.sleep("100 millis")
        yield* Effect.promise(() => env.server.restart(300))
        const after = yield* writeHistory(client, { prefix: "/restart/", count: 200 })
        const end = yield* client.kv.put("/restart/end", "done")
        const responses = Array.from(yield* Fiber.join(fiber))
        return {
          responses,
          history: [
            ...before,
            ...after,
            { rev: end.header.revision, type: 0 as const, key: "/restart/end", value: "done" }
          ]
        }
      }).pipe(provideClient(env.server.endpoint))
    )
    expect(historyProblems(result.responses, result.history)).toEqual([])
  }, 60_000)
})

describe.each(serverTargets.filter((t) => t.enabled))("fragmented catch-up under faults ($name)", (target) => {
  // Fragment threshold = max-request-bytes + 512 KiB: ~0.5 MiB, so a 1000-revision batch of
  // 1 KiB values arrives in several fragments.
  const env = useProxiedServer(target, { maxRequestBytes: 8192 })

  it(`merges fragments into whole responses, across cuts (seed ${SEED + 2})`, async () => {
    const history = await Effect.runPromise(
      Effect.flatMap(EtcdClient, (c) => writeHistory(c, { prefix: "/frag/", count: 1600, valueBytes: 1000 })).pipe(
        provideClient(env.server.endpoint)
      )
    )
    const until = lastRevision(history)
    // First without faults: the first response must carry more than one fragment's worth.
    const clean = await Effect.runPromise(
      Effect.flatMap(EtcdClient, (c) =>
        collectUntil(c.watch("/frag/", { prefix: true, startRevision: history[0]!.rev, fragment: true }), until)
      ).pipe(provideClient(env.server.endpoint))
    )
    expect(historyProblems(clean, history)).toEqual([])
    const firstBytes = clean[0]!.events.reduce((n, e) => n + e.kv.key.length + e.kv.value.length, 0)
    expect(firstBytes).toBeGreaterThan(8192 + 512 * 1024)
    // Then with cuts between and inside fragments (a fragment is ~0.5 MiB).
    const stopBytes = env.proxy.cutEachConnection({ seed: SEED + 2, minBytes: 50_000, maxBytes: 1_500_000 })
    let delivered = 0
    const stopTimed = env.proxy.chaos({ seed: SEED + 200, minMs: 50, maxMs: 300, progress: () => delivered })
    const stop = () => (stopBytes(), stopTimed())
    const faulted = await Effect.runPromise(
      Effect.flatMap(EtcdClient, (c) =>
        collectUntil(
          c
            .watch("/frag/", { prefix: true, startRevision: history[0]!.rev, fragment: true })
            .pipe(Stream.tap(() => Effect.sync(() => delivered++))),
          until
        )
      ).pipe(provideClient(env.proxy.endpoint))
    ).finally(stop)
    expect(historyProblems(faulted, history)).toEqual([])
  }, 60_000)
})
