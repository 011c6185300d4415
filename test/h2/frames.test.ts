/**
 * The control-frame writers the lean client and the server's transport share (src/h2/frames.ts):
 * each frame, written anywhere in a buffer, reads back through the frame reader as the frame it
 * was meant to be, and fills exactly the size its writer says.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { type FrameSink, FrameReader } from "../../src/h2/frame-reader.js"
import {
  Flag,
  FrameType,
  goawayFrame,
  goawayFrameSize,
  pingFrame,
  settingsFrame,
  u32Frame,
  PING_FRAME_SIZE,
  readUint32,
  settingsFrameSize,
  U32_FRAME_SIZE,
  writeGoawayFrame,
  writePingFrame,
  writeSettingsFrame,
  writeU32Frame,
  writeUint32
} from "../../src/h2/frames.js"

interface Frame {
  readonly type: number
  readonly flags: number
  readonly streamId: number
  readonly payload: Buffer
}

/** The frames in buf[0, length). */
const read = (buf: Uint8Array, length: number): Array<Frame> => {
  const frames: Array<Frame> = []
  const sink: FrameSink = {
    dataStart: () => {},
    data: () => {},
    dataEnd: () => {},
    frame: (type, flags, streamId, b, start, end) =>
      frames.push({ type, flags, streamId, payload: Buffer.from(b.subarray(start, end)) })
  }
  new FrameReader(sink, 1 << 24).read(buf, length)
  return frames
}

/** `size` bytes of garbage around the frame: writers touch only their own bytes */
const inBuffer = (at: number, size: number, write: (buf: Uint8Array) => void): Uint8Array => {
  const buf = new Uint8Array(at + size + 7).fill(0xee)
  write(buf)
  expect(buf.subarray(0, at).every((b) => b === 0xee)).toBe(true)
  expect(buf.subarray(at + size).every((b) => b === 0xee)).toBe(true)
  return buf.subarray(at, at + size)
}

const u32 = fc.nat({ max: 0xffffffff })
const streamId = fc.nat({ max: 0x7fffffff })

describe("HTTP/2 control-frame writers", () => {
  it.prop("writeUint32 is readUint32's inverse", [u32, fc.nat(8)], ([value, at]) => {
    const buf = new Uint8Array(12)
    writeUint32(buf, at, value)
    expect(readUint32(buf, at)).toBe(value)
  })

  it.prop(
    "SETTINGS: the entries in order, or an empty ACK",
    [fc.array(fc.tuple(fc.nat({ max: 0xffff }), u32), { maxLength: 8 }), fc.boolean(), fc.nat(20)],
    ([entries, ack, at]) => {
      const size = settingsFrameSize(ack ? 0 : entries.length)
      const frame = inBuffer(at, size, (buf) => writeSettingsFrame(buf, at, ack ? Flag.ACK : 0, ack ? [] : entries))
      const [f, ...rest] = read(frame, size)
      expect(rest).toEqual([])
      expect([f!.type, f!.flags, f!.streamId]).toEqual([FrameType.SETTINGS, ack ? Flag.ACK : 0, 0])
      const got = Array.from({ length: f!.payload.length / 6 }, (_, i) => [
        f!.payload.readUInt16BE(6 * i),
        f!.payload.readUInt32BE(6 * i + 2)
      ])
      expect(got).toEqual(ack ? [] : entries)
    }
  )

  it.prop(
    "WINDOW_UPDATE and RST_STREAM: the stream and the 32-bit value",
    [fc.constantFrom(FrameType.WINDOW_UPDATE, FrameType.RST_STREAM), streamId, u32, fc.nat(20)],
    ([type, id, value, at]) => {
      const frame = inBuffer(at, U32_FRAME_SIZE, (buf) => writeU32Frame(buf, at, type, id, value))
      expect(read(frame, U32_FRAME_SIZE)).toEqual([{ type, flags: 0, streamId: id, payload: u32Bytes(value) }])
    }
  )

  it.prop(
    "PING: the 8 bytes from where they start",
    [fc.uint8Array({ minLength: 8, maxLength: 30 }), fc.nat(), fc.boolean(), fc.nat(20)],
    ([data, from, ack, at]) => {
      const start = from % (data.length - 7)
      const flags = ack ? Flag.ACK : 0
      const frame = inBuffer(at, PING_FRAME_SIZE, (buf) => writePingFrame(buf, at, flags, data, start))
      const payload = Buffer.from(data.subarray(start, start + 8))
      expect(read(frame, PING_FRAME_SIZE)).toEqual([{ type: FrameType.PING, flags, streamId: 0, payload }])
    }
  )

  it.prop(
    "GOAWAY: the last stream id, the code, the debug data",
    [streamId, u32, fc.uint8Array({ maxLength: 100 }), fc.nat(20)],
    ([last, code, debug, at]) => {
      const size = goawayFrameSize(debug.length)
      const frame = inBuffer(at, size, (buf) => writeGoawayFrame(buf, at, last, code, debug))
      const payload = Buffer.concat([u32Bytes(last), u32Bytes(code), debug])
      expect(read(frame, size)).toEqual([{ type: FrameType.GOAWAY, flags: 0, streamId: 0, payload }])
    }
  )
})

describe("HTTP/2 control frames in a Buffer of their own", () => {
  it.prop(
    "hold the same bytes the writers write in place",
    [
      fc.array(fc.tuple(fc.nat({ max: 0xffff }), u32), { maxLength: 4 }),
      streamId,
      u32,
      fc.uint8Array({ maxLength: 20 })
    ],
    ([entries, id, value, debug]) => {
      const inPlace = (size: number, write: (buf: Uint8Array) => void) => {
        const buf = Buffer.alloc(size)
        write(buf)
        return buf
      }
      const ping = Buffer.from("12345678")
      expect(settingsFrame(0, entries)).toEqual(
        inPlace(settingsFrameSize(entries.length), (b) => writeSettingsFrame(b, 0, 0, entries))
      )
      expect(u32Frame(FrameType.RST_STREAM, id, value)).toEqual(
        inPlace(U32_FRAME_SIZE, (b) => writeU32Frame(b, 0, FrameType.RST_STREAM, id, value))
      )
      expect(pingFrame(Flag.ACK, ping, 0)).toEqual(
        inPlace(PING_FRAME_SIZE, (b) => writePingFrame(b, 0, Flag.ACK, ping, 0))
      )
      expect(goawayFrame(id, value, debug)).toEqual(
        inPlace(goawayFrameSize(debug.length), (b) => writeGoawayFrame(b, 0, id, value, debug))
      )
    }
  )
})

const u32Bytes = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
