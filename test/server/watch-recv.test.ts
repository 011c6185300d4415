/**
 * The Watch stream's recv callback (server/watch-recv.ts): requests are handled in order even
 * when one's Effect goes async (it holds the next ones and the reading), control responses are
 * written at once, and events follow the created response of their watcher.
 *
 * The async request is injected through the stream's dependencies: a WatchStream whose `watch`
 * waits a few ms for keys under "slow/" (as an auth lookup that went async would).
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, type Fiber, Scope, Supervisor } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { makeCallRunner } from "../../src/server/grpc-bridge.js"
import type { WatchStream } from "../../src/watch/watch-stream.js"
import { eventually, startMember } from "./support/in-process.js"
import { serveWatchService } from "./support/watch-service.js"
import { RawWatch, text } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)

const slowWatch = (ws: WatchStream): WatchStream => ({
  watch: (req) =>
    Buffer.from(req.key).toString("latin1").startsWith("slow/")
      ? Effect.zipRight(Effect.sleep("20 millis"), ws.watch(req))
      : ws.watch(req),
  cancel: (id) => ws.cancel(id),
  requestProgress: (id) => ws.requestProgress(id),
  unsafeRequestProgress: (id) => ws.unsafeRequestProgress(id),
  get requestProgressAll() {
    return ws.requestProgressAll
  },
  get takeAll() {
    return ws.takeAll
  },
  chanLen: () => ws.chanLen(),
  prevKv: (id) => ws.prevKv(id),
  ids: () => ws.ids(),
  close: ws.close,
  unsafeClose: () => ws.unsafeClose(),
  rev: () => ws.rev()
})

describe("Watch stream recv", () => {
  let store: MvccStoreShape
  let endpoint: string
  let server: grpc.Server
  let member: Awaited<ReturnType<typeof startMember>> | undefined
  const scope = Effect.runSync(Scope.make())
  const streams: Array<RawWatch> = []
  /** every fiber the runner starts (the server's runtime is supervised by it) */
  let fibers: Supervisor.Supervisor<Array<Fiber.RuntimeFiber<unknown, unknown>>>

  beforeAll(async () => {
    member = await startMember()
    store = member.store
    const watchable = member.watchable
    fibers = await Effect.runPromise(Supervisor.track)
    const runner = await Effect.runPromise(Scope.extend(makeCallRunner(), scope).pipe(Effect.supervised(fibers)))
    ;({ server, endpoint } = await serveWatchService(runner, {
      watchable: { ...watchable, newWatchStream: Effect.map(watchable.newWatchStream, slowWatch) },
      store
    }))
  })
  afterAll(async () => {
    for (const w of streams) w.close()
    server?.forceShutdown()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await member?.close()
  })

  it("a request that goes async holds the next ones: responses come in request order", async () => {
    const w = new RawWatch(endpoint)
    streams.push(w)
    w.create({ key: b("slow/a") })
    w.create({ key: b("fast/b") })
    w.create({ key: b("slow/c") })
    w.cancel(0)
    w.create({ key: b("fast/d") })
    const rs = await w.waitFor(5)
    expect(rs.map((r) => [r.created, r.canceled, String(r.watch_id ?? 0)])).toEqual([
      [true, false, "0"],
      [true, false, "1"],
      [true, false, "2"],
      [false, true, "0"],
      [true, false, "3"]
    ])
    // the watchers serve: an event for the slow-created one and none for the cancelled one
    await Effect.runPromise(store.put({ key: b("slow/a"), value: b("x") }))
    await Effect.runPromise(store.put({ key: b("slow/c"), value: b("y") }))
    await w.waitForEvents(1)
    const withEvents = w.responses.filter((r) => r.events?.length > 0)
    expect(withEvents.map((r) => [String(r.watch_id ?? 0), text(r.events[0].kv.key)])).toEqual([["2", "slow/c"]])
  })

  it("a half-closed stream keeps serving its watchers", async () => {
    const w = new RawWatch(endpoint)
    streams.push(w)
    w.create({ key: b("fast/e") })
    await w.waitFor(1)
    w.call.end()
    await Effect.runPromise(store.put({ key: b("fast/e"), value: b("z") }))
    await eventually(() => w.responses.some((r) => r.events?.length > 0), 5000, "the event after half-close")
  })

  it("an idle stream is one fiber: the call's", async () => {
    const live0 = (await Effect.runPromise(fibers.value)).length
    const idle = Array.from({ length: 20 }, () => new RawWatch(endpoint))
    streams.push(...idle)
    idle.forEach((w, i) => w.create({ key: b(`idle/${i}`), progress_notify: true }))
    for (const w of idle) await w.waitFor(1)
    expect((await Effect.runPromise(fibers.value)).length - live0).toBe(20)
    for (const w of idle) w.close()
    await eventually(
      async () => (await Effect.runPromise(fibers.value)).length === live0,
      5000,
      "the streams' fibers gone"
    )
  })
})
