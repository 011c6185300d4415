/**
 * The lean transport's flow control (src/server/transport/flow-control.ts) on its own, writing
 * through a real frame output (frame-output.ts) into a Duplex that keeps what it is given: the
 * DATA frames it sends never go past either window or the client's frame size and carry a
 * stream's queued bytes in order; what it receives is given back as the connection's window and
 * the stream's reader allow.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { Duplex } from "node:stream"
import { FrameReader } from "../../../src/h2/frame-reader.js"
import { DEFAULT_WINDOW, FrameType } from "../../../src/h2/frames.js"
import { PingStrikes } from "../../../src/server/keepalive-policy.js"
import { FlowControl } from "../../../src/server/transport/flow-control.js"
import { FrameOutput } from "../../../src/server/transport/frame-output.js"
import { H2ConnectionError } from "../../../src/server/transport/h2-error.js"
import { H2Stream } from "../../../src/server/transport/h2-stream.js"
import * as L from "../../../src/server/transport/limits.js"

/** A stream with data queued and nothing else to do. */
class QueuedStream extends H2Stream {
  data(): void {}
  remoteEnd(): void {}
  cancel(): void {}
  sent(): void {}
  headerBlock(): Uint8Array {
    return new Uint8Array(0)
  }
  endBlock(): undefined {
    return undefined
  }
  queue(chunk: Uint8Array): void {
    this.out.push(chunk)
    this.outBytes += chunk.length
  }
}

interface Sent {
  readonly type: number
  readonly streamId: number
  readonly payload: Buffer
}

/** A frame output over a Duplex that keeps every byte written; `frames()` flushes and reads them back. */
const output = () => {
  const written: Array<Buffer> = []
  const socket = new Duplex({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk)
      done()
    },
    read() {}
  })
  const out = new FrameOutput(socket)
  const frames = (): Array<Sent> => {
    out.flush()
    const bytes = Buffer.concat(written.splice(0))
    const got: Array<Sent> = []
    let parts: Array<Buffer> = []
    new FrameReader(
      {
        dataStart: () => {
          parts = []
        },
        data: (buf, start, end) => parts.push(Buffer.from(buf.subarray(start, end))),
        dataEnd: (streamId) => got.push({ type: FrameType.DATA, streamId, payload: Buffer.concat(parts) }),
        frame: (type, _flags, streamId, buf, start, end) =>
          got.push({ type, streamId, payload: Buffer.from(buf.subarray(start, end)) })
      },
      1 << 24
    ).read(bytes, bytes.length)
    return got
  }
  return { out, frames }
}

const patterned = (n: number, seed: number): Buffer => {
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = (i * 13 + seed) & 0xff
  return b
}

describe("lean transport flow control", () => {
  it.prop(
    "sends a stream's data in order, each DATA frame within both windows and the client's frame size",
    [
      fc.array(fc.integer({ min: 1, max: 40_000 }), { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 0, max: 70_000 }),
      fc.integer({ min: 16384, max: 40_000 }),
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 50_000 })), { maxLength: 40 })
    ],
    ([sizes, initialWindow, maxFrame, increments]) => {
      const { out, frames } = output()
      const flow = new FlowControl(out, new PingStrikes(0))
      flow.maxFrameSize(maxFrame)
      const s = new QueuedStream(1, flow.peerInitialWindow, L.STREAM_WINDOW)
      flow.initialWindowSize(initialWindow, [s])
      const queued = sizes.map((n, i) => patterned(n, i))
      for (const c of queued) s.queue(c)
      let streamWindow = initialWindow
      let connectionWindow = DEFAULT_WINDOW
      const received: Array<Buffer> = []
      const check = (done: boolean) => {
        expect(done).toBe(s.outBytes === 0)
        expect(flow.blocked.has(s)).toBe(!done)
        for (const f of frames()) {
          expect([f.type, f.streamId]).toEqual([FrameType.DATA, 1])
          expect(f.payload.length).toBeGreaterThan(0)
          expect(f.payload.length).toBeLessThanOrEqual(Math.min(maxFrame, streamWindow, connectionWindow))
          streamWindow -= f.payload.length
          connectionWindow -= f.payload.length
          received.push(f.payload)
        }
        expect(s.sendWindow).toBe(streamWindow)
      }
      check(flow.send(s))
      for (const [connection, n] of increments) {
        if (connection) {
          flow.connectionIncrement(n)
          connectionWindow += n
        } else {
          expect(flow.streamIncrement(s, n)).toBe(0)
          streamWindow += n
        }
        check(flow.send(s))
      }
      const all = Buffer.concat(queued)
      const got = Buffer.concat(received)
      expect(all.subarray(0, got.length).equals(got)).toBe(true)
      // everything is out exactly when the windows had room for it
      expect(got.length).toBe(Math.min(all.length, got.length + Math.max(0, Math.min(streamWindow, connectionWindow))))
    },
    { fastCheck: { numRuns: 200 } }
  )

  it("a stream's data waits while the socket holds more than its high-water mark", () => {
    const { out, frames } = output()
    const flow = new FlowControl(out, new PingStrikes(0))
    flow.connectionIncrement(L.SOCKET_HIGH_WATER * 2)
    const s = new QueuedStream(1, 0, L.STREAM_WINDOW)
    expect(flow.streamIncrement(s, L.SOCKET_HIGH_WATER * 2)).toBe(0)
    s.queue(Buffer.alloc(L.SOCKET_HIGH_WATER + 100_000))
    // queued this tick, not yet written: the output counts as held
    expect(flow.send(s)).toBe(false)
    const first = frames().reduce((n, f) => n + f.payload.length, 0)
    expect(first).toBeGreaterThan(L.SOCKET_HIGH_WATER - 16384)
    expect(first).toBeLessThanOrEqual(L.SOCKET_HIGH_WATER + 16384)
    expect(flow.send(s)).toBe(true)
    expect(first + frames().reduce((n, f) => n + f.payload.length, 0)).toBe(L.SOCKET_HIGH_WATER + 100_000)
  })

  it("gives the connection's window back at half of it, a stream's at a quarter as its reader consumes", () => {
    const { out, frames } = output()
    const flow = new FlowControl(out, new PingStrikes(0))
    flow.open()
    expect(frames()).toEqual([
      { type: FrameType.WINDOW_UPDATE, streamId: 0, payload: u32(L.CONNECTION_WINDOW - DEFAULT_WINDOW) }
    ])
    const half = L.CONNECTION_WINDOW / 2
    flow.received(half - 1)
    expect(frames()).toEqual([])
    flow.received(1)
    expect(frames()).toEqual([{ type: FrameType.WINDOW_UPDATE, streamId: 0, payload: u32(half) }])
    const s = new QueuedStream(1, 0, L.STREAM_WINDOW)
    expect(flow.streamReceived(s, L.STREAM_WINDOW / 4)).toBe(true)
    flow.consumed(s, L.STREAM_WINDOW / 4 - 1)
    expect(frames()).toEqual([])
    flow.consumed(s, 1)
    expect(frames()).toEqual([{ type: FrameType.WINDOW_UPDATE, streamId: 1, payload: u32(L.STREAM_WINDOW / 4) }])
    expect(s.recvWindow).toBe(L.STREAM_WINDOW)
    expect(flow.streamReceived(s, L.STREAM_WINDOW + 1)).toBe(false)
  })

  it("refuses what overflows: the connection's receive window, a send window past 2^31-1, a frame size out of range", () => {
    const { out } = output()
    const flow = new FlowControl(out, new PingStrikes(0))
    expect(() => flow.received(DEFAULT_WINDOW + 1)).toThrow(H2ConnectionError)
    expect(() => flow.connectionIncrement(0)).toThrow(/WINDOW_UPDATE of 0/)
    expect(() => flow.connectionIncrement(2 ** 31)).toThrow(/window overflow/)
    const s = new QueuedStream(1, 0, L.STREAM_WINDOW)
    expect(flow.streamIncrement(s, 0)).toBe(0x1) // PROTOCOL_ERROR
    expect(flow.streamIncrement(s, 2 ** 31)).toBe(0x3) // FLOW_CONTROL_ERROR
    expect(() => flow.initialWindowSize(2 ** 31, [])).toThrow(/INITIAL_WINDOW_SIZE too large/)
    expect(() => flow.maxFrameSize(16383)).toThrow(/MAX_FRAME_SIZE out of range/)
    expect(() => flow.maxFrameSize(2 ** 24)).toThrow(/MAX_FRAME_SIZE out of range/)
  })
})

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
