/**
 * Supervision of a Watch stream's fibers: a defect in recv, in the channel pump or in send ends
 * that stream with Internal and one error log line, and its watchers leave the watchable store
 * (none left synced, unsynced or as a victim); the other streams of the server go on.
 *
 * The defects are injected from outside the hot path, through the stream's dependencies: a
 * WatchStream whose `watch` (recv) or `takeAll` (pump) dies on a marked key, and a store whose
 * `getAt` (the prev_kv lookup, done by send) throws on one.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, Logger, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { makeCallRunner } from "../../src/server/grpc-bridge.js"
import type { WatchableStoreShape } from "../../src/watch/watchable-store.js"
import type { WatchStream } from "../../src/watch/watch-stream.js"
import { eventually, startMember } from "./support/in-process.js"
import { serveWatchService } from "./support/watch-service.js"
import { RawWatch } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)
const hasKey = (key: Uint8Array, marker: string) => Buffer.from(key).toString("latin1").startsWith(marker)

/** A WatchStream that dies in `watch` (recv) or `takeAll` (pump) on the marked keys. */
const faulty = (ws: WatchStream): WatchStream => ({
  watch: (req) => (hasKey(req.key, "boom/recv") ? Effect.die(new Error("injected in recv")) : ws.watch(req)),
  cancel: (id) => ws.cancel(id),
  requestProgress: (id) => ws.requestProgress(id),
  unsafeRequestProgress: (id) => ws.unsafeRequestProgress(id),
  get requestProgressAll() {
    return ws.requestProgressAll
  },
  get takeAll() {
    return Effect.flatMap(ws.takeAll, (taken) => {
      for (const r of taken[0]) {
        if (r.events.some((e) => hasKey(e.kv.key, "boom/pump"))) return Effect.die(new Error("injected in pump"))
      }
      return Effect.succeed(taken)
    })
  },
  chanLen: () => ws.chanLen(),
  prevKv: (id) => ws.prevKv(id),
  ids: () => ws.ids(),
  close: ws.close,
  unsafeClose: () => ws.unsafeClose(),
  rev: () => ws.rev()
})

describe("Watch stream supervision", () => {
  let store: MvccStoreShape
  let watchable: WatchableStoreShape
  let endpoint: string
  let server: grpc.Server
  let member: Awaited<ReturnType<typeof startMember>> | undefined
  const scope = Effect.runSync(Scope.make())
  const errors: Array<string> = []
  const streams: Array<RawWatch> = []
  const open = () => {
    const w = new RawWatch(endpoint)
    streams.push(w)
    return w
  }
  const put = (k: string) => Effect.runPromise(store.put({ key: b(k), value: b("v") }))

  beforeAll(async () => {
    // a member's stores (its own gRPC server stays idle); the Watch service under test gets its own
    member = await startMember()
    store = member.store
    watchable = member.watchable
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Error") errors.push(String(Array.isArray(message) ? message[0] : message))
    })
    const runner = await Effect.runPromise(
      Scope.extend(makeCallRunner(), scope).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    )
    ;({ server, endpoint } = await serveWatchService(runner, {
      watchable: { ...watchable, newWatchStream: Effect.map(watchable.newWatchStream, faulty) },
      store: {
        ...store,
        getAt: (key: Uint8Array, rev: number) => {
          if (hasKey(key, "boom/send")) throw new Error("injected in send")
          return store.getAt(key, rev)
        }
      }
    }))
  })
  afterAll(async () => {
    for (const w of streams) w.close()
    server?.forceShutdown()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await member?.close()
  })

  /** Opens a stream with two watchers and what `setup` adds, then makes `fiber` die with `trigger`. */
  const crash = async (fiber: string, setup: (w: RawWatch) => number, trigger: (w: RawWatch) => Promise<unknown>) => {
    const bystander = open()
    bystander.create({ key: b("calm/"), range_end: b("calm0") })
    await bystander.waitFor(1)
    const watchers0 = watchable.watcherCount()
    const streams0 = watchable.streamCount()
    const errors0 = errors.length

    const w = open()
    w.create({ key: b("a") })
    w.create({ key: b("b"), start_revision: 1 })
    const created = 2 + setup(w)
    await w.waitFor(created)
    expect(watchable.watcherCount()).toBe(watchers0 + created)
    await trigger(w)

    await eventually(() => w.error !== undefined, 5000, "the stream ended with a status")
    expect(w.error!.code).toBe(grpc.status.INTERNAL)
    expect(w.error!.details).toContain(`watch stream ${fiber} fiber: injected in ${fiber}`)
    await eventually(() => watchable.watcherCount() === watchers0, 5000, "its watchers cancelled")
    expect(watchable.streamCount()).toBe(streams0)
    expect(watchable.victimCount()).toBe(0)
    expect(watchable.slowWatcherCount()).toBe(0)
    expect(errors.slice(errors0)).toEqual(["Watch: handler defect"])

    // The other stream goes on.
    await put("calm/x")
    await eventually(() => bystander.responses.some((r) => r.events.length > 0), 5000, "the bystander's event")
    bystander.close()
  }

  it("a defect in recv ends the stream with Internal, logged once; its watchers are cancelled", async () => {
    await crash(
      "recv",
      () => 0,
      async (w) => w.create({ key: b("boom/recv") })
    )
  })

  it("a defect in the channel pump ends the stream the same way", async () => {
    await crash(
      "pump",
      (w) => (w.create({ key: b("boom/pump") }), 1),
      () => put("boom/pump")
    )
  })

  it("a defect in send ends the stream the same way", async () => {
    await crash(
      "send",
      (w) => (w.create({ key: b("boom/send"), prev_kv: true }), 1),
      async () => {
        await put("boom/send")
        await put("boom/send") // not a create: send looks its prev_kv up
      }
    )
  })
})
