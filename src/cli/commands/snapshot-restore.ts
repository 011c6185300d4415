/**
 * `snapshot restore <filename> --data-dir DIR`, as etcdutl 3.6's (v3_snapshot.go Restore), into an
 * etcd-effect data dir: the flags checked in etcdutl's order and words, the file's hash checked
 * (snapshot-file.ts), etcd's buckets (3.4 to 3.6) or our old format read into our buckets, the
 * revision bumped and marked compacted when asked, and the data dir built beside the target and
 * renamed into place (restore-data-dir.ts): a refusal leaves nothing behind, where etcdutl leaves
 * the directories it had made. Nothing is printed on success but one line on stderr.
 */
import * as fs from "node:fs"
import { Console, Effect } from "effect"
import type { ParsedRun } from "../flags/parse.js"
import type { snapshotRestoreFlags } from "../flags/snapshot-flags.js"
import { restoreMember } from "../snapshot/restore-member.js"
import { usage } from "./global.js"
import { UsageError, valuesOf } from "./usage.js"
import { readSnapshotEntries } from "../snapshot/snapshot-entries.js"
import { bumpRevision } from "../../server/snapshot/revision-bump.js"
import { writeRestoredDataDir } from "../../server/snapshot/restore-data-dir.js"

const refuse = (message: string): Effect.Effect<void> => usage(new UsageError(message, 1))

/** fileutil.Exist && !fileutil.DirEmpty: a dir that exists and is not empty (or cannot be listed) */
const notEmpty = (dir: string): boolean => {
  if (!fs.existsSync(dir)) return false
  try {
    return fs.readdirSync(dir).length > 0
  } catch {
    return true
  }
}

export const runSnapshotRestore = (p: ParsedRun): Effect.Effect<void> => {
  if (p.args.length !== 1) return usage(new UsageError("snapshot restore requires exactly one argument"))
  const o = valuesOf<typeof snapshotRestoreFlags>(p)
  const bump = o["bump-revision"]
  if ((bump === 0 && o["mark-compacted"]) || (bump > 0 && !o["mark-compacted"])) {
    return usage(new UsageError("--mark-compacted required if --revision-bump > 0"))
  }
  const dataDir = o["data-dir"] === "" ? `${o.name}.etcd` : o["data-dir"]
  const file = p.args[0]!
  return Effect.suspend(() => {
    const member = restoreMember({
      name: o.name,
      initialCluster: o["initial-cluster"],
      initialClusterToken: o["initial-cluster-token"],
      initialAdvertisePeerUrls: o["initial-advertise-peer-urls"]
    })
    if (typeof member === "string") return refuse(member)
    if (notEmpty(dataDir)) return refuse(`data-dir ${JSON.stringify(dataDir)} not empty or could not be read`)
    const walDir = o["wal-dir"]
    if (walDir !== "" && fs.existsSync(walDir)) return refuse(`wal-dir ${JSON.stringify(walDir)} exists`)
    const read = readSnapshotEntries(file, o["skip-hash-check"])
    if (typeof read === "string") return refuse(read)
    const bumped = bump > 0 ? bumpRevision(read.entries, bump).entries : read.entries
    const warn =
      read.unknown.length === 0
        ? Effect.void
        : Console.error(
            `Warning: buckets etcd-effect does not know, left out (etcd would keep them unread): ${read.unknown.join(", ")}`
          )
    return warn.pipe(
      Effect.zipRight(writeRestoredDataDir(dataDir, bumped, member)),
      Effect.zipRight(
        Console.error(
          `restored snapshot ${file} into ${dataDir} (member ${member.memberId.toString(16)}, cluster ${member.clusterId.toString(16)})`
        )
      ),
      Effect.catchAll((e) => refuse(e instanceof Error ? e.message : String(e)))
    )
  })
}
