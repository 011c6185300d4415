/**
 * Our backend's buckets as etcd 3.5 keeps them in its bbolt file, for Maintenance.Snapshot:
 *
 * - key, lease, auth: the same bytes (our encodings are etcd's: kv-codec.ts, leasepb.ts);
 * - meta: the compaction marks as they are, plus what etcd 3.5 writes — consistent_index (our
 *   revision: there is no raft log), term, confState (this member the one voter); our own records
 *   (the identity and the alarms, "etcd-effect/…") are not copied;
 * - authUsers, authRoles: authpb.User / authpb.Role (ours are JSON: authpb.ts converts);
 * - alarm: one AlarmMember key per raised alarm (alarm-bucket.ts);
 * - members: this member, by its id in hex, as etcd's JSON; members_removed empty; cluster: the
 *   cluster version, major.minor of the API version we serve.
 */
import { Either } from "effect"
import type { BucketInput } from "../../backend/bbolt/index.js"
import type { BucketName } from "../../backend/backend.js"
import { encodeRolePb, encodeUserPb } from "../../auth/authpb.js"
import { decodeRole, decodeUser } from "../../auth/records.js"
import { ALARMS_KEY, type AlarmMember } from "../alarms.js"
import type { MemberIdentity } from "../member.js"
import { encodeAlarmKey } from "./alarm-bucket.js"

/** One of our buckets, every entry in key order (a read of the backend's consistent view). */
export type ReadBucket = (bucket: BucketName) => ReadonlyArray<readonly [Uint8Array, Uint8Array]>

/** One entry of one of our buckets (what a restore reads back from etcd's buckets). */
export interface SnapshotEntry {
  readonly bucket: BucketName
  readonly key: Uint8Array
  readonly value: Uint8Array
}

/** A ReadBucket over a list of entries (each bucket's in key order, as the list gives them). */
export const readEntries =
  (entries: ReadonlyArray<SnapshotEntry>): ReadBucket =>
  (bucket) =>
    entries.filter((e) => e.bucket === bucket).map((e) => [e.key, e.value] as const)

export interface SnapshotMember {
  readonly identity: MemberIdentity
  readonly name: string
  readonly peerUrls: ReadonlyArray<string>
  readonly clientUrls: ReadonlyArray<string>
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

type Entries = ReadonlyArray<readonly [Uint8Array, Uint8Array]>

const byKey = (a: readonly [Uint8Array, Uint8Array], b: readonly [Uint8Array, Uint8Array]) => Buffer.compare(a[0], b[0])

/** meta's entries, ours left out, with what etcd 3.5 writes; and the alarms our record holds */
const metaOf = (
  ours: Entries,
  member: SnapshotMember,
  revision: number
): { readonly meta: Entries; readonly alarms: ReadonlyArray<AlarmMember> } => {
  let alarms: ReadonlyArray<AlarmMember> = []
  const meta: Array<readonly [Uint8Array, Uint8Array]> = [
    [text("confState"), text(`{"voters":[${member.identity.memberId}],"auto_leave":false}`)],
    [text("consistent_index"), u64(BigInt(revision))],
    [text("term"), u64(member.identity.raftTerm)]
  ]
  for (const [key, value] of ours) {
    if (Buffer.compare(key, ALARMS_KEY) === 0) alarms = JSON.parse(Buffer.from(value).toString("utf8"))
    if (Buffer.from(key.buffer, key.byteOffset, key.byteLength).subarray(0, OURS.length).equals(OURS)) continue
    meta.push([key, value])
  }
  return { meta: meta.sort(byKey), alarms }
}

/**
 * etcd's buckets from ours, each read once (`read`: in key order, as the backend's range gives
 * it), and the serving member; `revision` is the store's current revision. A record that does not
 * decode throws (the store would not start).
 */
export const toEtcdBuckets = (
  read: ReadBucket,
  member: SnapshotMember,
  revision: number,
  apiVersion: string
): Array<BucketInput> => {
  const { meta, alarms } = metaOf(read("meta"), member, revision)
  const out: Record<string, Entries> = {
    alarm: alarms.map((a) => [encodeAlarmKey(a), new Uint8Array(0)] as const).sort(byKey),
    auth: read("auth"),
    authRoles: read("authRoles").map(([k, v]) => [k, encodeRolePb(Either.getOrThrow(decodeRole(v)))] as const),
    authUsers: read("authUsers").map(([k, v]) => [k, encodeUserPb(Either.getOrThrow(decodeUser(v)))] as const),
    cluster: [[text("clusterVersion"), text(apiVersion.split(".").slice(0, 2).join(".") + ".0")]],
    key: read("key"),
    lease: read("lease"),
    members: [[text(member.identity.memberId.toString(16)), text(memberJson(member))]],
    members_removed: [],
    meta
  }
  return Object.entries(out).map(([name, entries]) => ({ name: text(name), entries }))
}
