/**
 * WatchStreams on its own Layer (ClientConnection + WatchStreams, no EtcdClient) against our
 * in-process server: one gRPC stream per distinct metadata, substreams sharing it, the last
 * substream gone closes its stream, and closing the layer's scope ends every watch and stream.
 * The server's own stream and watcher counts say what reached it.
 */
import { Chunk, Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ClientConnection } from "../../src/client/connection.js"
import { defaultWatchRetrySchedule } from "../../src/client/config.js"
import { toText } from "../../src/client/key-value.js"
import { WatchBuffer } from "../../src/client/watch-buffer.js"
import type { WatchError } from "../../src/client/watch-errors.js"
import { watchMetadata, watchSpec } from "../../src/client/watch-options.js"
import type { WatchResponse } from "../../src/client/watch-response.js"
import { WatchStreams, type WatchStreamsShape } from "../../src/client/watch-streams.js"
import { call, eventually, rawClient, startMember } from "../server/support/in-process.js"

type Member = Awaited<ReturnType<typeof startMember>>

describe("WatchStreams service", () => {
  let member: Member
  let kv: ReturnType<typeof rawClient>
  const put = (k: string) => call(kv, "Put", { key: Buffer.from(k), value: Buffer.from("v") })

  beforeAll(async () => {
    member = await startMember()
    kv = rawClient("KV", member.endpoint)
  })
  afterAll(async () => {
    kv.close()
    await member.close()
  })

  /** The service built on its own layer, in a scope the test closes. */
  const build = async () => {
    const scope = Effect.runSync(Scope.make())
    const layer = WatchStreams.layer({ retrySchedule: defaultWatchRetrySchedule, bufferLimit: undefined }).pipe(
      Layer.provide(ClientConnection.layer({ endpoints: [member.endpoint] }))
    )
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    return {
      streams: Context.get(context, WatchStreams),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }

  /** One watch on `key` with the metadata of `requireLeader`; its responses are collected in the background. */
  const watch = async (streams: WatchStreamsShape, key: string, requireLeader = false) => {
    const buffer = new WatchBuffer<WatchResponse, WatchError>()
    const substream = await Effect.runPromise(
      streams.register(watchSpec(key, { createdNotify: true }), watchMetadata({ requireLeader }), buffer)
    )
    const got: Array<WatchResponse> = []
    const consumer = Effect.runFork(Stream.runForEach(buffer.stream, (r) => Effect.sync(() => got.push(r))))
    const keys = () => got.flatMap((r) => r.events.map((e) => toText(e.kv.key)))
    return { buffer, substream, got, keys, consumer }
  }

  it("one gRPC stream per distinct metadata; substreams with equal metadata share it", async () => {
    const { streams, close } = await build()
    const streams0 = member.watchable.streamCount()
    const watchers0 = member.watchable.watcherCount()
    try {
      const a = await watch(streams, "ms/a")
      const b = await watch(streams, "ms/b")
      const c = await watch(streams, "ms/a", true)
      expect(streams.size()).toBe(2)
      await eventually(() => a.got.length + b.got.length + c.got.length === 3, 5000, "three created notices")
      expect(member.watchable.streamCount()).toBe(streams0 + 2)
      expect(member.watchable.watcherCount()).toBe(watchers0 + 3)

      await put("ms/a")
      await put("ms/b")
      await eventually(() => a.keys().length === 1 && b.keys().length === 1 && c.keys().length === 1, 5000, "events")
      expect([a.keys(), b.keys(), c.keys()]).toEqual([["ms/a"], ["ms/b"], ["ms/a"]])

      // The last substream of a stream gone: that stream closes; the other one stays.
      c.substream!.unregister()
      expect(streams.size()).toBe(1)
      await eventually(() => member.watchable.streamCount() === streams0 + 1, 5000, "the leader stream closed")
      expect(Exit.isSuccess(await Effect.runPromise(Fiber.await(c.consumer)))).toBe(true)
      // One substream of the shared stream gone: it is cancelled there, the stream stays.
      b.substream!.unregister()
      await eventually(() => member.watchable.watcherCount() === watchers0 + 1, 5000, "b cancelled on the server")
      expect(streams.size()).toBe(1)
      await put("ms/a")
      await eventually(() => a.keys().length === 2, 5000, "a still served")
    } finally {
      await close()
    }
  })

  it("closing the layer's scope ends every watch normally and closes every gRPC stream", async () => {
    const { streams, close } = await build()
    const streams0 = member.watchable.streamCount()
    const watchers0 = member.watchable.watcherCount()
    const a = await watch(streams, "close/a")
    const b = await watch(streams, "close/b", true)
    await eventually(() => member.watchable.watcherCount() === watchers0 + 2, 5000, "both watches on the server")
    await close()
    // Each consumer Stream ends (successfully) without any watch being unregistered by its consumer.
    expect(Exit.isSuccess(await Effect.runPromise(Fiber.await(a.consumer)))).toBe(true)
    expect(Exit.isSuccess(await Effect.runPromise(Fiber.await(b.consumer)))).toBe(true)
    expect(streams.size()).toBe(0)
    await eventually(() => member.watchable.streamCount() === streams0, 5000, "the server's streams closed")
    expect(member.watchable.watcherCount()).toBe(watchers0)
    // A watch registered after the close is ended at once and reaches no server.
    const late = new WatchBuffer<WatchResponse, WatchError>()
    expect(await Effect.runPromise(streams.register(watchSpec("late"), {}, late))).toBeUndefined()
    expect(late.done).toBe(true)
    expect(Chunk.size(await Effect.runPromise(Stream.runCollect(late.stream)))).toBe(0)
  })
})
