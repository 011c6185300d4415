/**
 * Put/DeleteRange/Txn over gRPC on the write fast path (kv-server.ts → MvccStore.putNow… →
 * PendingWrite, answered by grpc-bridge.ts without a fiber), on a member whose backend's durability
 * the test controls (test/mvcc/gated-backend.ts): a write is answered only once durable, the
 * watcher sees the revisions in order, and the server's shutdown grace waits for a write in flight.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { eventually, rawClient, unaryCall, type UnaryResult } from "./support/in-process.js"
import { startGatedServer } from "./support/gated-server.js"
import { RawWatch, text } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)

const startGated = async () => {
  const { gate, server, close } = await startGatedServer()
  await Effect.runPromise(gate.release())
  return { gate, endpoint: server.endpoints[0]!, close }
}

describe("KV writes on the fast path, over gRPC", () => {
  it("are answered once durable, in revision order, after the watcher's events", async () => {
    const { gate, endpoint, close } = await startGated()
    const kvc = rawClient("KV", endpoint)
    const watch = new RawWatch(endpoint)
    try {
      watch.create({ key: b("k"), range_end: b("l") })
      await watch.waitFor(1)
      const answers: Array<string> = []
      const put = unaryCall(kvc, "Put", { key: b("k1"), value: b("a") }).then((r) => (answers.push("put"), r))
      const txn = unaryCall(kvc, "Txn", {
        success: [{ request_put: { key: b("k2"), value: b("b") } }]
      }).then((r) => (answers.push("txn"), r))
      const del = unaryCall(kvc, "DeleteRange", { key: b("k1") }).then((r) => (answers.push("delete"), r))
      // all three staged (three batches waiting), none answered
      await eventually(async () => gate.pending() === 3, 5000, "three writes staged")
      expect(answers).toEqual([])
      expect(watch.responses.flatMap((r) => r.events)).toEqual([])
      await Effect.runPromise(gate.release())
      const results: Array<UnaryResult<any>> = await Promise.all([put, txn, del])
      expect(results.map((r) => r.ok)).toEqual([true, true, true])
      const revs = results.map((r) => (r.ok ? Number(r.value.header.revision) : 0))
      expect(revs[1]).toBe(revs[0]! + 1)
      expect(revs[2]).toBe(revs[0]! + 2)
      const evs = await watch.waitForEvents(3)
      expect(evs.map((e: any) => [e.type, text(e.kv.key), Number(e.kv.mod_revision)])).toEqual([
        [0, "k1", revs[0]],
        [0, "k2", revs[1]],
        [1, "k1", revs[2]] // 0 PUT, 1 DELETE
      ])
    } finally {
      watch.close()
      kvc.close()
      await close()
    }
  })

  it("shutdown's grace waits for a write in flight: it is answered OK", async () => {
    const { gate, endpoint, close } = await startGated()
    const kvc = rawClient("KV", endpoint)
    try {
      const put = unaryCall(kvc, "Put", { key: b("k"), value: b("v") })
      await eventually(async () => gate.pending() === 1, 5000, "the write staged")
      const closing = close()
      // the shutdown has started (listeners closed) and waits for the put; make it durable
      await new Promise((r) => setTimeout(r, 50))
      await Effect.runPromise(gate.release())
      const r = await put
      expect(r.ok).toBe(true)
      await closing
    } finally {
      kvc.close()
    }
  })
})
