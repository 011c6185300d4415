/**
 * Maintenance.Snapshot read straight from the backend (src/server/snapshot/etcd-snapshot.ts) gives
 * the very bytes the old path gave (our own snapshot format, decoded, then mapped: the oracle
 * etcd-snapshot-before.ts) for the same state: random stores of every bucket — etcd's keys and
 * leases, our meta records (the alarms, the member, compaction marks), auth users and roles — on
 * the memory backend and on LMDB with batches still staged over what is applied, deletes included.
 * And the 32 KiB messages it is sent in are the bytes, in order, in whole messages but the last.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { encodeRole, encodeUser } from "../../../src/auth/records.js"
import type { BackendShape, BucketName, WriteOp } from "../../../src/backend/backend.js"
import { checkBolt } from "../../../src/backend/bbolt/index.js"
import { makeLmdbBackend } from "../../../src/backend/lmdb.js"
import { makeMemoryBackend } from "../../../src/backend/memory.js"
import { ALARMS_KEY } from "../../../src/server/alarms.js"
import type { SnapshotMember } from "../../../src/server/snapshot/etcd-buckets.js"
import { etcdSnapshot, messagesOf } from "../../../src/server/snapshot/etcd-snapshot.js"
import { etcdSnapshotBefore } from "./etcd-snapshot-before.js"

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"))
const keyArb = (max: number) => fc.uint8Array({ minLength: 1, maxLength: max })

/** one write to one of our buckets, with what that bucket holds (undefined: a delete) */
const opArb: fc.Arbitrary<WriteOp> = fc.oneof(
  fc.record({
    bucket: fc.constant<BucketName>("key"),
    key: keyArb(17),
    value: fc.option(
      fc.oneof(
        { weight: 9, arbitrary: fc.uint8Array({ maxLength: 200 }) },
        { weight: 1, arbitrary: fc.integer({ min: 4000, max: 20_000 }).map((n) => new Uint8Array(n).fill(n & 0xff)) }
      ),
      { nil: undefined, freq: 8 }
    )
  }),
  fc.record({
    bucket: fc.constantFrom<BucketName>("lease", "auth"),
    key: keyArb(9),
    value: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: undefined, freq: 8 })
  }),
  fc.record({
    bucket: fc.constant<BucketName>("meta"),
    key: fc.oneof(
      keyArb(12),
      fc.constantFrom("finishedCompactRev", "scheduledCompactRev", "etcd-effect/member", "etcd-effect/x").map(utf8)
    ),
    value: fc.option(fc.uint8Array({ maxLength: 30 }), { nil: undefined, freq: 8 })
  }),
  fc
    .array(
      fc.record({ memberID: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), alarm: fc.integer({ min: 0, max: 2 }) }),
      {
        maxLength: 3
      }
    )
    .map((as) => ({
      bucket: "meta" as const,
      key: ALARMS_KEY,
      value: utf8(JSON.stringify(as.map((a) => ({ memberID: a.memberID.toString(), alarm: a.alarm }))))
    })),
  fc
    .record({
      name: fc.string({ minLength: 1, maxLength: 8 }),
      password: fc.string({ maxLength: 20 }),
      roles: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }),
      noPassword: fc.boolean(),
      deleted: fc.boolean()
    })
    .map((u) => ({
      bucket: "authUsers" as const,
      key: utf8(u.name),
      value: u.deleted ? undefined : encodeUser({ ...u, roles: [...u.roles].sort() })
    })),
  fc
    .record({
      name: fc.string({ minLength: 1, maxLength: 8 }),
      perms: fc.array(
        fc.record({
          permType: fc.integer({ min: 0, max: 2 }),
          key: keyArb(6),
          rangeEnd: fc.uint8Array({ maxLength: 6 })
        }),
        { maxLength: 3 }
      ),
      deleted: fc.boolean()
    })
    .map((r) => ({ bucket: "authRoles" as const, key: utf8(r.name), value: r.deleted ? undefined : encodeRole(r) }))
)

/** batches of writes, and many keys in the key bucket at times (leaf and branch pages) */
const storeArb = fc.record({
  batches: fc.array(fc.array(opArb, { maxLength: 25 }), { maxLength: 8 }),
  many: fc.constantFrom(0, 0, 300, 3000),
  revision: fc.integer({ min: 1, max: 2 ** 40 }),
  member: fc.record({
    clusterId: fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
    memberId: fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
    raftTerm: fc.bigInt({ min: 2n, max: 2n ** 32n })
  })
})

const manyOps = (n: number): Array<WriteOp> =>
  Array.from({ length: n }, (_, i) => {
    const key = Buffer.alloc(17)
    key.writeBigUInt64BE(BigInt(i + 2), 0)
    key[8] = 0x5f
    return { bucket: "key", key: new Uint8Array(key), value: utf8(`value of revision ${i + 2}`) }
  })

const memberOf = (identity: SnapshotMember["identity"]): SnapshotMember => ({
  identity,
  name: "m1",
  peerUrls: ["http://localhost:2380"],
  clientUrls: ["http://127.0.0.1:2379"]
})

/** the old path's bytes and the new path's, of the backend's state now */
const both = (backend: BackendShape, member: SnapshotMember, revision: number) =>
  Effect.map(backend.snapshot, (ours) => ({
    before: Buffer.from(etcdSnapshotBefore(ours, member, revision, "3.5.24")),
    after: Buffer.concat(etcdSnapshot(backend, member, revision, "3.5.24"))
  }))

const root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-snapshot-paths-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
let dirs = 0

describe("Maintenance.Snapshot straight from the backend = the old path, byte for byte", () => {
  it("memory backend (100 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(storeArb, async (s) => {
        const { backend } = makeMemoryBackend()
        for (const batch of [manyOps(s.many), ...s.batches]) await Effect.runPromise(backend.write(batch))
        const { before, after } = await Effect.runPromise(both(backend, memberOf(s.member), s.revision))
        expect(after.equals(before)).toBe(true)
        expect(checkBolt(after.subarray(0, after.length - 32))).toEqual([])
      }),
      { numRuns: 100 }
    )
  }, 0)

  it("LMDB, the later batches still staged over what LMDB holds (25 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(storeArb, fc.nat(), async (s, split) => {
        const dir = path.join(root, `d${dirs++}`)
        await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              // a long batch interval: what is written after the flush stays in the overlay
              const { backend } = yield* makeLmdbBackend({ dataDir: dir, commitIntervalMs: 60_000 })
              const batches = [manyOps(s.many), ...s.batches]
              const at = split % (batches.length + 1)
              for (const batch of batches.slice(0, at)) yield* backend.write(batch)
              yield* backend.defragment // everything so far into LMDB
              for (const batch of batches.slice(at)) backend.writeNow(batch)
              const { before, after } = yield* both(backend, memberOf(s.member), s.revision)
              expect(after.equals(before)).toBe(true)
            })
          )
        )
        fs.rmSync(dir, { recursive: true, force: true })
      }),
      { numRuns: 25 }
    )
  }, 0)

  it("messagesOf: the pieces' bytes in order, in messages of the size but the last (300 runs)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 64 }),
        (pieces, size) => {
          const messages = [...messagesOf(pieces, size)]
          expect(Buffer.concat(messages).equals(Buffer.concat(pieces))).toBe(true)
          messages.slice(0, -1).forEach((m) => expect(m.byteLength).toBe(size))
          const last = messages.at(-1)?.byteLength ?? 1
          expect(last > 0 && last <= size).toBe(true)
        }
      ),
      { numRuns: 300 }
    )
  })
})
