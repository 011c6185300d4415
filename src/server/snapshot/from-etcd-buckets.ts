/**
 * etcd's buckets (a bbolt snapshot or db file of etcd 3.4 to 3.6) as our backend's entries, the
 * inverse of etcd-buckets.ts:
 *
 * - key, lease, auth: the same bytes;
 * - authUsers, authRoles: authpb.User / authpb.Role to our JSON records;
 * - meta: the compaction marks; etcd's raft bookkeeping (consistent_index, term, confState) and
 *   storageVersion have no use here and are dropped (what etcdutl's restore rewrites anyway);
 * - alarm: each AlarmMember key into our alarms record (etcd keeps its alarms across a restore);
 * - members, members_removed, cluster: dropped, as etcdutl's TrimMembershipFromBackend does; the
 *   restored member's identity comes from the restore flags (restore-member.ts);
 * - any other bucket (a newer etcd's): etcdutl copies the file whole, so its etcd keeps the bucket
 *   and, not knowing it, never reads it; ours cannot keep it and ignores it alike (`unknown` names
 *   them, for the warning).
 */
import { encodeRole, encodeUser } from "../../auth/records.js"
import { decodeRolePb, decodeUserPb } from "../../auth/authpb.js"
import type { BoltBucket } from "../../backend/bbolt/index.js"
import { FINISHED_COMPACT_KEY, SCHEDULED_COMPACT_KEY } from "../../mvcc/kvstore-compaction.js"
import { ALARMS_KEY, type AlarmMember } from "../alarms.js"
import { decodeAlarmKey } from "./alarm-bucket.js"
import type { SnapshotEntry } from "./etcd-buckets.js"

const SAME = new Set(["key", "lease", "auth"])
const DROPPED = new Set(["members", "members_removed", "cluster"])
const META_KEPT = [SCHEDULED_COMPACT_KEY, FINISHED_COMPACT_KEY].map((k) => Buffer.from(k).toString("latin1"))

export interface FromEtcd {
  readonly entries: ReadonlyArray<SnapshotEntry>
  /** the buckets neither etcd 3.6 nor we know, by name */
  readonly unknown: ReadonlyArray<string>
}

/** Our entries from etcd's buckets; throws naming the record when one does not decode. */
export const fromEtcdBuckets = (buckets: ReadonlyArray<BoltBucket>): FromEtcd => {
  const entries: Array<SnapshotEntry> = []
  const unknown: Array<string> = []
  const alarms: Array<AlarmMember> = []
  for (const b of buckets) {
    const name = b.name.toString("latin1")
    const copy = (k: Uint8Array) => Uint8Array.from(k)
    if (SAME.has(name)) {
      for (const [k, v] of b.entries)
        entries.push({ bucket: name as "key" | "lease" | "auth", key: copy(k), value: copy(v) })
    } else if (name === "meta") {
      for (const [k, v] of b.entries)
        if (META_KEPT.includes(k.toString("latin1"))) entries.push({ bucket: "meta", key: copy(k), value: copy(v) })
    } else if (name === "authUsers") {
      for (const [k, v] of b.entries)
        entries.push({ bucket: "authUsers", key: copy(k), value: encodeUser(decodeUserPb(v)) })
    } else if (name === "authRoles") {
      for (const [k, v] of b.entries)
        entries.push({ bucket: "authRoles", key: copy(k), value: encodeRole(decodeRolePb(v)) })
    } else if (name === "alarm") {
      for (const [k] of b.entries) alarms.push(decodeAlarmKey(k))
    } else if (!DROPPED.has(name)) {
      unknown.push(name)
    }
  }
  if (alarms.length > 0) {
    entries.push({
      bucket: "meta",
      key: ALARMS_KEY,
      value: new Uint8Array(Buffer.from(JSON.stringify(alarms), "utf8"))
    })
  }
  return { entries, unknown }
}
