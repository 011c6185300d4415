/**
 * frameSink over real grpc-js on loopback, in both modes: batches written raw to the HTTP/2 stream
 * (one write per batch) and the per-message fallback. A grpc-js client must read the same
 * responses in order, then the call's status, either way.
 */
import * as grpc from "@grpc/grpc-js"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { serviceDefinition } from "../../src/proto/load.js"
import { frameSink, passThroughSerializer } from "../../src/server/grpc-raw-writer.js"
import { FrameWriter } from "../../src/server/watch-wire.js"

const base = serviceDefinition("Watch")
const definition = { ...base, Watch: passThroughSerializer(base["Watch"]!) }
const serialize = base["Watch"]!.responseSerialize as (v: unknown) => Buffer

const run = async (forceMessageMode: boolean, batches: number, perBatch: number) => {
  const server = new grpc.Server()
  let mode = ""
  server.addService(definition, {
    Watch: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      const sink = frameSink(call, forceMessageMode)
      mode = sink.mode
      const out = new FrameWriter(64)
      let id = 1
      const next = (b: number): void => {
        if (b === batches) {
          call.end()
          return
        }
        // a large value now and then: frames must survive the buffer growing mid-batch
        for (let i = 0; i < perBatch; i++, id++) {
          out.message(
            serialize({
              watch_id: id,
              header: { revision: id },
              cancel_reason: id % 97 === 0 ? "x".repeat(70_000) : ""
            })
          )
        }
        // a failed drain ends the call with its error, so the test fails instead of waiting
        if (sink.write(out))
          Effect.runPromise(sink.drain).then(
            () => next(b + 1),
            (e: Error) => call.destroy(e)
          )
        else setImmediate(() => next(b + 1))
      }
      next(0)
    }
  })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)))
  )
  const Client = grpc.makeGenericClientConstructor(base, "Watch")
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
  try {
    const ids: Array<number> = []
    const status = await new Promise<grpc.StatusObject>((resolve) => {
      const call = (client as any).Watch() as grpc.ClientDuplexStream<
        unknown,
        { watch_id: string; header: { revision: string } }
      >
      call.on("data", (r) => {
        expect(r.header.revision).toBe(r.watch_id)
        ids.push(Number(r.watch_id))
      })
      call.on("status", resolve)
      call.on("error", () => {})
    })
    return { ids, status, mode }
  } finally {
    client.close()
    server.forceShutdown()
  }
}

describe("frameSink", () => {
  for (const force of [false, true]) {
    it(`delivers every frame in order, then OK (${force ? "per-message fallback" : "raw batches"})`, async () => {
      const { ids, status, mode } = await run(force, 40, 250)
      expect(mode).toBe(force ? "message" : "raw")
      expect(status.code).toBe(grpc.status.OK)
      expect(ids).toEqual(Array.from({ length: 40 * 250 }, (_, i) => i + 1))
    })
  }
})
