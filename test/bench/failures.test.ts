/**
 * How the bench fails: gRPC error statuses are counted with the first message kept; a server that
 * stops answering, never speaks HTTP/2, refuses the connection or ends a watch stream gives a
 * BenchError with a clear reason (never a hang); bad options fail before connecting; an
 * interrupted run closes its connections. The misbehaving servers are small node:http2 and TCP
 * servers on loopback.
 */
import { Effect, Either, Fiber } from "effect"
import * as http2 from "node:http2"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type BenchOptions, run, type ScenarioName } from "../../src/bench/index.js"

const listen = async (server: net.Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`
}
const closeServer = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()))

const connectionsOf = (server: net.Server) =>
  new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)))

const eventually = async (read: () => Promise<number>, expected: number) => {
  const deadline = Date.now() + 5000
  let last = await read()
  while (last !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10))
    last = await read()
  }
  expect(last).toBe(expected)
}

const failure = async (scenario: ScenarioName, options: BenchOptions): Promise<string> => {
  const result = await Effect.runPromise(Effect.either(run(scenario, options)))
  if (Either.isRight(result)) throw new Error(`expected a BenchError, got ${JSON.stringify(result.right)}`)
  expect(result.left._tag).toBe("BenchError")
  return result.left.reason
}

describe("bench failures", () => {
  // Answers Put with a trailers-only error status and ends every Watch stream with INTERNAL "boom".
  const failing = http2.createServer()
  failing.on("stream", (stream, headers) => {
    if (headers[":path"] === "/etcdserverpb.KV/Put") {
      stream.respond(
        {
          ":status": 200,
          "content-type": "application/grpc",
          "grpc-status": "8",
          "grpc-message": "too%20many%20requests"
        },
        { endStream: true }
      )
      return
    }
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true })
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "13", "grpc-message": "boom" }))
    stream.once("data", () => stream.end())
  })
  // Accepts streams and never answers them.
  const silent = http2.createServer()
  const silentSessions = new Set<http2.ServerHttp2Session>()
  silent.on("session", (s) => {
    silentSessions.add(s)
    s.on("close", () => silentSessions.delete(s))
  })
  silent.on("stream", (stream) => stream.on("data", () => {}))
  // Accepts TCP connections, reads (so it sees the client's FIN) and never says anything.
  const sink = net.createServer((socket) => socket.resume())
  let failingAt = ""
  let silentAt = ""
  let sinkAt = ""

  beforeAll(async () => {
    failingAt = await listen(failing)
    silentAt = await listen(silent)
    sinkAt = await listen(sink)
  })
  afterAll(async () => {
    for (const s of silentSessions) s.destroy()
    await Promise.all([closeServer(failing), closeServer(silent), closeServer(sink)])
  })

  it("counts error statuses and keeps the first message (percent-decoded)", async () => {
    const r = await Effect.runPromise(run("put", { endpoints: [failingAt], total: 40, clients: 4, conns: 2 }))
    expect(r.count).toBe(0)
    expect(r.errors).toBe(40)
    expect(r.firstError).toBe("too many requests")
    expect(r.value).toBe(0)
  })

  it("fails when a watch stream ends, with the server's status message", async () => {
    expect(await failure("watch-create", { endpoints: [failingAt], total: 10, stallTimeoutMs: 5000 })).toMatch(
      /watch stream 0 ended: boom/
    )
  })

  it("fails when the server stops answering, after the stall timeout", async () => {
    // The bench's timers (the dial timeout, the phase's watchdog) and clock are faked: they move
    // only once the silent server holds the run's requests, so the run is connected and in its
    // phase whatever the machine's speed (a real 0.3 s ran out during the handshake on a loaded
    // machine: "cannot connect"). Sockets stay real; waiting for them uses setImmediate.
    const stalled = async (scenario: ScenarioName, options: BenchOptions, streams: number): Promise<string> => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] })
      try {
        let seen = 0
        const count = () => void seen++
        silent.on("stream", count)
        const result = failure(scenario, options)
        while (seen < streams) await new Promise((r) => setImmediate(r))
        silent.off("stream", count)
        await vi.advanceTimersByTimeAsync(options.stallTimeoutMs! + 100)
        return await result
      } finally {
        vi.useRealTimers()
      }
    }
    expect(await stalled("put", { endpoints: [silentAt], total: 10, stallTimeoutMs: 300 }, 1)).toMatch(
      /^put: no progress for 0\.3 s/
    )
    // the watch scenario's first phase: one stream of two watchers, created on the silent server
    expect(
      await stalled("watch", { endpoints: [silentAt], streams: 1, watchersPerStream: 2, stallTimeoutMs: 300 }, 1)
    ).toMatch(/^creating watchers: no progress/)
  })

  it("fails when the endpoint does not speak HTTP/2 or refuses connections", async () => {
    expect(await failure("put", { endpoints: [sinkAt], stallTimeoutMs: 300 })).toMatch(
      /cannot connect to .*: no HTTP\/2 answer within 0\.3 s/
    )
    // all 8 connections (the failed one and those interrupted with it) are closed
    await eventually(() => connectionsOf(sink), 0)
    // port 1 on loopback: nothing listens there
    expect(await failure("watch", { endpoints: ["127.0.0.1:1"] })).toMatch(
      /cannot connect to 127\.0\.0\.1:1: .*ECONNREFUSED/
    )
  })

  it("refuses bad options before connecting", async () => {
    expect(await failure("put", { endpoints: ["127.0.0.1:1"], clients: 0 })).toMatch(/clients must be an integer ≥ 1/)
    expect(await failure("watch-latency", { endpoints: ["127.0.0.1:1"], putRate: 0 })).toMatch(/put-rate must be/)
    expect(await failure("put", { endpoints: ["https://127.0.0.1:2379"] })).toMatch(/TLS is not supported/)
    expect(await failure("put", { endpoints: ["nonsense"] })).toMatch(/expected host:port/)
    expect(await failure("put", { endpoints: [] })).toMatch(/no endpoints/)
  })

  it("closes its connections when interrupted", async () => {
    const fiber = Effect.runFork(run("watch", { endpoints: [silentAt], streams: 2, watchersPerStream: 2, conns: 2 }))
    await eventually(async () => silentSessions.size, 3) // two for the watch streams, one for the putter
    await Effect.runPromise(Fiber.interrupt(fiber))
    await eventually(() => connectionsOf(silent), 0)
  })
})
