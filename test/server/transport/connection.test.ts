/**
 * The lean transport's connection (src/server/transport/connection.ts) frame by frame: a raw peer
 * writes frames to a LeanGrpcServer over loopback and checks the frames it answers with.
 */
import type * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { ErrorCode, Flag, FrameType } from "../../../src/h2/frames.js"
import { LeanGrpcServer } from "../../../src/server/transport/lean-server.js"
import { grpcMessage, RawPeer, record, requestHeaders } from "./raw-peer.js"

const identity = (b: Buffer) => b
const method = (path: string, requestStream: boolean, responseStream: boolean) => ({
  path,
  requestStream,
  responseStream,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity
})
const definition = {
  Unary: method("/test.Echo/Unary", false, false),
  Never: method("/test.Echo/Never", false, false),
  Fail: method("/test.Echo/Fail", false, false),
  Bidi: method("/test.Echo/Bidi", true, true),
  Hold: method("/test.Echo/Hold", true, true)
} as unknown as grpc.ServiceDefinition

interface Call extends NodeJS.EventEmitter {
  request: Buffer
  cancelled: boolean
  getDeadline(): number
  read(): Buffer | null
  write(b: Buffer): boolean
  end(): void
  metadata: grpc.Metadata
}
const cancelledCalls: Array<string> = []
/** calls of Never that started (it only waits to be cancelled) */
let neverStarted = 0
const impl = {
  Unary: (call: Call, cb: (e: unknown, r?: Buffer) => void) =>
    cb(null, Buffer.concat([call.request, Buffer.from(String(call.metadata.get("x-tag")[0] ?? ""))])),
  Never: (call: Call) => {
    neverStarted++
    call.once("cancelled", () => cancelledCalls.push("Never"))
  },
  Fail: (_call: Call, cb: (e: unknown) => void) => cb({ code: 9, details: "naïve 100% fail\n" }),
  Bidi: (call: Call) => {
    call.on("readable", () => {
      for (let m = call.read(); m !== null; m = call.read()) call.write(m)
    })
    call.once("end", () => call.end())
  },
  // a stream whose handler never reads
  Hold: () => {}
} as unknown as grpc.UntypedServiceImplementation

let lean: LeanGrpcServer
let listener: net.Server
let port: number

beforeAll(async () => {
  lean = new LeanGrpcServer({
    maxConcurrentStreams: 4,
    maxReceiveMessageBytes: 1000,
    keepaliveIntervalMs: 0,
    keepaliveTimeoutMs: 0,
    pingMinTimeMs: 5000,
    handshakeTimeoutMs: 500
  })
  lean.addService(definition, impl)
  listener = net.createServer((s) => lean.accept(s))
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r))
  port = (listener.address() as net.AddressInfo).port
})

afterAll(async () => {
  await Effect.runPromise(lean.close(100))
  listener.close()
})

const unary = (peer: RawPeer, id: number, path: string, body: Buffer, extra: Record<string, string> = {}) => {
  peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders(path, extra))
  peer.send(FrameType.DATA, Flag.END_STREAM, id, grpcMessage(body))
}

describe("lean transport connection", () => {
  it("answers the preface with SETTINGS, acknowledges the client's, and serves a unary call", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Unary", Buffer.from("hello"), { "x-tag": "!" })
    const trailers = await peer.trailers(1)
    expect(trailers).toEqual({ "grpc-status": "0" })
    const kinds = peer.frames.map((f) => [f.type, f.flags & Flag.ACK])
    expect(kinds[0]).toEqual([FrameType.SETTINGS, 0])
    expect(kinds).toContainEqual([FrameType.SETTINGS, Flag.ACK])
    const headers = peer.frames.find((f) => f.type === FrameType.HEADERS && f.streamId === 1)!
    expect(record(headers.headers!)).toEqual({ ":status": "200", "content-type": "application/grpc" })
    const data = peer.frames.find((f) => f.type === FrameType.DATA && f.streamId === 1)!
    expect(data.payload).toEqual(grpcMessage(Buffer.from("hello!")))
    peer.close()
  })

  it("answers PING with its ACK and the same payload", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.PING, 0, 0, Buffer.from("01234567"))
    const ack = await peer.until((fs) => fs.find((f) => f.type === FrameType.PING))
    expect(ack!.flags).toBe(Flag.ACK)
    expect(ack!.payload.toString()).toBe("01234567")
    peer.close()
  })

  it("answers an unknown method or service with grpc-go's Unimplemented, trailers only", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Nope", Buffer.alloc(0))
    unary(peer, 3, "/test.Other/Unary", Buffer.alloc(0))
    expect(await peer.trailers(1)).toEqual({
      ":status": "200",
      "content-type": "application/grpc",
      "grpc-status": "12",
      "grpc-message": "unknown method Nope for service test.Echo"
    })
    expect((await peer.trailers(3))!["grpc-message"]).toBe("unknown service test.Other")
    peer.close()
  })

  it("refuses a message above the receive limit with RESOURCE_EXHAUSTED and grpc-go's text", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Unary", Buffer.alloc(1001))
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("8")
    expect(t!["grpc-message"]).toBe("grpc: received message larger than max (1001 vs. 1000)")
    // the connection serves on
    unary(peer, 3, "/test.Echo/Unary", Buffer.from("ok"))
    expect((await peer.trailers(3))!["grpc-status"]).toBe("0")
    peer.close()
  })

  it("percent-encodes grpc-message", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Fail", Buffer.alloc(0))
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("9")
    expect(t!["grpc-message"]).toBe("na%C3%AFve 100%25 fail%0A")
    peer.close()
  })

  it("ends a call past its grpc-timeout with DEADLINE_EXCEEDED and cancels nothing else", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Never", Buffer.alloc(0), { "grpc-timeout": "20m" })
    expect((await peer.trailers(1))!["grpc-status"]).toBe("4")
    unary(peer, 3, "/test.Echo/Unary", Buffer.from("x"))
    expect((await peer.trailers(3))!["grpc-status"]).toBe("0")
    peer.close()
  })

  it("refuses grpc-encoding it does not support", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 1, "/test.Echo/Unary", Buffer.alloc(0), { "grpc-encoding": "gzip" })
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("12")
    expect(t!["grpc-message"]).toBe('grpc: Decompressor is not installed for grpc-encoding "gzip"')
    peer.close()
  })

  it("streams both ways: every message echoed in order, OK at the client's end", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Bidi"))
    const sent: Array<Buffer> = []
    for (let i = 0; i < 50; i++) {
      const m = grpcMessage(Buffer.from(`message ${i}`))
      sent.push(m)
      peer.send(FrameType.DATA, 0, 1, m)
    }
    peer.send(FrameType.DATA, Flag.END_STREAM, 1, Buffer.alloc(0))
    expect(await peer.trailers(1)).toEqual({ "grpc-status": "0" })
    const data = Buffer.concat(
      peer.frames.filter((f) => f.type === FrameType.DATA && f.streamId === 1).map((f) => f.payload)
    )
    expect(data).toEqual(Buffer.concat(sent))
    peer.close()
  })

  it("cancels the call when the client resets its stream", async () => {
    const peer = await RawPeer.connect(port)
    const before = cancelledCalls.length
    const started = neverStarted
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Never"))
    peer.send(FrameType.DATA, Flag.END_STREAM, 1, grpcMessage(Buffer.alloc(0)))
    // the handler runs (and listens for the cancel) before the reset is sent
    while (neverStarted === started) await new Promise((r) => setTimeout(r, 5))
    const rst = Buffer.alloc(4)
    rst.writeUInt32BE(ErrorCode.CANCEL)
    peer.send(FrameType.RST_STREAM, 0, 1, rst)
    peer.send(FrameType.PING, 0, 0, Buffer.alloc(8))
    await peer.until((fs) => fs.find((f) => f.type === FrameType.PING))
    expect(cancelledCalls.length).toBe(before + 1)
    peer.close()
  })

  it("refuses streams beyond MAX_CONCURRENT_STREAMS with REFUSED_STREAM", async () => {
    const peer = await RawPeer.connect(port)
    for (let id = 1; id <= 9; id += 2) {
      peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders("/test.Echo/Bidi"))
    }
    const rst = await peer.until((fs) => fs.find((f) => f.type === FrameType.RST_STREAM))
    expect(rst!.streamId).toBe(9)
    expect(rst!.payload.readUInt32BE(0)).toBe(ErrorCode.REFUSED_STREAM)
    peer.close()
  })

  it("ends the connection with FRAME_SIZE_ERROR on a frame above SETTINGS_MAX_FRAME_SIZE", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.alloc(16385))
    expect((await peer.goaway())!.code).toBe(ErrorCode.FRAME_SIZE_ERROR)
    await peer.until(() => (peer.closed ? true : undefined))
    // the server serves others
    const other = await RawPeer.connect(port)
    unary(other, 1, "/test.Echo/Unary", Buffer.from("x"))
    expect((await other.trailers(1))!["grpc-status"]).toBe("0")
    other.close()
  })

  it("ends the connection with PROTOCOL_ERROR on a bad preface", async () => {
    const peer = await RawPeer.connect(port, false)
    peer.socket.write("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n")
    expect((await peer.goaway())!.code).toBe(ErrorCode.PROTOCOL_ERROR)
  })

  it("ends the connection with COMPRESSION_ERROR on an undecodable header block", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]))
    expect((await peer.goaway())!.code).toBe(ErrorCode.COMPRESSION_ERROR)
  })

  it("refuses a header list above 128 fields on its stream with ENHANCE_YOUR_CALM, and serves on", async () => {
    const peer = await RawPeer.connect(port)
    const extra: Record<string, string> = {}
    for (let i = 0; i < 130; i++) extra[`x-h${i}`] = "v"
    peer.send(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, requestHeaders("/test.Echo/Unary", extra))
    const rst = await peer.until((fs) => fs.find((f) => f.type === FrameType.RST_STREAM && f.streamId === 1))
    expect(rst!.payload.readUInt32BE(0)).toBe(ErrorCode.ENHANCE_YOUR_CALM)
    unary(peer, 3, "/test.Echo/Unary", Buffer.from("x"))
    expect((await peer.trailers(3))!["grpc-status"]).toBe("0")
    peer.close()
  })

  it("ends the connection with PROTOCOL_ERROR when a stream id goes backwards", async () => {
    const peer = await RawPeer.connect(port)
    unary(peer, 5, "/test.Echo/Unary", Buffer.from("x"))
    await peer.trailers(5)
    unary(peer, 3, "/test.Echo/Unary", Buffer.from("x"))
    expect((await peer.goaway())!).toMatchObject({ code: ErrorCode.PROTOCOL_ERROR, lastStreamId: 5 })
  })

  it("ends a connection whose header block is never finished with ENHANCE_YOUR_CALM (slowloris)", async () => {
    const peer = await RawPeer.connect(port)
    // the SETTINGS exchange first: our ACK of the server's must not fall inside the open block
    await peer.until((fs) => fs.find((f) => f.type === FrameType.SETTINGS && (f.flags & Flag.ACK) !== 0))
    peer.send(FrameType.HEADERS, 0, 1, requestHeaders("/test.Echo/Unary").subarray(0, 10))
    expect((await peer.goaway())!.code).toBe(ErrorCode.ENHANCE_YOUR_CALM)
  })

  it("ends the connection with ENHANCE_YOUR_CALM after a flood of CONTINUATION frames", async () => {
    const peer = await RawPeer.connect(port)
    await peer.until((fs) => fs.find((f) => f.type === FrameType.SETTINGS && (f.flags & Flag.ACK) !== 0))
    peer.send(FrameType.HEADERS, 0, 1, Buffer.alloc(0))
    for (let i = 0; i < 20; i++) peer.send(FrameType.CONTINUATION, 0, 1, Buffer.alloc(0))
    expect((await peer.goaway())!.code).toBe(ErrorCode.ENHANCE_YOUR_CALM)
  })

  it("ends the connection with ENHANCE_YOUR_CALM on rapid resets (CVE-2023-44487)", async () => {
    const peer = await RawPeer.connect(port)
    // the SETTINGS exchange first: 2200 streams to take in could outlast the 500 ms handshake
    // deadline on a loaded machine (SETTINGS_TIMEOUT, not what this is about)
    await peer.until((fs) => fs.find((f) => f.type === FrameType.SETTINGS && (f.flags & Flag.ACK) !== 0))
    // the reset budget refills at 33 per second of performance.now(): frozen here, so the 100
    // resets past the burst of 1000 are too many however long the server takes to read them
    vi.useFakeTimers({ toFake: ["performance"] })
    try {
      const rst = Buffer.alloc(4)
      rst.writeUInt32BE(ErrorCode.CANCEL)
      for (let id = 1; id < 2 * 1100; id += 2) {
        peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders("/test.Echo/Bidi"))
        peer.send(FrameType.RST_STREAM, 0, id, rst)
      }
      expect((await peer.goaway())!.code).toBe(ErrorCode.ENHANCE_YOUR_CALM)
    } finally {
      vi.useRealTimers()
    }
  })

  it("ends the connection on GOAWAY at shutdown once its calls are done", async () => {
    const other = new LeanGrpcServer({
      maxConcurrentStreams: Infinity,
      maxReceiveMessageBytes: 1000,
      keepaliveIntervalMs: 0,
      keepaliveTimeoutMs: 0,
      pingMinTimeMs: 5000,
      handshakeTimeoutMs: 500
    })
    other.addService(definition, impl)
    const l = net.createServer((s) => other.accept(s))
    await new Promise<void>((r) => l.listen(0, "127.0.0.1", r))
    const peer = await RawPeer.connect((l.address() as net.AddressInfo).port)
    unary(peer, 1, "/test.Echo/Unary", Buffer.from("x"))
    await peer.trailers(1)
    await Effect.runPromise(other.close(1000))
    expect((await peer.goaway())!).toMatchObject({ code: ErrorCode.NO_ERROR, lastStreamId: 1 })
    await peer.until(() => (peer.closed ? true : undefined))
    expect(other.connections.size).toBe(0)
    l.close()
  })

  it("holds a stream's window while its messages are unread: no WINDOW_UPDATE, then FLOW_CONTROL_ERROR past it", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Hold"))
    // 1048 messages of 1000 bytes: just under the 1 MiB stream window we announce
    const sixteen = Buffer.concat(Array.from({ length: 16 }, () => grpcMessage(Buffer.alloc(995))))
    for (let sent = 0; sent < 1048; sent += 16) {
      peer.send(FrameType.DATA, 0, 1, sent + 16 <= 1048 ? sixteen : sixteen.subarray(0, (1048 - sent) * 1000))
    }
    peer.send(FrameType.PING, 0, 0, Buffer.from("window!!"))
    await peer.until((fs) => fs.find((f) => f.type === FrameType.PING && f.payload.toString() === "window!!"))
    expect(peer.frames.filter((f) => f.type === FrameType.WINDOW_UPDATE && f.streamId === 1)).toEqual([])
    // 1000 bytes more than the window allows: a stream error, the connection lives
    peer.send(FrameType.DATA, 0, 1, grpcMessage(Buffer.alloc(995)))
    const rst = await peer.until((fs) => fs.find((f) => f.type === FrameType.RST_STREAM && f.streamId === 1))
    expect(rst!.payload.readUInt32BE(0)).toBe(ErrorCode.FLOW_CONTROL_ERROR)
    unary(peer, 3, "/test.Echo/Unary", Buffer.from("x"))
    expect((await peer.trailers(3))!["grpc-status"]).toBe("0")
    peer.close()
  })
})

describe("lean transport connection: gRPC messages out of DATA frames", () => {
  /** `bytes` as DATA frames on `id`, cut at every `every` bytes (the last frame ends the stream) */
  const sendCut = (peer: RawPeer, id: number, bytes: Buffer, every: number) => {
    for (let at = 0; at < bytes.length; at += every) {
      const last = at + every >= bytes.length
      peer.send(FrameType.DATA, last ? Flag.END_STREAM : 0, id, bytes.subarray(at, at + every))
    }
  }

  it("a unary request whose prefix and body are split across DATA frames", async () => {
    const peer = await RawPeer.connect(port)
    for (const [id, every] of [
      [1, 1],
      [3, 2],
      [5, 4],
      [7, 7]
    ] as const) {
      peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders("/test.Echo/Unary"))
      sendCut(peer, id, grpcMessage(Buffer.from(`split by ${every}`)), every)
      expect(await peer.trailers(id)).toEqual({ "grpc-status": "0" })
      const data = peer.frames.find((f) => f.type === FrameType.DATA && f.streamId === id)!
      expect(data.payload).toEqual(grpcMessage(Buffer.from(`split by ${every}`)))
    }
    peer.close()
  })

  it("bidi messages cut anywhere by DATA frames come out whole and in order", async () => {
    const peer = await RawPeer.connect(port)
    const sent = Buffer.concat(Array.from({ length: 40 }, (_, i) => grpcMessage(Buffer.alloc(i * 7, i))))
    let id = 1
    for (const every of [1, 3, 5, 6, 11, 100, 999]) {
      peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders("/test.Echo/Bidi"))
      sendCut(peer, id, sent, every)
      expect(await peer.trailers(id)).toEqual({ "grpc-status": "0" })
      const echoed = Buffer.concat(
        peer.frames.filter((f) => f.type === FrameType.DATA && f.streamId === id).map((f) => f.payload)
      )
      expect(echoed).toEqual(sent)
      id += 2
    }
    peer.close()
  })

  it("refuses a compressed message with INTERNAL and grpc-go's text", async () => {
    const peer = await RawPeer.connect(port)
    const m = grpcMessage(Buffer.from("z"))
    m[0] = 1
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Unary"))
    peer.send(FrameType.DATA, Flag.END_STREAM, 1, m)
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("13")
    expect(t!["grpc-message"]).toBe("grpc: compressed flag set with identity or empty encoding")
    peer.close()
  })

  it("refuses a message above the limit once its prefix is in, before its body", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Bidi"))
    peer.send(FrameType.DATA, 0, 1, grpcMessage(Buffer.alloc(5000)).subarray(0, 5))
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("8")
    expect(t!["grpc-message"]).toBe("grpc: received message larger than max (5000 vs. 1000)")
    peer.close()
  })

  it("ends a call whose client half-closes inside a message with INTERNAL", async () => {
    const peer = await RawPeer.connect(port)
    const m = grpcMessage(Buffer.from("cut short"))
    for (const [id, upTo] of [
      [1, 3],
      [3, 8]
    ] as const) {
      peer.send(FrameType.HEADERS, Flag.END_HEADERS, id, requestHeaders("/test.Echo/Unary"))
      peer.send(FrameType.DATA, Flag.END_STREAM, id, m.subarray(0, upTo))
      const t = await peer.trailers(id)
      expect(t!["grpc-status"]).toBe("13")
      expect(t!["grpc-message"]).toBe("grpc: received an incomplete message")
    }
    peer.close()
  })

  it("refuses a second request message on a unary call", async () => {
    const peer = await RawPeer.connect(port)
    peer.send(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaders("/test.Echo/Unary"))
    peer.send(
      FrameType.DATA,
      Flag.END_STREAM,
      1,
      Buffer.concat([grpcMessage(Buffer.from("a")), grpcMessage(Buffer.from("b"))])
    )
    const t = await peer.trailers(1)
    expect(t!["grpc-status"]).toBe("13")
    expect(t!["grpc-message"]).toBe("grpc: received more than one request message for a unary call")
    peer.close()
  })
})
