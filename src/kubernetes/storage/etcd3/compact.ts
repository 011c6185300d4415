/**
 * etcd3/compact.go: compaction coordinated through the key "compact_rev_key". Its value is the last
 * compacted revision and its version a logical clock, so several apiservers (or tests) compacting
 * the same etcd agree; the txn itself writes one revision. The store reads the key back for
 * CompactRevision, so a compaction by anyone using this protocol is seen.
 */
import { Effect } from "effect"
import { EtcdClient, type EtcdClientShape } from "../../../client/client.js"
import { Compare, Op } from "../../../client/op.js"
import { toText } from "../../../client/key-value.js"
import type { StatusError } from "../../api/status.js"
import { fromEtcd } from "./errors.js"

export const COMPACT_REV_KEY = "compact_rev_key"

/**
 * Compacts etcd at `revision` (default: the revision of the bookkeeping write itself, i.e. all
 * history), after recording it in compact_rev_key. Returns the compacted revision.
 */
export const compactWith = (client: EtcdClientShape, revision?: bigint): Effect.Effect<bigint, StatusError> =>
  Effect.gen(function* () {
    const current = yield* client.kv.get(COMPACT_REV_KEY)
    const version = current.kvs[0]?.version ?? 0n
    // Without a revision the txn's own revision is compacted; its value is then empty and readers
    // take the key's modRevision (one write either way, as the apiserver's compactor does).
    const txn = yield* client.kv
      .txn()
      .when(Compare.version(COMPACT_REV_KEY).equals(version))
      .success(Op.put(COMPACT_REV_KEY, revision === undefined ? "" : revision.toString())).commit
    const rev = revision ?? txn.header.revision
    yield* client.kv.compact(rev)
    return rev
  }).pipe(Effect.mapError(fromEtcd))

/** compactWith on the EtcdClient in context (what the conformance suite's `compaction` does). */
export const compactStorage = (revision?: bigint): Effect.Effect<bigint, StatusError, EtcdClient> =>
  Effect.flatMap(EtcdClient, (client) => compactWith(client, revision))

/** The compacted revision recorded in compact_rev_key (0 when none). */
export const readCompactRevision = (client: EtcdClientShape): Effect.Effect<bigint, StatusError> =>
  Effect.map(Effect.mapError(client.kv.get(COMPACT_REV_KEY), fromEtcd), (r) => {
    const kv = r.kvs[0]
    if (kv === undefined) return 0n
    const text = toText(kv.value)
    return /^[0-9]+$/.test(text) ? BigInt(text) : kv.modRevision
  })

/**
 * The store's CompactRevision: compact_rev_key read back, never lower than a value seen before
 * (a failed read answers the last one).
 */
export const makeCompactRevision = (client: EtcdClientShape): Effect.Effect<bigint> => {
  let lastCompactRevision = 0n
  return Effect.map(
    Effect.orElseSucceed(readCompactRevision(client), () => lastCompactRevision),
    (rev) => {
      if (rev > lastCompactRevision) lastCompactRevision = rev
      return lastCompactRevision
    }
  )
}
