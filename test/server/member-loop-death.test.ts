/**
 * The serve program's supervision with a whole member: the member's layers run under failOnFatal
 * (as `serve` runs `Layer.launch(member)`), a defect kills one of its loops (the store's compaction
 * worker, through a backend that throws while compacting), and the program fails with that loop's
 * LoopDied after closing the member: its client port no longer accepts connections.
 */
import * as net from "node:net"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { describe, expect, it } from "vitest"
import { Backend } from "../../src/backend/backend.js"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { layer as lessorLayer } from "../../src/lease/lessor.js"
import { failOnFatal } from "../../src/supervision/fatal.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { defaultServerConfig } from "../../src/server/config.js"
import { EtcdServer, layerAuth, layerServer } from "../../src/server/server.js"
import { layer as watchableLayer } from "../../src/watch/watchable-store.js"

const b = (s: string) => new Uint8Array(Buffer.from(s))

const refused = (endpoint: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = endpoint.split(":")
    const socket = net.connect(Number(port), host!)
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", () => resolve(true))
  })

describe("a member whose loop dies", () => {
  it("fails the program with LoopDied and is shut down", async () => {
    const config = { ...defaultServerConfig, listenClientUrls: ["http://127.0.0.1:0"], dataDir: undefined }
    const broken = { on: false }
    const inner = makeMemoryBackend().backend
    const backend = Layer.succeed(Backend, {
      ...inner,
      write: (ops) => {
        if (broken.on && ops.some((op) => op.bucket === "key" && op.value === undefined)) throw new Error("disk gone")
        return inner.write(ops)
      }
    })
    const services = Layer.mergeAll(watchableLayer, lessorLayer, layerAuth(config)).pipe(
      Layer.provideMerge(layerDefault),
      Layer.provideMerge(backend)
    )
    const member = layerServer(config).pipe(Layer.provideMerge(services))
    let endpoint = ""
    const exit = await Effect.runPromiseExit(
      failOnFatal(
        Effect.gen(function* () {
          endpoint = (yield* EtcdServer).endpoints[0]!
          expect(yield* Effect.promise(() => refused(endpoint))).toBe(false)
          const store = yield* MvccStore
          for (let i = 0; i < 3; i++) yield* store.put({ key: b("k"), value: b(`v${i}`) })
          broken.on = true
          yield* store.compact(3)
          return yield* Effect.never
        }).pipe(Effect.provide(member))
      )
    )
    const e = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
    expect(e).toMatchObject({ _tag: "LoopDied", message: "mvcc compaction loop died: disk gone" })
    expect(await refused(endpoint)).toBe(true)
  }, 60_000)
})
