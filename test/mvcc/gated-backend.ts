/**
 * A memory Backend whose durability the test controls: writes are staged (visible) at once, as the
 * contract requires, but their Effects complete only when the test releases them, in staging
 * order, or fail when it says so.
 */
import { Deferred, Effect, FiberId, Layer } from "effect"
import { Backend, BackendError, type BackendShape, type WriteOp } from "../../src/backend/backend.js"
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

export const makeGate = (): Gate => {
  const inner = makeMemoryBackend().backend
  const waiting: Array<Deferred.Deferred<void, BackendError>> = []
  const batches: Array<ReadonlyArray<WriteOp>> = []
  let failed = false
  const err = () => new BackendError({ reason: "WriteFailed", message: "injected write failure" })
  const backend: BackendShape = {
    ...inner,
    write: (ops) => {
      if (failed) return Effect.fail(err())
      batches.push(ops)
      const staged = inner.write(ops)
      const d = Deferred.unsafeMake<void, BackendError>(FiberId.none)
      waiting.push(d)
      return Effect.zipRight(staged, Deferred.await(d))
    },
    flush: Effect.suspend(() => {
      if (failed) return Effect.fail(err())
      const last = waiting[waiting.length - 1]
      return last === undefined ? Effect.void : Deferred.await(last)
    })
  }
  return {
    backend,
    pending: () => waiting.length,
    batches,
    release: (n) =>
      Effect.suspend(() => {
        const done = waiting.splice(0, n ?? waiting.length)
        return Effect.forEach(done, (d) => Deferred.succeed(d, undefined), { discard: true })
      }),
    releaseInOrder: (order) =>
      Effect.suspend(() => {
        const picked = order.map((i) => waiting[i]!)
        waiting.splice(0, order.length)
        return Effect.forEach(picked, (d) => Deferred.succeed(d, undefined), { discard: true })
      }),
    fail: () =>
      Effect.suspend(() => {
        failed = true
        const done = waiting.splice(0)
        return Effect.forEach(done, (d) => Deferred.fail(d, err()), { discard: true })
      })
  }
}

export const gateLayer = (gate: Gate): Layer.Layer<Backend> => Layer.succeed(Backend, gate.backend)
