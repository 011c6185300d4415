/**
 * The write-ahead log on its own: the record codec, where a damaged log ends (a torn tail or a
 * corrupt record ends it, never in the middle of a batch), and segments on disk (rotation,
 * replay above the applied mark, deletion, a hole before later records refused as corruption).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll } from "vitest"
import type { BucketName, WriteOp } from "../../src/backend/backend.js"
import { listSegments, nodeWalIo, readWal, WalCorrupt, WalWriter } from "../../src/backend/wal.js"
import { decodeRecord, decodeRecords, encodeRecord } from "../../src/backend/wal-record.js"
import { hex, makeTempDir, removeDir } from "./harness.js"

const root = makeTempDir("wal")
afterAll(() => removeDir(root))
let dirSeq = 0
const freshDir = () => {
  const d = path.join(root, `w${dirSeq++}`)
  fs.mkdirSync(d)
  return d
}

const opArb: fc.Arbitrary<WriteOp> = fc.record({
  bucket: fc.constantFrom<BucketName>("key", "meta", "lease"),
  key: fc.uint8Array({ minLength: 1, maxLength: 40 }),
  value: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: undefined, freq: 4 })
})
const batchArb = fc.array(opArb, { minLength: 1, maxLength: 8 })

const show = (ops: ReadonlyArray<WriteOp>) =>
  ops.map((o) => `${o.bucket}:${hex(o.key)}=${o.value === undefined ? "<delete>" : hex(o.value)}`).join(",")

/** The batches' records back to back, followed by zeros (a preallocated segment). */
const logOf = (batches: ReadonlyArray<ReadonlyArray<WriteOp>>, padding: number) => {
  const records = batches.map((ops, i) => encodeRecord(i + 1, ops).record)
  const ends: Array<number> = []
  let end = 0
  for (const r of records) ends.push((end += r.length))
  return { buf: Buffer.concat([...records, Buffer.alloc(padding)]), ends }
}

describe("WAL record codec", () => {
  it.prop(
    "a record decodes to its seq and ops; the encoder's views are copies of the input",
    [fc.integer({ min: 1, max: 2 ** 53 - 1 }), batchArb],
    ([seq, ops]) => {
      const mine = ops.map((o) => ({
        ...o,
        key: Uint8Array.from(o.key),
        value: o.value === undefined ? undefined : Uint8Array.from(o.value)
      }))
      const { record, ops: views } = encodeRecord(seq, mine)
      expect(show(views)).toBe(show(ops))
      // The caller's buffers may be reused after staging: the record must not alias them.
      for (const o of mine) {
        o.key.fill(0xee)
        o.value?.fill(0xee)
      }
      expect(show(views)).toBe(show(ops))
      const decoded = decodeRecord(record, 0)
      expect(decoded?.seq).toBe(seq)
      expect(decoded?.end).toBe(record.length)
      expect(show(decoded!.ops)).toBe(show(views))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "a log cut, corrupted or overwritten with garbage at any point yields exactly the batches wholly before that point",
    [
      fc.array(batchArb, { minLength: 1, maxLength: 12 }),
      fc.nat(),
      fc.constantFrom("truncate", "flip", "garbage"),
      fc.integer({ min: 1, max: 255 }),
      fc.uint8Array({ minLength: 1, maxLength: 64 })
    ],
    ([batches, at, damage, flip, garbage]) => {
      const { buf, ends } = logOf(batches, 256)
      const original = Buffer.from(buf)
      const total = ends[ends.length - 1]!
      const at0 = at % (total + 1)
      if (damage === "truncate") buf.fill(0, at0)
      else if (damage === "flip") buf[at0] = buf[at0]! ^ flip
      else buf.set(garbage.subarray(0, buf.length - at0), at0)
      // The first byte that really changed (zeros over zeros, or garbage equal to what was there, change nothing).
      let p = at0
      while (p < buf.length && buf[p] === original[p]) p++
      const decoded = decodeRecords(buf)
      // Batches ending at or before p are untouched; the one containing p (and all after) are gone.
      const whole = ends.filter((e) => e <= p).length
      expect(decoded.map((r) => r.seq)).toEqual(Array.from({ length: whole }, (_, i) => i + 1))
      decoded.forEach((r, i) => expect(show(r.ops)).toBe(show(batches[i]!)))
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it("a zero length ends the log; a length running past the buffer ends it too", () => {
    const { buf, ends } = logOf([[{ bucket: "key", key: Buffer.from("a"), value: Buffer.from("1") }]], 64)
    expect(decodeRecords(buf).length).toBe(1)
    expect(decodeRecord(buf, ends[0]!)).toBeUndefined()
    expect(decodeRecord(buf.subarray(0, ends[0]! - 1), 0)).toBeUndefined()
  })
})

/** Appends groups through a real WalWriter, one at a time as the backend does. */
const appendGroups = (writer: WalWriter, groups: ReadonlyArray<ReadonlyArray<ReadonlyArray<WriteOp>>>, firstSeq = 1) =>
  Effect.gen(function* () {
    let seq = firstSeq
    for (const group of groups) {
      const records = group.map((ops) => encodeRecord(seq++, ops).record)
      const bytes = records.reduce((n, r) => n + r.length, 0)
      yield* Effect.async<void, Error>((resume) =>
        writer.append(records, bytes, seq - group.length, seq - 1, (err) =>
          resume(err === undefined ? Effect.void : Effect.fail(err))
        )
      )
    }
  })

const groupsArb = fc.array(fc.array(batchArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 12 })

describe("WAL segments", () => {
  it.live.prop(
    "replay yields every batch above the applied mark in order; a torn last segment loses only what follows the tear",
    [groupsArb, fc.integer({ min: 256, max: 8192 }), fc.nat(), fc.nat()],
    ([groups, segmentBytes, appliedPick, tearPick]) =>
      Effect.gen(function* () {
        const dir = freshDir()
        const writer = new WalWriter({ dir, segmentBytes, io: nodeWalIo, nextIndex: 0 })
        yield* appendGroups(writer, groups)
        writer.close(undefined)
        const batches = groups.flat()
        const segments = listSegments(dir)
        // Records never span segments; a segment holds whole groups.
        const perSegment = segments.map((s) => decodeRecords(fs.readFileSync(s.path)).map((r) => r.seq))
        expect(perSegment.flat()).toEqual(batches.map((_, i) => i + 1))
        segments.forEach((s, i) => expect(s.firstSeq).toBe(perSegment[i]![0]))
        const applied = appliedPick % (batches.length + 1)
        const all = readWal(dir, applied)
        expect(all.records.map((r) => r.seq)).toEqual(batches.map((_, i) => i + 1).filter((s) => s > applied))
        all.records.forEach((r) => expect(show(r.ops)).toBe(show(batches[r.seq - 1]!)))
        // Tear the last segment at a random byte: what a crash during its last write can leave.
        const last = segments[segments.length - 1]!
        const content = fs.readFileSync(last.path)
        const ends = decodeRecords(content).map((r) => [r.seq, r.end] as const)
        const original = Buffer.from(content)
        let cut = tearPick % (ends[ends.length - 1]![1] + 1)
        content.fill(0, cut)
        fs.writeFileSync(last.path, content)
        // zeros over zeros change nothing: the tear starts at the first byte that changed
        while (cut < content.length && content[cut] === original[cut]) cut++
        const keptInLast = ends.filter(([, end]) => end <= cut).map(([s]) => s)
        const expected = [...perSegment.slice(0, -1).flat(), ...keptInLast].filter((s) => s > applied)
        const torn = readWal(dir, applied)
        expect(torn.records.map((r) => r.seq)).toEqual(expected)
        removeDir(dir)
      }),
    { timeout: 60_000, fastCheck: { numRuns: 60 } }
  )

  it.live("segments rotate when full, are deleted once applied, and the current one goes at close", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const writer = new WalWriter({ dir, segmentBytes: 4096, io: nodeWalIo, nextIndex: 7 })
      const batch = (i: number): Array<WriteOp> => [
        { bucket: "key", key: Buffer.from(`k${i}`), value: Buffer.alloc(900, i) }
      ]
      yield* appendGroups(
        writer,
        Array.from({ length: 20 }, (_, i) => [batch(i)])
      )
      const segments = listSegments(dir)
      // 4 records of ~920 bytes fit in 4096 bytes: 5 segments, numbered on from nextIndex.
      expect(segments.map((s) => [s.index, s.firstSeq])).toEqual([
        [7, 1],
        [8, 5],
        [9, 9],
        [10, 13],
        [11, 17]
      ])
      // Zero-filled ahead, but never past the segment size.
      for (const s of segments) expect(fs.statSync(s.path).size).toBeLessThanOrEqual(4096)
      // release unlinks without waiting: wait for the files to go (they would stay forever if it did not)
      const segmentsBecome = (firstSeqs: ReadonlyArray<number>) =>
        Effect.promise(async () => {
          const now = () => JSON.stringify(listSegments(dir).map((s) => s.firstSeq))
          while (now() !== JSON.stringify(firstSeqs)) await new Promise((r) => setTimeout(r, 5))
        })
      writer.release(10)
      yield* segmentsBecome([9, 13, 17])
      writer.release(20)
      // the segment being written stays until close
      yield* segmentsBecome([17])
      writer.close(20)
      expect(listSegments(dir)).toEqual([])
    })
  )

  it.live("a hole before later records (a lost middle segment) is refused as corruption, not skipped", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const writer = new WalWriter({ dir, segmentBytes: 2048, io: nodeWalIo, nextIndex: 0 })
      yield* appendGroups(
        writer,
        Array.from({ length: 8 }, (_, i) => [[{ bucket: "meta", key: Buffer.from(`m${i}`), value: Buffer.alloc(700) }]])
      )
      writer.close(undefined)
      const segments = listSegments(dir)
      expect(segments.length).toBeGreaterThan(2)
      const middle = segments[1]!
      const content = fs.readFileSync(middle.path)
      content[20] = content[20]! ^ 0xff
      fs.writeFileSync(middle.path, content)
      expect(() => readWal(dir, 0)).toThrow(WalCorrupt)
      // Below the applied mark nothing is read that could be missing.
      expect(readWal(dir, 8).records).toEqual([])
    })
  )
})
