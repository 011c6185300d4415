/**
 * A new data dir holding a snapshot's entries, as etcdutl's restore makes one, built so that no
 * refusal or crash leaves half of it: everything is written in a fresh directory beside the target
 * (`.<name>.restore-<pid>`), closed (LMDB holds it all, the WAL is emptied) and only then renamed
 * to the target, which must be missing or empty. On any failure the temporary directory is removed.
 *
 * The member's record is the restored identity with raft term 1, as etcdutl's WAL has it: the
 * first start takes term 2, as the restored etcd's first election does.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import type { WriteOp } from "../../backend/backend.js"
import { fsyncDir } from "../../backend/data-dir.js"
import { makeLmdbBackend } from "../../backend/lmdb.js"
import { encodeIdentity, MEMBER_KEY } from "../member.js"
import type { SnapshotEntry } from "./etcd-buckets.js"

const BATCH = 10_000

export interface RestoredIdentity {
  readonly clusterId: bigint
  readonly memberId: bigint
}

/** Writes `entries` (our member record among them is replaced) into `target`, atomically. */
export const writeRestoredDataDir = (
  target: string,
  entries: ReadonlyArray<SnapshotEntry>,
  identity: RestoredIdentity
): Effect.Effect<void, unknown> => {
  const dir = path.resolve(target)
  const tmp = path.join(path.dirname(dir), `.${path.basename(dir)}.restore-${process.pid}`)
  const ops: Array<WriteOp> = entries
    .filter((e) => !(e.bucket === "meta" && Buffer.compare(e.key, MEMBER_KEY) === 0))
    .map((e) => ({ bucket: e.bucket, key: e.key, value: e.value }))
  ops.push({ bucket: "meta", key: MEMBER_KEY, value: encodeIdentity({ ...identity, raftTerm: 1n }) })
  const write = Effect.scoped(
    Effect.gen(function* () {
      const { backend } = yield* makeLmdbBackend({ dataDir: tmp })
      for (let i = 0; i < ops.length; i += BATCH) yield* backend.write(ops.slice(i, i + BATCH))
    })
  )
  return Effect.gen(function* () {
    yield* Effect.sync(() => fs.rmSync(tmp, { recursive: true, force: true }))
    yield* write
    yield* Effect.try(() => {
      fs.renameSync(tmp, dir)
      fsyncDir(path.dirname(dir))
    })
  }).pipe(Effect.onError(() => Effect.sync(() => fs.rmSync(tmp, { recursive: true, force: true }))))
}
