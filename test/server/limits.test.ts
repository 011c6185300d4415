/**
 * Limits against hostile or broken clients, each with etcd's flag: --max-txn-ops and
 * --max-concurrent-streams (differential against etcd 3.4 with the same flag), the keepalive
 * ping policy (--grpc-keepalive-min-time: too many pings → GOAWAY ENHANCE_YOUR_CALM
 * "too_many_pings", as etcd), and a unary call cancelled when its deadline passes.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, Scope } from "effect"
import * as http2 from "node:http2"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCallRunner } from "../../src/server/grpc-bridge.js"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { untilDone } from "../support/stall.js"
import {
  call,
  eventually,
  type InProcessServer,
  rawClient,
  startInProcess,
  startMember,
  unaryCall
} from "./support/in-process.js"
import { RawWatch } from "./support/raw-watch.js"

describe.skipIf(skipEtcd)("limits, differential against etcd 3.4", () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  beforeAll(async () => {
    ;[etcd, ours] = await Promise.all([
      EtcdProcess.start({
        extraArgs: ["--max-txn-ops", "3", "--max-concurrent-streams", "7", "--grpc-keepalive-min-time", "5s"]
      }),
      startInProcess({ maxTxnOps: 3, maxConcurrentStreams: 7 })
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  const put = (k: string) => ({ request_put: { key: Buffer.from(k), value: Buffer.from("v") } })

  it("--max-txn-ops: a txn over the limit (in a branch, or nested) is refused with etcd's error", async () => {
    const txns = [
      { success: [put("a"), put("b"), put("c")] },
      { success: [put("a"), put("b"), put("c"), put("d")] },
      { compare: [], failure: [put("a"), put("b"), put("c"), put("d")] },
      { success: [put("a"), { request_txn: { success: [put("b"), put("c"), put("d")] } }] }
    ]
    for (const txn of txns) {
      const [theirs, mine] = await Promise.all([
        unaryCall(rawClient("KV", etcd.endpoint), "Txn", txn),
        unaryCall(rawClient("KV", ours.endpoint), "Txn", txn)
      ])
      expect(mine.ok).toBe(theirs.ok)
      if (!theirs.ok && !mine.ok)
        expect({ code: mine.code, details: mine.details }).toEqual({ code: theirs.code, details: theirs.details })
    }
    const r = await unaryCall(rawClient("KV", ours.endpoint), "Txn", txns[1])
    expect(r).toMatchObject({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details: "etcdserver: too many operations in txn request"
    })
  })

  const settings = (endpoint: string) =>
    new Promise<http2.Settings>((resolve, reject) => {
      const session = http2.connect(`http://${endpoint}`)
      session.once("remoteSettings", (s) => {
        session.close()
        resolve(s)
      })
      session.once("error", reject)
    })

  it("--max-concurrent-streams is announced in the server's HTTP/2 SETTINGS, as etcd's", async () => {
    const [theirs, mine] = await Promise.all([settings(etcd.endpoint), settings(ours.endpoint)])
    expect(theirs.maxConcurrentStreams).toBe(7)
    expect(mine.maxConcurrentStreams).toBe(7)
  })

  /**
   * Pings `n` times back to back on an idle connection; the GOAWAY it gets, if any. With `untilGoaway`
   * it waits for the server to end the connection (however long a loaded machine takes); without,
   * it leaves 300 ms after the last ping (a GOAWAY later than that would go unseen: a pass, never a
   * false failure).
   */
  const pingFlood = (endpoint: string, n: number, untilGoaway: boolean) =>
    new Promise<{ code: number; data: string } | undefined>((resolve) => {
      const session = http2.connect(`http://${endpoint}`)
      let result: { code: number; data: string } | undefined
      session.on("goaway", (code, _last, data) => {
        result = { code, data: data?.toString() ?? "" }
      })
      session.on("error", () => {})
      session.once("close", () => resolve(result))
      session.once("connect", async () => {
        for (let i = 0; i < n && !session.destroyed; i++) {
          await new Promise<void>((done) => {
            if (!session.ping(() => done())) done()
          })
        }
        if (!untilGoaway) setTimeout(() => session.destroy(), 300)
      })
    })

  it("--grpc-keepalive-min-time: a client pinging too often gets GOAWAY ENHANCE_YOUR_CALM too_many_pings, as from etcd", async () => {
    const [theirs, mine] = await Promise.all([pingFlood(etcd.endpoint, 5, true), pingFlood(ours.endpoint, 5, true)])
    expect(theirs).toEqual({ code: http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, data: "too_many_pings" })
    expect(mine).toEqual(theirs)
    // two pings are within the policy on both
    const [theirs2, mine2] = await Promise.all([pingFlood(etcd.endpoint, 2, false), pingFlood(ours.endpoint, 2, false)])
    expect(theirs2).toBeUndefined()
    expect(mine2).toBeUndefined()
  }, 20_000)

  it("--grpc-keepalive-min-time: pings while a watch streams (a grpc-go client's BDP pings) are not too many, as on etcd", async () => {
    const putter = (endpoint: string) => {
      const kv = rawClient("KV", endpoint)
      let i = 0
      return {
        put: () => call(kv, "Put", { key: Buffer.from(`/ka/${i++ % 5}`), value: Buffer.from("v") }),
        close: () => kv.close()
      }
    }
    const [a, b] = [putter(etcd.endpoint), putter(ours.endpoint)]
    const [theirs, mine] = await Promise.all([
      pingWhileStreaming(etcd.endpoint, 6, a.put),
      pingWhileStreaming(ours.endpoint, 6, b.put)
    ])
    a.close()
    b.close()
    expect(theirs).toBeUndefined()
    expect(mine).toEqual(theirs)
  }, 20_000)
})

/**
 * A Watch stream with events flowing while the client pings after every data frame it receives
 * (as grpc-go's BDP estimator does): not too many pings, since the server keeps writing; the
 * GOAWAY it gets, if any.
 */
const pingWhileStreaming = (endpoint: string, pings: number, put: () => Promise<unknown>) =>
  new Promise<{ code: number; data: string } | undefined>((resolve, reject) => {
    const session = http2.connect(`http://${endpoint}`)
    let result: { code: number; data: string } | undefined
    session.on("goaway", (code, _last, data) => {
      result = { code, data: data?.toString() ?? "" }
    })
    session.on("error", () => {})
    const stream = session.request({
      ":method": "POST",
      ":path": "/etcdserverpb.Watch/Watch",
      "content-type": "application/grpc",
      te: "trailers"
    })
    stream.on("error", () => {})
    // WatchRequest{create_request{key: "/ka/", range_end: "/ka0"}}
    const create = Buffer.from([0x0a, 0x0c, 0x0a, 0x04, ...Buffer.from("/ka/"), 0x12, 0x04, ...Buffer.from("/ka0")])
    const frame = Buffer.alloc(5 + create.length)
    frame.writeUInt32BE(create.length, 1)
    create.copy(frame, 5)
    stream.write(frame)
    let acked = 0
    let inFlight = false
    let writing = true
    const writer = (async () => {
      while (writing && !session.destroyed) {
        await put()
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    const finish = () => {
      writing = false
      writer.then(() => {
        session.destroy()
        resolve(result)
      }, reject)
    }
    stream.on("data", () => {
      if (inFlight || session.destroyed || acked >= pings) return
      inFlight = true
      session.ping(() => {
        inFlight = false
        if (++acked === pings) setTimeout(finish, 300)
      })
    })
    session.once("close", () => {
      if (acked < pings) finish()
    })
  })

describe("a unary call past its deadline is cancelled", () => {
  it("the handler's fiber is interrupted when the client's deadline passes (grpc-js does not say so)", async () => {
    const scope = Effect.runSync(Scope.make())
    const runner = await Effect.runPromise(Scope.extend(makeCallRunner(), scope))
    let started = 0
    let interrupted = 0
    let finished = 0
    const server = new grpc.Server()
    const bytes = {
      path: "/test.Slow/Wait",
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b
    }
    server.addService(
      { Wait: bytes },
      {
        // never answers: only the deadline can end it, so no time decides the outcome
        Wait: runner.unary<Buffer, Buffer>("Wait", () =>
          Effect.zipRight(
            Effect.sync(() => started++),
            Effect.never
          ).pipe(
            Effect.onInterrupt(() => Effect.sync(() => interrupted++)),
            Effect.ensuring(Effect.sync(() => finished++))
          )
        )
      }
    )
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)))
    )
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
    try {
      // connected first: a deadline that passes while the channel still connects ends the call in
      // the client before the server ever sees it (at load 20 a first connection took longer than it)
      await new Promise<void>((resolve, reject) =>
        client.waitForReady(Date.now() + 60_000, (e) => (e ? reject(e) : resolve()))
      )
      const status = await new Promise<number>((resolve) =>
        client.makeUnaryRequest(
          "/test.Slow/Wait",
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          // long enough for the request to reach the server (in this process) on a loaded machine
          { deadline: Date.now() + 2_000 },
          (err) => resolve(err?.code ?? 0)
        )
      )
      expect(status).toBe(grpc.status.DEADLINE_EXCEEDED)
      await untilDone(
        "the handler's interruption (started, interrupted)",
        () => interrupted > 0,
        () => `${started}, ${interrupted}`
      )
      expect(started).toBe(1)
      expect(interrupted).toBe(1)
      expect(finished).toBe(1)
      expect(runner.inFlight().unary).toBe(0)
    } finally {
      client.close()
      server.forceShutdown()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    // every wait above is bounded on its own (the ready wait, the deadline, untilDone's stall)
  }, 0)
})

describe("a watch client that never reads", () => {
  it("cannot grow the server's memory without bound: ≤ chanBufLen responses queued, the rest left in the store", async () => {
    const m = await startMember()
    const kv = rawClient("KV", m.endpoint)
    const w = new RawWatch(m.endpoint)
    try {
      w.create({ key: Buffer.from("nr/"), range_end: Buffer.from("nr0") })
      await eventually(() => w.responses.length >= 1, 5000, "watch created")
      // the client stops reading: HTTP/2 flow control stops the server's writes once its window is full
      w.call.pause()
      const value = Buffer.alloc(4096, 120)
      // 2,000 puts of 4 KiB (one event, one response each): 8 MiB written under the watch
      let maxPending = 0
      for (let t = 0; t < 40; t++) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => call(kv, "Put", { key: Buffer.from(`nr/${i}`), value })))
        maxPending = Math.max(maxPending, m.watchable.pendingEventsCount())
      }
      // the watcher left the synced group: what it has not been sent stays in the store, not in memory
      expect(m.watchable.slowWatcherCount()).toBe(1)
      // the bound: at most chanBufLen (128) responses wait in the stream's channel (each at most
      // one revision's events, fragmented by --max-request-bytes), one batch in grpc-js' write
      // buffer and the HTTP/2 window in the socket; the events held for the slow watcher never
      // exceed one batch
      expect(maxPending).toBeLessThanOrEqual(128)
      expect(w.responses.length).toBeLessThan(2000)
      // and nothing was lost: reading again delivers all 2,000 events in order
      w.call.resume()
      const events = await w.waitForEvents(2000, 30_000)
      const revs = events.map((e: any) => Number(e.kv.mod_revision))
      expect(new Set(revs).size).toBe(2000)
      expect(revs).toEqual([...revs].sort((x, y) => x - y))
    } finally {
      w.close()
      kv.close()
      await m.close()
    }
  }, 60_000)
})
