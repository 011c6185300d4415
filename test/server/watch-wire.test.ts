/**
 * The fast WatchResponse encoder (src/server/watch-wire.ts) against proto-loader's encoding of the
 * same response built as an object: byte for byte, including prev_kv, DELETE events, negative ids,
 * int64 ids beyond 2^53, compaction and progress responses, and with the encoder's caches warm (responses that share an
 * events array, repeated revisions and ids).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, FastCheck as fc } from "effect"
import type { KeyValue } from "../../src/mvcc/key-value.js"
import type { MvccStoreShape } from "../../src/mvcc/kv.js"
import { serviceDefinition } from "../../src/proto/load.js"
import { makeHeader } from "../../src/server/header.js"
import { StreamState } from "../../src/server/watch-server.js"
import { FRAME_PREFIX_BYTES, FrameWriter } from "../../src/server/watch-wire.js"
import { toWatchId, type WatchResponse } from "../../src/watch/watcher.js"

const method = serviceDefinition("Watch")["Watch"]!
const serialize = method.responseSerialize as (v: unknown) => Buffer

const bytes = fc.uint8Array({ maxLength: 12 })
const rev = fc.integer({ min: 1, max: 2 ** 40 })
const kv: fc.Arbitrary<KeyValue> = fc.record({
  key: fc.uint8Array({ minLength: 1, maxLength: 12 }),
  createRevision: fc.oneof(fc.constant(0), rev),
  modRevision: rev,
  version: fc.integer({ min: 0, max: 1000 }),
  value: bytes,
  lease: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }))
})
const event = fc.record({ type: fc.constantFrom(0 as const, 1 as const), kv })
const response: fc.Arbitrary<WatchResponse> = fc
  .record({
    watchId: fc.oneof(
      fc.constant(0),
      fc.constant(-1),
      fc.integer({ min: 1, max: 100_000 }),
      // any int64 a client may pick, in its canonical form (a bigint beyond ±(2^53 − 1))
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(toWatchId),
      fc.constantFrom(2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)).map(toWatchId)
    ),
    revision: fc.oneof(fc.constant(0), rev),
    compactRevision: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: rev }),
    events: fc.array(event, { maxLength: 4 })
  })
  .map((r) => (r.compactRevision !== 0 ? { ...r, events: [] } : r))

describe("WatchResponse encoder", () => {
  it.prop(
    "encodes every response exactly as proto-loader does, caches warm or cold, with and without prev_kv",
    [
      fc.array(response, { minLength: 1, maxLength: 30 }),
      fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }), // member identities are never 0
      fc.boolean(),
      kv
    ],
    ([responses, clusterId, prevKv, previous]) => {
      const header = makeHeader({ clusterId, memberId: 7n, raftTerm: 2n })
      const store = { getAt: (_k: Uint8Array, r: number) => (r % 3 === 0 ? undefined : previous) }
      const ids = new Set(responses.map((r) => r.watchId))
      const state = new StreamState(
        { ids: () => [...ids], prevKv: () => prevKv },
        store as unknown as MvccStoreShape,
        header,
        1 << 30
      )
      for (const id of ids) state.announced.add(id)
      // every response twice and a shared events array, so the caches are hit too
      const shared = responses.flatMap((r) => [r, { ...r, watchId: r.watchId === 0 ? 1 : 0 }])
      for (const id of shared.map((r) => r.watchId)) {
        ids.add(id)
        state.announced.add(id)
      }
      const out = new FrameWriter(16)
      state.onEvents(Chunk.fromIterable(shared), out)
      const messages = out.takeMessages()
      expect(messages).toHaveLength(shared.length)
      shared.forEach((r, i) => {
        expect(Buffer.from(messages[i]!).toString("hex")).toBe(serialize(state.toWire(r)).toString("hex"))
      })
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("frames are length-prefixed and in order, never split across chunks; take() starts over", () => {
    const w = new FrameWriter(12)
    w.message(Buffer.from("abc"))
    w.response(Buffer.from("de"), 0, Buffer.from("fgh"))
    w.message(Buffer.from("x".repeat(20)))
    expect(w.count).toBe(3)
    const chunks = w.take()
    expect(chunks.map((c) => c.toString("hex"))).toEqual([
      "0000000003" + Buffer.from("abc").toString("hex"),
      "0000000005" + Buffer.from("defgh").toString("hex"),
      "0000000014" + Buffer.from("x".repeat(20)).toString("hex")
    ])
    expect(w.count).toBe(0)
    expect(w.byteLength).toBe(0)
    expect(Buffer.concat(chunks).length).toBe(3 * FRAME_PREFIX_BYTES + 28)
  })

  it.prop(
    "takeMessages returns every payload, whatever the chunk size",
    [fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 50 }), fc.integer({ min: 1, max: 64 })],
    ([payloads, chunk]) => {
      const w = new FrameWriter(chunk)
      for (const p of payloads) w.message(p)
      expect(w.takeMessages().map((m) => Buffer.from(m).toString("hex"))).toEqual(
        payloads.map((p) => Buffer.from(p).toString("hex"))
      )
    }
  )
})

describe("FrameWriter pieces", () => {
  /** a gRPC frame, as hex */
  const frame = (payload: Uint8Array): string =>
    "00" + payload.length.toString(16).padStart(8, "0") + Buffer.from(payload).toString("hex")

  it.prop(
    "writers sharing the chunks, large tails by reference: each writer's pieces are its own frames, in order",
    [
      fc.array(
        fc.record({
          writer: fc.integer({ min: 0, max: 2 }),
          head: fc.uint8Array({ maxLength: 20 }),
          id: fc.integer({ min: 0, max: 300 }),
          tail: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: undefined }),
          message: fc.boolean(),
          take: fc.boolean()
        }),
        { maxLength: 60 }
      )
    ],
    ([ops]) => {
      // writers 0 and 1 share the process' chunks; writer 2 has 24-byte chunks of its own
      const writers = [new FrameWriter(undefined, 8), new FrameWriter(undefined, 8), new FrameWriter(24, 8)]
      const got: Array<Array<string>> = [[], [], []]
      const want: Array<Array<string>> = [[], [], []]
      const drain = (i: number) => {
        if (i === 2 && ops.length % 2 === 0) {
          for (const m of writers[i]!.takeMessages()) got[i]!.push(frame(m))
        } else {
          const all = Buffer.concat(writers[i]!.take())
          for (let p = 0; p < all.length;) {
            const n = all.readUInt32BE(p + 1)
            expect(all[p]).toBe(0)
            got[i]!.push(frame(all.subarray(p + FRAME_PREFIX_BYTES, p + FRAME_PREFIX_BYTES + n)))
            p += FRAME_PREFIX_BYTES + n
          }
        }
        expect(writers[i]!.count).toBe(0)
      }
      for (const op of ops) {
        const w = writers[op.writer]!
        if (op.message) {
          w.message(op.head)
          want[op.writer]!.push(frame(op.head))
        } else {
          w.response(op.head, op.id, op.tail)
          const id = op.id === 0 ? [] : [0x10, ...(op.id < 128 ? [op.id] : [(op.id & 0x7f) | 0x80, op.id >> 7])]
          want[op.writer]!.push(frame(Buffer.concat([op.head, Buffer.from(id), op.tail ?? new Uint8Array(0)])))
        }
        if (op.take) drain(op.writer)
      }
      for (let i = 0; i < 3; i++) drain(i)
      expect(got).toEqual(want)
    },
    { fastCheck: { numRuns: 300 } }
  )
})
