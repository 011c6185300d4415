/**
 * The in-memory Backend (tests, benchmarks, ephemeral stores): one ordered map per bucket, no disk.
 * A batch is applied when staged, so it is "durable" at once and its write Effect completes
 * immediately; staging order is trivially commit order. Contents live as long as the Layer's scope.
 */
import { Effect, Layer } from "effect"
import {
  awaitTicket,
  Backend,
  BackendError,
  type BackendShape,
  type BucketName,
  durableTicket,
  type WriteOp,
  type WriteTicket
} from "./backend.js"
import { SnapshotWriter, BUCKETS } from "./snapshot-format.js"
import { SortedBucket } from "./sorted-bucket.js"
import { validateOps } from "./validate.js"

/** Rough per-entry bookkeeping cost, so sizeBytes grows with the entry count like a real db would. */
const ENTRY_OVERHEAD = 16
const entrySize = (k: Uint8Array, v: Uint8Array) => k.length + v.length + ENTRY_OVERHEAD
/** A real copy: `Buffer#slice` is a view, and callers may reuse their buffers after staging. */
const copy = (b: Uint8Array): Uint8Array => new Uint8Array(b)

export const makeMemoryBackend = (): { readonly backend: BackendShape; readonly close: () => void } => {
  const buckets: Record<BucketName, SortedBucket<Uint8Array>> = {
    key: new SortedBucket(entrySize),
    meta: new SortedBucket(entrySize),
    lease: new SortedBucket(entrySize),
    auth: new SortedBucket(entrySize),
    authUsers: new SortedBucket(entrySize),
    authRoles: new SortedBucket(entrySize)
  }
  const bytes = () => {
    let n = 0
    for (const b of Object.values(buckets)) n += b.bytes
    return n
  }
  let closed = false

  const closedError = () => new BackendError({ reason: "Closed", message: "backend is closed" })

  const apply = (ops: ReadonlyArray<WriteOp>): void => {
    if (ops.length < 64) {
      // Few ops: one by one (appends to the key bucket are O(1)).
      for (const op of ops) {
        if (op.value === undefined) buckets[op.bucket].delete(op.key)
        else buckets[op.bucket].set(copy(op.key), copy(op.value))
      }
      return
    }
    // Per bucket, in op order, so a long batch (compaction) is merged in one pass.
    const per: Partial<Record<BucketName, Array<readonly [Uint8Array, Uint8Array | undefined]>>> = {}
    for (const op of ops) {
      ;(per[op.bucket] ??= []).push([copy(op.key), op.value === undefined ? undefined : copy(op.value)])
    }
    for (const name of BUCKETS) {
      const changes = per[name]
      if (changes !== undefined) buckets[name].applyBatch(changes, true)
    }
  }

  const writeNow = (ops: ReadonlyArray<WriteOp>): WriteTicket | BackendError => {
    if (closed) return closedError()
    const invalid = validateOps(ops)
    if (invalid !== undefined) return invalid
    apply(ops)
    return durableTicket
  }

  const backend: BackendShape = {
    get: (bucket, key) => buckets[bucket].get(key),
    range: (bucket, start, end, limit) => {
      const out: Array<readonly [Uint8Array, Uint8Array]> = []
      if (limit !== undefined && limit <= 0) return out
      buckets[bucket].forEachInRange(start, end, (k, v) => {
        out.push([k, v])
        return limit === undefined || out.length < limit
      })
      return out
    },
    write: (ops) => awaitTicket(writeNow(ops)),
    writeNow,
    flush: Effect.suspend(() => (closed ? Effect.fail(closedError()) : Effect.void)),
    sizeBytes: bytes,
    sizeInUseBytes: bytes,
    snapshot: Effect.suspend(() => {
      if (closed) return Effect.fail(closedError())
      const w = new SnapshotWriter()
      for (const name of BUCKETS) {
        buckets[name].forEachInRange(new Uint8Array(0), undefined, (k, v) => {
          w.add(name, k, v)
          return true
        })
      }
      return Effect.succeed(w.finish())
    }),
    defragment: Effect.suspend(() => (closed ? Effect.fail(closedError()) : Effect.void)),
    // nothing on disk to rot
    verify: Effect.suspend(() => (closed ? Effect.fail(closedError()) : Effect.succeed([]))),
    corruptions: () => []
  }
  return {
    backend,
    close: () => {
      closed = true
    }
  }
}

/** The in-memory Backend, empty when built and dropped when its scope closes. */
export const layerMemory: Layer.Layer<Backend> = Layer.scoped(
  Backend,
  Effect.acquireRelease(
    Effect.sync(() => makeMemoryBackend()),
    (m) => Effect.sync(() => m.close())
  ).pipe(Effect.map((m) => m.backend))
)
