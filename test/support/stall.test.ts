/**
 * The stall-bounded waits of stall.ts, on vitest's fake clock: a step that moves is never failed
 * however long it takes; one that stops moving fails once STALL_MS passed without progress.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { STALL_MS, untilDone, unstalled, watchdog } from "./stall.js"

beforeEach(() => void vi.useFakeTimers())
afterEach(() => void vi.useRealTimers())

describe("stall-bounded waits", () => {
  it("watchdog: a body that keeps moving runs past STALL_MS many times over; one that stops fails", async () => {
    let progress = 0
    const ticking = setInterval(() => void progress++, 1_000)
    let finish!: (n: number) => void
    const moving = watchdog(
      "moving",
      () => progress,
      () => new Promise<number>((r) => (finish = r))
    )
    await vi.advanceTimersByTimeAsync(5 * STALL_MS)
    finish(7)
    await expect(moving).resolves.toBe(7)
    clearInterval(ticking)

    const stopped = watchdog(
      "stopped",
      () => progress,
      () => new Promise<never>(() => {})
    )
    const failed = expect(stopped).rejects.toThrow(`stopped: no progress in ${STALL_MS} ms (at ${progress})`)
    await vi.advanceTimersByTimeAsync(STALL_MS + 1_000)
    await failed
  })

  it("untilDone waits for done() while progress() moves, and fails after STALL_MS without", async () => {
    let n = 0
    const ticking = setInterval(() => void n++, 500)
    const done = untilDone(
      "counting",
      () => n >= 300,
      () => n
    )
    await vi.advanceTimersByTimeAsync(151_000)
    await expect(done).resolves.toBeUndefined()
    clearInterval(ticking)
    const stuck = untilDone(
      "stuck",
      () => false,
      () => n
    )
    const failed = expect(stuck).rejects.toThrow(`stuck: no progress in ${STALL_MS} ms`)
    await vi.advanceTimersByTimeAsync(STALL_MS + 1_000)
    await failed
  })

  it("unstalled passes an answer through and fails a promise that never settles", async () => {
    await expect(unstalled("quick", Promise.resolve(1))).resolves.toBe(1)
    const never = unstalled("never", new Promise<never>(() => {}))
    const failed = expect(never).rejects.toThrow(`never: no answer in ${STALL_MS} ms`)
    await vi.advanceTimersByTimeAsync(STALL_MS + 1)
    await failed
  })
})
