/**
 * A memory Backend whose durability the test controls: writes are staged (visible) at once, as the
 * contract requires, but their tickets (and so their Effects) settle only when the test releases
 * them, in staging order, or fail when it says so.
 */
import { Effect, Layer } from "effect"
import {
  awaitTicket,
  Backend,
  BackendError,
  type BackendShape,
  durableTicket,
  type WriteOp,
  type WriteTicket
} from "../../src/backend/backend.js"
import { makeMemoryBackend } from "../../src/backend/memory.js"

export interface Gate {
  readonly backend: BackendShape
  /** batches staged and not yet released */
  readonly pending: () => number
  /** every batch staged so far */
  readonly batches: Array<ReadonlyArray<WriteOp>>
  /** makes the oldest `n` pending batches durable (all when omitted), in one step */
  readonly release: (n?: number) => Effect.Effect<void>
  /** releases the given pending batches (0 = oldest) in the given order, in one step */
  readonly releaseInOrder: (order: ReadonlyArray<number>) => Effect.Effect<void>
  /** fails every pending batch and every later write */
  readonly fail: () => Effect.Effect<void>
}

/** A ticket the test settles; its callbacks run in registration order, once. */
class GateTicket implements WriteTicket {
  private outcome: { readonly error: BackendError | undefined } | undefined
  private waiters: Array<(error: BackendError | undefined) => void> = []
  onDone(f: (error: BackendError | undefined) => void): void {
    if (this.outcome !== undefined) f(this.outcome.error)
    else this.waiters.push(f)
  }
  settle(error: BackendError | undefined): void {
    if (this.outcome !== undefined) return
    this.outcome = { error }
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w(error)
  }
}

export const makeGate = (): Gate => {
  const inner = makeMemoryBackend().backend
  const waiting: Array<GateTicket> = []
  const batches: Array<ReadonlyArray<WriteOp>> = []
  let failed = false
  const err = () => new BackendError({ reason: "WriteFailed", message: "injected write failure" })
  const writeNow = (ops: ReadonlyArray<WriteOp>): WriteTicket | BackendError => {
    if (failed) return err()
    // an empty batch is a flush marker: done when the newest pending batch is
    if (ops.length === 0) return waiting[waiting.length - 1] ?? durableTicket
    batches.push(ops)
    const staged = inner.writeNow(ops)
    if (staged instanceof BackendError) return staged
    const t = new GateTicket()
    waiting.push(t)
    return t
  }
  const backend: BackendShape = {
    ...inner,
    write: (ops) => awaitTicket(writeNow(ops)),
    writeNow,
    flush: Effect.suspend(() => awaitTicket(writeNow([])))
  }
  return {
    backend,
    pending: () => waiting.length,
    batches,
    release: (n) =>
      Effect.sync(() => {
        const done = waiting.splice(0, n ?? waiting.length)
        for (const t of done) t.settle(undefined)
      }),
    releaseInOrder: (order) =>
      Effect.sync(() => {
        const picked = order.map((i) => waiting[i]!)
        waiting.splice(0, order.length)
        for (const t of picked) t.settle(undefined)
      }),
    fail: () =>
      Effect.sync(() => {
        failed = true
        const done = waiting.splice(0)
        for (const t of done) t.settle(err())
      })
  }
}

export const gateLayer = (gate: Gate): Layer.Layer<Backend> => Layer.succeed(Backend, gate.backend)
