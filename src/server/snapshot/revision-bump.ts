/**
 * etcdutl's `--bump-revision N --mark-compacted` (v3_snapshot.go modifyLatestRevision): a record
 * with an empty value at (latest revision + N, 0) in the key bucket, so the store's revision starts
 * there, and that revision as the scheduled compaction, so the server compacts everything before
 * it when it starts: clients never see the revision go back, and watches from before it fail as
 * compacted rather than miss events.
 */
import { SCHEDULED_COMPACT_KEY, encodeCompactRev } from "../../mvcc/kvstore-compaction.js"
import { bytesToMain, bytesToSub, revToBytes } from "../../mvcc/kv-codec.js"
import type { SnapshotEntry } from "./etcd-buckets.js"

/** The entries with the revision bumped by `amount` (> 0) and marked compacted; and the new revision. */
export const bumpRevision = (
  entries: ReadonlyArray<SnapshotEntry>,
  amount: number
): { readonly entries: ReadonlyArray<SnapshotEntry>; readonly revision: number } => {
  let main = 0
  let sub = 0
  for (const e of entries) {
    if (e.bucket !== "key") continue
    const [m, s] = [bytesToMain(e.key), bytesToSub(e.key)]
    if (m > main || (m === main && s > sub)) [main, sub] = [m, s]
  }
  const revision = main + amount
  const scheduled = Buffer.from(SCHEDULED_COMPACT_KEY)
  return {
    revision,
    entries: [
      ...entries.filter((e) => !(e.bucket === "meta" && scheduled.equals(e.key))),
      { bucket: "key", key: revToBytes(revision, 0), value: new Uint8Array(0) },
      { bucket: "meta", key: SCHEDULED_COMPACT_KEY, value: encodeCompactRev(revision) }
    ]
  }
}
