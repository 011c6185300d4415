/**
 * The lean transport's frame output (src/server/transport/frame-output.ts): the frames of a tick
 * reach the socket in one write (a corked run of writes above 64 KiB, payloads by reference), in
 * order; control answers are refused once too many wait in a socket that does not drain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duplex } from "node:stream"
import { FRAME_HEADER, FrameType } from "../../../src/h2/frames.js"
import { FrameOutput } from "../../../src/server/transport/frame-output.js"
import * as L from "../../../src/server/transport/limits.js"

/** A Duplex that keeps every chunk it is given; `drains`: false keeps them unsent (writableLength grows). */
const socket = (drains = true) => {
  const writes: Array<Buffer> = []
  const pending: Array<() => void> = []
  const s = new Duplex({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk)
      if (drains) done()
      else pending.push(done)
    },
    read() {}
  })
  return { s, writes }
}

const nextTick = () => new Promise<void>((r) => process.nextTick(r))

describe("lean transport frame output", () => {
  it("writes a tick's frames once, in order, on the next tick", async () => {
    const { s, writes } = socket()
    const out = new FrameOutput(s)
    out.frame(FrameType.HEADERS, 4, 1, Buffer.from("head"))
    out.dataHeader(3, 1)
    out.push(Buffer.from("abc"))
    out.windowUpdate(0, 7)
    expect(writes).toEqual([])
    await nextTick()
    expect(writes.length).toBe(1)
    const w = writes[0]!
    expect(w.length).toBe(3 * FRAME_HEADER + 4 + 3 + 4)
    expect(w.subarray(FRAME_HEADER, FRAME_HEADER + 4).toString()).toBe("head")
    expect(w.subarray(2 * FRAME_HEADER + 4, 2 * FRAME_HEADER + 7).toString()).toBe("abc")
    expect(w[2 * FRAME_HEADER + 7 + 3]).toBe(FrameType.WINDOW_UPDATE)
  })

  it("above 64 KiB a tick, hands the payloads over by reference, in order", async () => {
    const { s, writes } = socket()
    const out = new FrameOutput(s)
    const big = Buffer.alloc(70_000, 1)
    out.dataHeader(big.length, 1)
    out.push(big)
    out.rstStream(1, 0)
    await nextTick()
    expect(writes.length).toBe(3)
    expect(writes[1]).toBe(big)
    expect(writes[2]![3]).toBe(FrameType.RST_STREAM)
  })

  it("writes nothing once stopped", async () => {
    const { s, writes } = socket()
    const out = new FrameOutput(s)
    out.ping(0, Buffer.alloc(8), 0)
    out.stop()
    out.goaway(0, 0, "bye")
    await nextTick()
    out.flush()
    expect(writes).toEqual([])
  })

  it("refuses a control answer past MAX_QUEUED_CONTROL while the socket holds unsent bytes", async () => {
    const { s } = socket(false)
    const out = new FrameOutput(s)
    // nothing held: answers are always allowed
    for (let i = 0; i < L.MAX_QUEUED_CONTROL + 10; i++) expect(out.controlAllowed()).toBe(true)
    out.settings(0, [])
    out.flush()
    out.settings(0, []) // the socket holds the first write from now on
    out.flush()
    expect(s.writableLength).toBeGreaterThan(0)
    for (let i = 0; i < L.MAX_QUEUED_CONTROL; i++) expect(out.controlAllowed()).toBe(true)
    expect(out.controlAllowed()).toBe(false)
  })
})
