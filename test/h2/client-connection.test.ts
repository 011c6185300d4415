/**
 * The bench's HTTP/2 client connection against node:http2's server (nghttp2: its HPACK encoder
 * with Huffman and a dynamic table, its flow control, padding, CONTINUATION): random headers and
 * trailers decoded exactly over one long-lived connection, with and without padding and through a
 * proxy that cuts the byte stream into tiny pieces; bodies larger than every flow-control window
 * both ways; the server's stream limit; PING, RST_STREAM and GOAWAY.
 */
import { Effect, FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import * as http2 from "node:http2"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import { H2Connection } from "../../src/h2/client-connection.js"
import type { HeaderList } from "../../src/h2/hpack.js"

interface Spec {
  readonly headers?: Record<string, string>
  readonly trailers?: Record<string, string>
  /** response body bytes */
  readonly size?: number
  /** answer with this RST_STREAM code instead */
  readonly rst?: number
  readonly delayMs?: number
}

/** Answers each request as its JSON body says; echoes the request's size in "x-request-size". */
const testServer = (options: http2.ServerOptions = {}) => {
  const server = http2.createServer(options)
  let concurrent = 0
  const stats = { maxConcurrent: 0, sessions: new Set<http2.ServerHttp2Session>() }
  server.on("session", (s) => {
    stats.sessions.add(s)
    s.on("close", () => stats.sessions.delete(s))
  })
  server.on("stream", (stream) => {
    concurrent++
    stats.maxConcurrent = Math.max(stats.maxConcurrent, concurrent)
    stream.on("close", () => concurrent--)
    stream.on("error", () => {}) // e.g. closed with the RST code a test asked for
    const parts: Array<Buffer> = []
    stream.on("data", (c: Buffer) => parts.push(c))
    stream.on("end", () => {
      const body = Buffer.concat(parts)
      const spec: Spec = body[0] === 0x7b ? JSON.parse(body.toString()) : {}
      const answer = () => {
        if (spec.rst !== undefined) return stream.close(spec.rst)
        stream.respond(
          { ":status": 200, "x-request-size": String(body.length), ...spec.headers },
          { waitForTrailers: true }
        )
        stream.on("wantTrailers", () => stream.sendTrailers(spec.trailers ?? {}))
        stream.end(Buffer.alloc(spec.size ?? 0, 0x61))
      }
      if (spec.delayMs !== undefined) setTimeout(answer, spec.delayMs)
      else answer()
    })
  })
  return { server, stats }
}

const listen = async (server: net.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as net.AddressInfo).port
}

/** A proxy that forwards the server's bytes in tiny pieces, each its own write after a pause. */
const chopper = async (targetPort: number): Promise<net.Server> => {
  const sizes = [1, 2, 3, 9, 1, 5, 8, 13, 4, 100, 17, 1000, 7]
  const proxy = net.createServer((client) => {
    const upstream = net.connect({ host: "127.0.0.1", port: targetPort, noDelay: true })
    client.setNoDelay(true)
    client.pipe(upstream)
    let queue = Promise.resolve()
    let i = 0
    upstream.on("data", (chunk: Buffer) => {
      upstream.pause()
      queue = queue.then(async () => {
        for (let at = 0; at < chunk.length;) {
          const n = sizes[i++ % sizes.length]!
          client.write(chunk.subarray(at, at + n))
          at += n
          await new Promise((r) => setImmediate(r))
        }
        upstream.resume()
      })
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on("close", end)
    upstream.on("close", end)
    client.on("error", end)
    upstream.on("error", end)
  })
  await listen(proxy)
  return proxy
}

const connect = (port: number) =>
  new Promise<H2Connection>((resolve, reject) => {
    const c: H2Connection = new H2Connection("127.0.0.1", port, `127.0.0.1:${port}`, (error) =>
      error === undefined ? resolve(c) : reject(new Error(error))
    )
  })

interface Answer {
  readonly blocks: Array<HeaderList>
  readonly body: Buffer
  readonly reset?: string
}

const request = (conn: H2Connection, spec: Spec | Uint8Array): Promise<Answer> =>
  new Promise((resolve) => {
    const blocks: Array<HeaderList> = []
    const body: Array<Buffer> = []
    const stream = conn.open("/test.Test/Call", {
      onHeaders: (h) => blocks.push(h),
      onData: (buf, start, end) => body.push(Buffer.from(buf.subarray(start, end))),
      onEnd: () => resolve({ blocks, body: Buffer.concat(body) }),
      onReset: (reason) => resolve({ blocks, body: Buffer.concat(body), reset: reason })
    })
    conn.send(stream, spec instanceof Uint8Array ? spec : Buffer.from(JSON.stringify(spec)), true)
  })

const get = (list: HeaderList, name: string) => {
  for (let i = 0; i < list.length; i += 2) if (list[i] === name) return list[i + 1]
  return undefined
}

// Header names and values nghttp2 accepts; values long enough to be Huffman-coded and indexed.
const name = fc.stringMatching(/^x-[a-z0-9-]{1,24}$/)
const value = fc.oneof(
  fc.stringMatching(/^[!-~]([ -~]{0,80}[!-~])?$/),
  fc.constantFrom("0", "application/grpc", "same-value")
)
const fields = fc.dictionary(name, value, { minKeys: 0, maxKeys: 8 })

describe("HTTP/2 client connection", () => {
  const plain = testServer({ maxSessionMemory: 512 }) // MB: it buffers 72 MiB of answers at once
  const padded = testServer({ paddingStrategy: http2.constants.PADDING_STRATEGY_MAX })
  const limited = testServer({ settings: { maxConcurrentStreams: 2 } })
  let plainPort = 0
  let paddedPort = 0
  let limitedPort = 0
  let chopped: net.Server
  const conns: Array<H2Connection> = []
  const open = async (port: number) => {
    const c = await connect(port)
    conns.push(c)
    return c
  }

  beforeAll(async () => {
    plainPort = await listen(plain.server)
    paddedPort = await listen(padded.server)
    limitedPort = await listen(limited.server)
    chopped = await chopper(paddedPort)
  })
  afterAll(async () => {
    for (const c of conns) c.close()
    for (const s of [plain, padded, limited]) for (const session of s.stats.sessions) session.destroy()
    await Promise.all([plain.server, padded.server, limited.server, chopped].map((s) => new Promise((r) => s.close(r))))
  })

  for (const [label, port] of [
    ["plain", () => plainPort],
    ["padded, in tiny pieces", () => (chopped.address() as net.AddressInfo).port]
  ] as const) {
    it.live.prop(
      `decodes every header block nghttp2 encodes (${label})`,
      [fc.array(fc.tuple(fields, fields, fc.nat(3000)), { minLength: 1, maxLength: 6 })],
      ([calls]) =>
        Effect.promise(async () => {
          const conn = await open(port())
          for (const [headers, extra, size] of calls) {
            // trailers are never empty in gRPC (grpc-status), and node sends none for an empty set
            const trailers = { ...extra, "grpc-status": "0" }
            const spec: Spec = { headers, trailers, size }
            const a = await request(conn, spec)
            expect(a.reset).toBeUndefined()
            expect(a.blocks.length).toBe(2)
            const [h, t] = [a.blocks[0]!, a.blocks[1]!]
            expect(get(h, ":status")).toBe("200")
            expect(get(h, "x-request-size")).toBe(String(JSON.stringify(spec).length))
            for (const [k, v] of Object.entries(headers)) expect(get(h, k)).toBe(v)
            for (const [k, v] of Object.entries(trailers)) expect(get(t, k)).toBe(v)
            expect(a.body.length).toBe(size)
          }
          conn.close()
        }),
      { fastCheck: { numRuns: 40 } }
    )
  }

  it("keeps one dynamic table in step over many calls", async () => {
    const conn = await open(plainPort)
    for (let i = 0; i < 300; i++) {
      const a = await request(conn, {
        headers: { "x-i": String(i), "x-fixed": "v".repeat(i % 50) },
        trailers: { "grpc-status": String(i % 17) }
      })
      expect(get(a.blocks[0]!, "x-i")).toBe(String(i))
      expect(get(a.blocks[1]!, "grpc-status")).toBe(String(i % 17))
    }
  })

  it("reads a header block continued in CONTINUATION frames", async () => {
    const conn = await open(paddedPort)
    const big = "z".repeat(20_000) + "!" // more than one 16 KiB frame
    const a = await request(conn, { headers: { "x-big": big } })
    expect(get(a.blocks[0]!, "x-big")).toBe(big)
  })

  it("sends and receives more than every flow-control window", async () => {
    const conn = await open(plainPort)
    // 1 MiB up: the server's windows are 64 KiB, so sending waits for its WINDOW_UPDATEs
    const up = Buffer.alloc(1 << 20, 0x62)
    const sent = await request(conn, up)
    expect(sent.reset).toBeUndefined()
    expect(get(sent.blocks[0]!, "x-request-size")).toBe(String(up.length))
    // 3 × 24 MiB down, concurrently: past the 16 MiB stream window and the 64 MiB connection window
    const answers = await Promise.all([0, 1, 2].map(() => request(conn, { size: 24 << 20 })))
    for (const a of answers) {
      expect(a.reset, a.reset).toBeUndefined()
      expect(a.body.length).toBe(24 << 20)
    }
  })

  it("keeps to the server's MAX_CONCURRENT_STREAMS, queueing the rest", async () => {
    const conn = await open(limitedPort)
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(conn, { delayMs: 5, headers: { "x-n": String(i) } }))
    )
    answers.forEach((a, i) => expect(get(a.blocks[0]!, "x-n")).toBe(String(i)))
    expect(limited.stats.maxConcurrent).toBe(2)
  })

  it("answers PINGs, reports RST_STREAM and GOAWAY", async () => {
    const conn = await open(plainPort)
    await request(conn, {}) // the server's session exists now
    const session = [...plain.stats.sessions].at(-1)!
    const pong = await new Promise<boolean>((resolve) => session.ping((error) => resolve(error === null)))
    expect(pong).toBe(true)
    const refused = await request(conn, { rst: http2.constants.NGHTTP2_REFUSED_STREAM })
    expect(refused.reset).toBe("stream reset by the server (RST_STREAM REFUSED_STREAM)")
    const failed = new Promise<string>((resolve) => conn.onFailure(resolve))
    session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from("calm down"))
    expect(await failed).toMatch(/sent GOAWAY \(ENHANCE_YOUR_CALM: calm down\)/)
    expect(conn.broken).toMatch(/GOAWAY/)
  })
})
