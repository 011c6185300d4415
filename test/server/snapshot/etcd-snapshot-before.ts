/**
 * Maintenance.Snapshot's old path, as it was before the snapshot was read straight from the backend
 * (commit 6838941, src/server/snapshot/etcd-buckets.ts and etcd-snapshot.ts): the backend's copy in
 * our own format, decoded, mapped to etcd's buckets, written as bbolt, its sha256 after. Kept here
 * only as the oracle the new path must match byte for byte (etcd-snapshot.property.test.ts).
 */
import { createHash } from "node:crypto"
import { Either } from "effect"
import { encodeRolePb, encodeUserPb } from "../../../src/auth/authpb.js"
import { decodeRole, decodeUser } from "../../../src/auth/records.js"
import type { BucketName } from "../../../src/backend/backend.js"
import { type BucketInput, writeBolt } from "../../../src/backend/bbolt/index.js"
import { decodeSnapshot } from "../../../src/backend/snapshot-format.js"
import { ALARMS_KEY, type AlarmMember } from "../../../src/server/alarms.js"
import { encodeAlarmKey } from "../../../src/server/snapshot/alarm-bucket.js"
import type { SnapshotMember } from "../../../src/server/snapshot/etcd-buckets.js"

interface SnapshotEntry {
  readonly bucket: BucketName
  readonly key: Uint8Array
  readonly value: Uint8Array
}

const OURS = Buffer.from("etcd-effect/", "latin1")
const text = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "utf8"))
const u64 = (n: bigint): Uint8Array => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt.asUintN(64, n))
  return new Uint8Array(b)
}

/** the member as etcd's membership.Member JSON (ids are u64: written as digits, not via Number) */
const memberJson = (m: SnapshotMember): string =>
  `{"id":${m.identity.memberId},"peerURLs":${JSON.stringify(m.peerUrls)},"name":${JSON.stringify(m.name)},"clientURLs":${JSON.stringify(m.clientUrls)}}`

type Entries = Array<readonly [Uint8Array, Uint8Array]>

/**
 * etcd's buckets from our entries (in key order per bucket) and the serving member; `revision` is
 * the store's current revision. A record that does not decode throws (the store would not start).
 */
const toEtcdBuckets = (
  entries: ReadonlyArray<SnapshotEntry>,
  member: SnapshotMember,
  revision: number,
  apiVersion: string
): Array<BucketInput> => {
  const out: Record<string, Entries> = {
    alarm: [],
    auth: [],
    authRoles: [],
    authUsers: [],
    cluster: [[text("clusterVersion"), text(apiVersion.split(".").slice(0, 2).join(".") + ".0")]],
    key: [],
    lease: [],
    members: [[text(member.identity.memberId.toString(16)), text(memberJson(member))]],
    members_removed: [],
    meta: [
      [text("confState"), text(`{"voters":[${member.identity.memberId}],"auto_leave":false}`)],
      [text("consistent_index"), u64(BigInt(revision))],
      [text("term"), u64(member.identity.raftTerm)]
    ]
  }
  let alarms: ReadonlyArray<AlarmMember> = []
  for (const e of entries) {
    if (e.bucket === "meta") {
      if (Buffer.compare(e.key, ALARMS_KEY) === 0) alarms = JSON.parse(Buffer.from(e.value).toString("utf8"))
      if (Buffer.from(e.key).subarray(0, OURS.length).equals(OURS)) continue
      out.meta!.push([e.key, e.value])
    } else if (e.bucket === "authUsers") {
      out.authUsers!.push([e.key, encodeUserPb(Either.getOrThrow(decodeUser(e.value)))])
    } else if (e.bucket === "authRoles") {
      out.authRoles!.push([e.key, encodeRolePb(Either.getOrThrow(decodeRole(e.value)))])
    } else out[e.bucket]!.push([e.key, e.value])
  }
  out.alarm = alarms.map((a) => [encodeAlarmKey(a), new Uint8Array(0)] as const)
  return Object.entries(out).map(([name, es]) => ({
    name: text(name),
    entries: [...es].sort((a, b) => Buffer.compare(a[0], b[0]))
  }))
}

/** etcd's snapshot bytes from the backend's consistent copy (our own format). */
export const etcdSnapshotBefore = (
  ours: Uint8Array,
  member: SnapshotMember,
  revision: number,
  apiVersion: string
): Uint8Array => {
  const db = writeBolt(toEtcdBuckets(decodeSnapshot(ours), member, revision, apiVersion))
  return new Uint8Array(Buffer.concat([db, createHash("sha256").update(db).digest()]))
}
