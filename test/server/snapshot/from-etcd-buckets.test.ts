/**
 * Our buckets → etcd's (etcd-buckets.ts, what `snapshot save` sends) → a bbolt file → our buckets
 * again (from-etcd-buckets.ts, what `snapshot restore` reads) gives back every entry the server
 * reads: keys, leases, auth, users, roles, compaction marks and alarms; etcd's own membership and
 * raft records are dropped, and buckets etcd-effect does not know are named, not kept.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readBolt, writeBolt } from "../../../src/backend/bbolt/index.js"
import { encodeRole, encodeUser } from "../../../src/auth/records.js"
import { encodeCompactRev, FINISHED_COMPACT_KEY, SCHEDULED_COMPACT_KEY } from "../../../src/mvcc/kvstore-compaction.js"
import { ALARMS_KEY } from "../../../src/server/alarms.js"
import { readEntries, type SnapshotEntry, toEtcdBuckets } from "../../../src/server/snapshot/etcd-buckets.js"
import { fromEtcdBuckets } from "../../../src/server/snapshot/from-etcd-buckets.js"

const bytes = fc.uint8Array({ minLength: 1, maxLength: 40 })
const name = fc.string({ minLength: 1, maxLength: 12 })
const member = {
  identity: { clusterId: 7n, memberId: 0x8e9e05c52164694dn, raftTerm: 3n },
  name: "m",
  peerUrls: ["http://localhost:2380"],
  clientUrls: ["http://127.0.0.1:2379"]
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"))

/** entries as our backend holds them, one per (bucket, key) */
const ourEntries = fc
  .record({
    key: fc.array(fc.tuple(bytes, bytes), { maxLength: 30 }),
    lease: fc.array(fc.tuple(bytes, bytes), { maxLength: 5 }),
    auth: fc.array(fc.tuple(bytes, bytes), { maxLength: 3 }),
    users: fc.array(
      fc.record({ name, password: fc.string(), roles: fc.array(name, { maxLength: 3 }), noPassword: fc.boolean() }),
      { maxLength: 4 }
    ),
    roles: fc.array(
      fc.record({
        name,
        perms: fc.array(fc.record({ permType: fc.integer({ min: 0, max: 2 }), key: bytes, rangeEnd: bytes }), {
          maxLength: 3
        })
      }),
      { maxLength: 4 }
    ),
    compact: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
    alarms: fc.uniqueArray(
      fc.record({ memberID: fc.bigUint(2n ** 64n - 1n).map(String), alarm: fc.constantFrom(1, 2) }),
      { maxLength: 3, selector: (a) => `${a.memberID}/${a.alarm}` }
    )
  })
  .map((g) => {
    const out = new Map<string, SnapshotEntry>()
    const add = (e: SnapshotEntry) => out.set(`${e.bucket}/${Buffer.from(e.key).toString("hex")}`, e)
    for (const [k, v] of g.key) add({ bucket: "key", key: k, value: v })
    for (const [k, v] of g.lease) add({ bucket: "lease", key: k, value: v })
    for (const [k, v] of g.auth) add({ bucket: "auth", key: k, value: v })
    for (const u of g.users) add({ bucket: "authUsers", key: utf8(u.name), value: encodeUser(u) })
    for (const r of g.roles) add({ bucket: "authRoles", key: utf8(r.name), value: encodeRole(r) })
    if (g.compact !== null) {
      add({ bucket: "meta", key: SCHEDULED_COMPACT_KEY, value: encodeCompactRev(g.compact) })
      add({ bucket: "meta", key: FINISHED_COMPACT_KEY, value: encodeCompactRev(g.compact) })
    }
    if (g.alarms.length > 0) add({ bucket: "meta", key: ALARMS_KEY, value: utf8(JSON.stringify(g.alarms)) })
    return [...out.values()]
  })

/** comparable: sorted "bucket key=value" lines, the alarms record as a sorted set */
const shown = (entries: ReadonlyArray<SnapshotEntry>) =>
  entries
    .map((e) =>
      Buffer.from(e.key).equals(Buffer.from(ALARMS_KEY))
        ? `alarms ${JSON.stringify(JSON.parse(Buffer.from(e.value).toString()).map(JSON.stringify).sort())}`
        : `${e.bucket} ${Buffer.from(e.key).toString("hex")}=${Buffer.from(e.value).toString("hex")}`
    )
    .sort()

describe("etcd's buckets back to ours", () => {
  it("our entries → etcd's buckets → bbolt → our entries: the same (200 runs)", () => {
    fc.assert(
      fc.property(ourEntries, (entries) => {
        const file = writeBolt(toEtcdBuckets(readEntries(entries), member, 42, "3.5.24"))
        const back = fromEtcdBuckets(readBolt(file).buckets)
        expect(back.unknown).toEqual([])
        expect(shown(back.entries)).toEqual(shown(entries))
      }),
      { numRuns: 200 }
    )
  })

  it("a bucket of a newer etcd is named, not kept", () => {
    const buckets = [
      ...toEtcdBuckets(readEntries([]), member, 1, "3.5.24"),
      { name: utf8("future"), entries: [[utf8("k"), utf8("v")] as const] }
    ]
    const back = fromEtcdBuckets(readBolt(writeBolt(buckets)).buckets)
    expect(back).toEqual({ entries: [], unknown: ["future"] })
  })
})
