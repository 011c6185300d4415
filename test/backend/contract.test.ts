/**
 * The Backend contract, run against both Layers: reads see staged batches at once, batches are
 * atomic, write Effects and writeNow tickets complete in staging order, contents match a Map
 * model, and (LMDB) survive a close and reopen.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, FastCheck as fc, Fiber, Layer, Scope } from "effect"
import { afterAll } from "vitest"
import {
  Backend,
  type BackendError,
  type BackendShape,
  type BucketName,
  type WriteOp
} from "../../src/backend/backend.js"
import { layerLmdb } from "../../src/backend/lmdb.js"
import { layerMemory } from "../../src/backend/memory.js"
import { decodeSnapshot } from "../../src/backend/snapshot-format.js"
import { BUCKET_NAMES, dumpHex, hex, makeTempDir, Model, rangeHex, removeDir } from "./harness.js"

interface Harness {
  readonly name: string
  readonly persistent: boolean
  readonly open: (dir: string) => Effect.Effect<BackendShape, BackendError, Scope.Scope>
}

const fromLayer = (layer: Layer.Layer<Backend, BackendError>) =>
  Layer.build(layer).pipe(Effect.map((ctx) => Context.get(ctx, Backend)))

const harnesses: ReadonlyArray<Harness> = [
  { name: "memory", persistent: false, open: () => fromLayer(layerMemory) },
  { name: "lmdb", persistent: true, open: (dir) => fromLayer(layerLmdb({ dataDir: dir })) }
]

const root = makeTempDir("contract")
afterAll(() => removeDir(root))
let dirSeq = 0
const freshDir = () => `${root}/d${dirSeq++}`

/** Opens a backend in its own scope, so a test can close and reopen it. */
const openScoped = (h: Harness, dir: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const backend = yield* h.open(dir).pipe(Scope.extend(scope))
    return { backend, close: Scope.close(scope, Exit.void) }
  })

const b = (...xs: Array<number>) => Uint8Array.from(xs)
const op = (bucket: BucketName, key: Uint8Array, value: Uint8Array | undefined): WriteOp => ({ bucket, key, value })

// Small alphabets make collisions, shared prefixes and boundary bytes likely.
const keyArb = fc
  .array(fc.constantFrom(0x00, 0x01, 0x02, 0x61, 0x7f, 0x80, 0xff), { minLength: 1, maxLength: 3 })
  .map((a) => Uint8Array.from(a))
const boundArb = fc
  .array(fc.constantFrom(0x00, 0x01, 0x61, 0x80, 0xff), { minLength: 0, maxLength: 3 })
  .map((a) => Uint8Array.from(a))
const bucketArb = fc.constantFrom<BucketName>("key", "meta", "lease")
const opArb = fc.record({
  bucket: bucketArb,
  key: keyArb,
  value: fc.option(fc.uint8Array({ maxLength: 6 }), { nil: undefined, freq: 4 })
})
const batchArb = fc.oneof(
  { arbitrary: fc.array(opArb, { maxLength: 6 }), weight: 6 },
  // Long batches on one bucket take the merge path of the sorted buckets (compaction-sized batches).
  {
    arbitrary: fc
      .tuple(bucketArb, fc.array(opArb, { minLength: 65, maxLength: 90 }))
      .map(([bucket, ops]) => ops.map((o) => ({ ...o, bucket }))),
    weight: 1
  }
)
const queryArb = fc.record({
  bucket: bucketArb,
  start: boundArb,
  end: fc.option(boundArb, { nil: undefined }),
  limit: fc.option(fc.nat(6), { nil: undefined })
})
type Query = typeof queryArb extends fc.Arbitrary<infer T> ? T : never
const stepArb = fc.record({
  ops: batchArb,
  // none: stay staged; tick: let commits start/finish in the background; durable: await it
  after: fc.constantFrom("none", "tick", "durable"),
  query: queryArb
})

const tick = Effect.promise(() => new Promise<void>((r) => setImmediate(r)))

const checkAgainstModel = (backend: BackendShape, model: Model, q: Query | undefined) => {
  const got: Array<unknown> = []
  const want: Array<unknown> = []
  for (const bucket of BUCKET_NAMES) {
    const all = model.range(bucket, new Uint8Array(0), undefined)
    got.push(rangeHex(backend, bucket, new Uint8Array(0), undefined))
    want.push(all)
    got.push(
      all.map(([k]) => {
        const v = backend.get(bucket, Buffer.from(k, "hex"))
        return [k, v === undefined ? "<absent>" : hex(v)]
      })
    )
    want.push(all)
  }
  if (q !== undefined) {
    got.push(rangeHex(backend, q.bucket, q.start, q.end, q.limit))
    want.push(model.range(q.bucket, q.start, q.end, q.limit))
  }
  // one comparison per check keeps hundreds of runs cheap
  if (JSON.stringify(got) !== JSON.stringify(want)) expect(got).toEqual(want)
}

for (const h of harnesses) {
  describe(`Backend contract (${h.name})`, () => {
    it.live.prop(
      "random put/delete batches match a Map model (get, range with start/end/limit)" +
        (h.persistent ? ", also after reopen" : ""),
      [fc.array(stepArb, { minLength: 1, maxLength: 10 }), fc.array(queryArb, { maxLength: 4 })],
      ([steps, finalQueries]) =>
        Effect.gen(function* () {
          const dir = freshDir()
          const model = new Model()
          const first = yield* openScoped(h, dir)
          const pending: Array<Effect.Effect<void, BackendError>> = []
          for (const step of steps) {
            pending.push(first.backend.write(step.ops))
            model.apply(step.ops)
            // Visible at once, whether committed, in flight or queued.
            checkAgainstModel(first.backend, model, step.query)
            const gets = step.ops.map((o) => {
              const v = first.backend.get(o.bucket, o.key)
              return v === undefined ? null : hex(v)
            })
            const wants = step.ops.map((o) => {
              const v = model.buckets[o.bucket].get(hex(o.key))
              return v === undefined ? null : hex(v)
            })
            if (JSON.stringify(gets) !== JSON.stringify(wants)) expect(gets).toEqual(wants)
            if (step.after === "tick") yield* tick
            if (step.after === "durable") yield* pending[pending.length - 1]!
          }
          yield* Effect.all(pending, { discard: true })
          checkAgainstModel(first.backend, model, undefined)
          for (const q of finalQueries) checkAgainstModel(first.backend, model, q)
          yield* first.close
          if (h.persistent) {
            const second = yield* openScoped(h, dir)
            checkAgainstModel(second.backend, model, undefined)
            for (const q of finalQueries) checkAgainstModel(second.backend, model, q)
            yield* second.close
          }
          removeDir(dir)
        }),
      { timeout: 60_000, fastCheck: { numRuns: h.persistent ? 40 : 120 } }
    )

    it.live("range treats end as exclusive, limit as a cap, an empty start as the bucket's beginning", () =>
      Effect.gen(function* () {
        const { backend, close } = yield* openScoped(h, freshDir())
        yield* backend.write([
          op("key", b(1), b(10)),
          op("key", b(1, 0), b(11)),
          op("key", b(2), b(12)),
          op("meta", b(1), b(99))
        ])
        expect(rangeHex(backend, "key", b(1), b(2))).toEqual([
          ["01", "0a"],
          ["0100", "0b"]
        ])
        expect(rangeHex(backend, "key", new Uint8Array(0), undefined, 2)).toEqual([
          ["01", "0a"],
          ["0100", "0b"]
        ])
        expect(rangeHex(backend, "key", b(1, 0), undefined)).toEqual([
          ["0100", "0b"],
          ["02", "0c"]
        ])
        expect(rangeHex(backend, "key", b(2), b(1))).toEqual([])
        expect(rangeHex(backend, "key", b(0), undefined, 0)).toEqual([])
        expect(rangeHex(backend, "lease", new Uint8Array(0), undefined)).toEqual([])
        // A staged delete hides a committed key from range and get; a staged put shows before it.
        const w = backend.write([op("key", b(1, 0), undefined), op("key", b(0, 5), b(7))])
        expect(rangeHex(backend, "key", new Uint8Array(0), undefined)).toEqual([
          ["0005", "07"],
          ["01", "0a"],
          ["02", "0c"]
        ])
        expect(backend.get("key", b(1, 0))).toBeUndefined()
        yield* w
        expect(rangeHex(backend, "key", new Uint8Array(0), undefined, 2)).toEqual([
          ["0005", "07"],
          ["01", "0a"]
        ])
        yield* close
      })
    )

    it.live("empty values are stored and read back as empty, not as absent", () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const first = yield* openScoped(h, dir)
        yield* first.backend.write([op("meta", b(5), new Uint8Array(0))])
        expect(first.backend.get("meta", b(5))?.length).toBe(0)
        yield* first.close
        if (h.persistent) {
          const second = yield* openScoped(h, dir)
          expect(second.backend.get("meta", b(5))?.length).toBe(0)
          expect(rangeHex(second.backend, "meta", new Uint8Array(0), undefined)).toEqual([["05", ""]])
          yield* second.close
        }
      })
    )

    it.live("a batch with an invalid key fails with WriteFailed and stages nothing", () =>
      Effect.gen(function* () {
        const { backend, close } = yield* openScoped(h, freshDir())
        yield* backend.write([op("key", b(1), b(1))])
        const empty = yield* Effect.exit(backend.write([op("key", b(1), b(2)), op("key", new Uint8Array(0), b(3))]))
        const huge = yield* Effect.exit(backend.write([op("key", b(1), b(2)), op("lease", new Uint8Array(1979), b(3))]))
        for (const exit of [empty, huge]) {
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toContain("WriteFailed")
        }
        expect(hex(backend.get("key", b(1))!)).toBe("01")
        // the longest legal key works
        yield* backend.write([op("lease", new Uint8Array(1978).fill(7), b(4))])
        expect(hex(backend.get("lease", new Uint8Array(1978).fill(7))!)).toBe("04")
        yield* close
      })
    )

    it.live("write Effects complete in staging order", () =>
      Effect.gen(function* () {
        const { backend, close } = yield* openScoped(h, freshDir())
        const writes: Array<Effect.Effect<void, BackendError>> = []
        for (let i = 0; i < 300; i++) {
          writes.push(
            backend.write([op("key", b(i >> 8, i & 0xff), b(i & 0xff)), op("meta", b(1), b(i >> 8, i & 0xff))])
          )
          // spread the batches over several commits
          if (i % 37 === 0) yield* tick
        }
        // A write Effect that has completed runs synchronously; a pending one would suspend.
        const isDurable = (w: Effect.Effect<void, BackendError>) => Exit.isSuccess(Effect.runSyncExit(w))
        const violations: Array<number> = []
        // Await them in reverse, all at once: whenever one completes, every earlier one already has.
        yield* Effect.forEach(
          writes.map((w, i) => [w, i] as const).reverse(),
          ([w, i]) =>
            Effect.tap(w, () =>
              Effect.sync(() => {
                if (!writes.slice(0, i).every(isDurable)) violations.push(i)
              })
            ),
          { concurrency: "unbounded", discard: true }
        )
        expect(violations).toEqual([])
        expect(writes.every(isDurable)).toBe(true)
        expect(hex(backend.get("meta", b(1))!)).toBe("012b")
        yield* close
      })
    )

    it.live(
      "writeNow's tickets settle once each, in staging order; an empty batch's ticket once all before it did",
      () =>
        Effect.gen(function* () {
          const { backend, close } = yield* openScoped(h, freshDir())
          const settled: Array<number> = []
          const errors: Array<unknown> = []
          const n = 200
          let flushAt = -1
          for (let i = 0; i < n; i++) {
            const t = backend.writeNow([op("key", b(i >> 8, i & 0xff), b(i & 0xff))])
            if (!("onDone" in t)) throw new Error(`refused: ${t.message}`)
            // staged at once, whether or not durable yet
            expect(hex(backend.get("key", b(i >> 8, i & 0xff))!)).toBe(hex(b(i & 0xff)))
            t.onDone((e) => {
              if (e !== undefined) errors.push(e)
              settled.push(i)
            })
            if (i === 120) {
              const f = backend.writeNow([])
              if (!("onDone" in f)) throw new Error("flush refused")
              f.onDone(() => (flushAt = settled.length))
            }
            if (i % 29 === 0) yield* tick
          }
          yield* backend.flush
          expect(errors).toEqual([])
          expect(settled).toEqual(Array.from({ length: n }, (_, i) => i))
          expect(flushAt).toBeGreaterThanOrEqual(121)
          // a settled ticket calls back at once
          let late = false
          const t = backend.writeNow([op("key", b(9, 9), b(9))])
          if (!("onDone" in t)) throw new Error("refused")
          yield* backend.flush
          t.onDone(() => (late = true))
          expect(late).toBe(true)
          yield* close
        })
    )

    it.live("flush waits for everything staged; snapshot is a consistent copy including staged batches", () =>
      Effect.gen(function* () {
        const { backend, close } = yield* openScoped(h, freshDir())
        const w = backend.write([op("key", b(1), b(1)), op("lease", b(2), b(2)), op("meta", b(3), b(3))])
        const fiber = yield* Effect.fork(backend.flush)
        yield* Fiber.join(fiber)
        yield* w
        backend.write([op("key", b(4), b(4))])
        const snap = decodeSnapshot(yield* backend.snapshot)
        expect(snap.map((e) => [e.bucket, hex(e.key), hex(e.value)])).toEqual([
          ["key", "01", "01"],
          ["key", "04", "04"],
          ["meta", "03", "03"],
          ["lease", "02", "02"]
        ])
        yield* backend.defragment
        expect(backend.sizeBytes()).toBeGreaterThan(0)
        expect(backend.sizeInUseBytes()).toBeGreaterThan(0)
        expect(backend.sizeInUseBytes()).toBeLessThanOrEqual(backend.sizeBytes())
        yield* close
      })
    )

    it.live("after scope close writes fail with Closed", () =>
      Effect.gen(function* () {
        const { backend, close } = yield* openScoped(h, freshDir())
        yield* close
        const exit = yield* Effect.exit(backend.write([op("key", b(1), b(1))]))
        expect(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("Closed")).toBe(true)
      })
    )

    if (h.persistent) {
      it.live("restart: contents written, then closed, are the same after reopen; close flushes staged batches", () =>
        Effect.gen(function* () {
          const dir = freshDir()
          const model = new Model()
          const first = yield* openScoped(h, dir)
          for (let round = 0; round < 5; round++) {
            const ops: Array<WriteOp> = []
            for (let i = 0; i < 400; i++) {
              const n = round * 400 + i
              ops.push(op("key", b(0, 0, n >> 8, n & 0xff, 0x5f), Buffer.from(`value-${n}`)))
            }
            ops.push(op("meta", Buffer.from("consistent_index"), b(round)))
            ops.push(op("lease", b(round), Buffer.from(`lease-${round}`)))
            if (round > 0) ops.push(op("key", b(0, 0, 0, round, 0x5f), undefined))
            yield* first.backend.write(ops)
            model.apply(ops)
          }
          // Staged, never awaited: scope close must flush it.
          const last = [op("meta", Buffer.from("finalIndex"), b(9, 9)), op("lease", b(0), undefined)]
          void first.backend.write(last)
          model.apply(last)
          yield* first.close
          const second = yield* openScoped(h, dir)
          checkAgainstModel(second.backend, model, undefined)
          expect(dumpHex(second.backend).key.length).toBe(1996)
          yield* second.close
        })
      )
    }
  })
}
