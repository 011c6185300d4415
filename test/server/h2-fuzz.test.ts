/**
 * Hostile HTTP/2 and gRPC framing while a writer puts keys: random HTTP/2 frames after the client
 * preface (any type, flags, stream id and length, payloads that do and do not match), and gRPC
 * messages whose length prefix lies (cut short, or over --max-request-bytes) on real HTTP/2
 * streams. Each hostile connection or stream ends with an error of its own; the server keeps
 * serving, and every write it acknowledged meanwhile is there afterwards at its revision.
 */
import * as http2 from "node:http2"
import * as net from "node:net"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type InProcessServer, rawClient, sleep, startInProcess, unaryCall } from "./support/in-process.js"

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

interface Frame {
  readonly type: number
  readonly flags: number
  readonly stream: number
  readonly payload: Uint8Array
  /** the length the header claims (the payload's own, or a lie) */
  readonly claimed: number | undefined
}

const frame = fc.record({
  type: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 255 })),
  flags: fc.integer({ min: 0, max: 255 }),
  stream: fc.oneof(fc.constantFrom(0, 1, 3, 5), fc.integer({ min: 0, max: 0x7fffffff })),
  payload: fc.uint8Array({ maxLength: 64 }),
  claimed: fc.option(fc.integer({ min: 0, max: 0xffffff }), { nil: undefined })
})

const encode = (f: Frame): Buffer => {
  const len = f.claimed ?? f.payload.length
  const h = Buffer.alloc(9)
  h.writeUIntBE(len, 0, 3)
  h[3] = f.type
  h[4] = f.flags
  h.writeUInt32BE(f.stream >>> 0, 5)
  return Buffer.concat([h, f.payload])
}

/** sends the bytes on a fresh connection; resolves when the server closes it, or after `ms` */
const hostile = (port: number, bytes: Buffer, ms = 150): Promise<void> =>
  new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1")
    const done = () => {
      clearTimeout(t)
      s.destroy()
      resolve()
    }
    const t = setTimeout(done, ms)
    s.on("error", done)
    s.on("close", done)
    s.on("data", () => {})
    s.write(bytes)
  })

/** one gRPC call on an HTTP/2 stream whose message prefix claims `claimed` bytes; the grpc-status it ends with */
const lyingCall = (endpoint: string, body: Buffer, claimed: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    const session = http2.connect(`http://${endpoint}`)
    session.on("error", () => resolve(undefined))
    const req = session.request({
      ":method": "POST",
      ":path": "/etcdserverpb.KV/Put",
      "content-type": "application/grpc",
      te: "trailers"
    })
    let status: string | undefined
    const end = () => {
      session.close()
      resolve(status)
    }
    req.on("response", (h) => (status = (h["grpc-status"] as string | undefined) ?? status))
    req.on("trailers", (t) => (status = (t["grpc-status"] as string | undefined) ?? status))
    req.on("data", () => {})
    req.on("end", end)
    req.on("error", end)
    req.on("close", end)
    const prefix = Buffer.alloc(5)
    prefix.writeUInt32BE(claimed, 1)
    req.end(Buffer.concat([prefix, body]))
  })

describe("hostile HTTP/2 and gRPC framing", () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(async () => {
    await server?.close()
  })

  it("random frames and lying gRPC lengths: each fails on its own, the server serves on and keeps every acknowledged write", async () => {
    const port = Number(server.endpoint.split(":").pop())
    const kv = rawClient("KV", server.endpoint)
    const acked = new Map<string, string>()
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const r = await unaryCall(kv, "Put", { key: Buffer.from(`fuzz/${i}`), value: Buffer.from(`v${i}`) })
        if (r.ok) acked.set(`fuzz/${i}`, String(r.value.header.revision))
      }
    })()

    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 6 }), fc.boolean(), async (frames, withPreface) => {
        await hostile(port, Buffer.concat([withPreface ? PREFACE : Buffer.alloc(0), ...frames.map(encode)]))
      }),
      { numRuns: 200 }
    )

    // a valid Put message (key "x", value "y") behind prefixes that lie about its length
    const put = Buffer.from([0x0a, 0x01, 0x78, 0x12, 0x01, 0x79])
    const short = await lyingCall(server.endpoint, put, put.length + 10) // ends before the message does
    const huge = await lyingCall(server.endpoint, put, 64 * 1024 * 1024) // over --max-request-bytes and the gRPC limit
    expect(short).toBeDefined()
    expect(short).not.toBe("0")
    expect(huge).toBeDefined()
    expect(huge).not.toBe("0")

    writing = false
    await writer
    kv.close()
    expect(acked.size).toBeGreaterThan(0)
    // still serving, and nothing acknowledged is missing
    const kv2 = rawClient("KV", server.endpoint)
    try {
      await call(kv2, "Put", { key: Buffer.from("after"), value: Buffer.from("ok") })
      const all = await call(kv2, "Range", { key: Buffer.from("fuzz/"), range_end: Buffer.from("fuzz0") })
      const stored = new Map<string, string>(all.kvs.map((x: any) => [x.key.toString(), String(x.mod_revision)]))
      for (const [key, rev] of acked) expect(stored.get(key), key).toBe(rev)
    } finally {
      kv2.close()
    }
    await sleep(0)
  })
})
