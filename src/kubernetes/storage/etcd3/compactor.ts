/**
 * storage/etcd3/compact.go's compactor: every `interval` (kube-apiserver's
 * --etcd-compaction-interval, 5 minutes; the first after one interval) one txn on the unprefixed
 * key `compact_rev_key`: if its version is the version this compactor last saw, write the
 * revision it saw one interval ago and compact etcd there; otherwise learn the key's version
 * (another apiserver won this round). The key's version is the logical clock, so any number of
 * apiservers on one etcd compact once per interval between them, and history older than about
 * one interval goes. A failed round is logged and the next one tried; time is the Effect Clock's.
 */
import { Duration, Effect } from "effect"
import type { EtcdClientShape } from "../../../client/client.js"
import { toText } from "../../../client/key-value.js"
import { Compare, Op } from "../../../client/op.js"
import type { EtcdError } from "../../../errors.js"
import { supervised } from "../../../supervision/fatal.js"
import { COMPACT_REV_KEY } from "./compact.js"

/** DefaultCompactInterval */
export const DEFAULT_COMPACTION_INTERVAL = Duration.minutes(5)

export interface CompactState {
  /** the version of compact_rev_key this compactor knows (its logical time) */
  readonly version: bigint
  /** the revision to compact at next round (the header revision of this round's txn) */
  readonly rev: bigint
  /** the revision compacted this round (0: none) */
  readonly compacted: bigint
}

/** compact.go's Compact: one round of the protocol. */
export const compactRound = (
  client: EtcdClientShape,
  expectVersion: bigint,
  rev: bigint
): Effect.Effect<CompactState, EtcdError> =>
  Effect.gen(function* () {
    const txn = yield* client.kv
      .txn()
      .when(Compare.version(COMPACT_REV_KEY).equals(expectVersion))
      .success(Op.put(COMPACT_REV_KEY, rev.toString()))
      .failure(Op.get(COMPACT_REV_KEY)).commit
    const currentRev = txn.header.revision
    if (!txn.succeeded) {
      const kv = txn.responses[0].kvs[0]
      const text = kv === undefined ? "" : toText(kv.value)
      return { version: kv?.version ?? 0n, rev: currentRev, compacted: /^-?[0-9]+$/.test(text) ? BigInt(text) : 0n }
    }
    const version = expectVersion + 1n
    // no compaction on bootstrap
    if (rev === 0n) return { version, rev: currentRev, compacted: 0n }
    yield* client.kv.compact(rev)
    return { version, rev: currentRev, compacted: rev }
  })

/**
 * runCompactLoop: forever, one round per interval (0 disables it: the effect then never
 * ends and does nothing). `onRound` sees each round's state.
 */
export const runCompactor = (
  client: EtcdClientShape,
  interval: Duration.DurationInput,
  endpoints: ReadonlyArray<string> = [],
  onRound: (s: CompactState) => void = () => {}
): Effect.Effect<void> => {
  const every = Duration.decode(interval)
  if (Duration.toMillis(every) <= 0) return Effect.never
  let state: CompactState = { version: 0n, rev: 0n, compacted: 0n }
  // each round reads the state the round before left
  const round = Effect.zipRight(
    Effect.sleep(every),
    Effect.suspend(() => compactRound(client, state.version, state.rev)).pipe(
      Effect.tap((s) =>
        Effect.sync(() => {
          state = s
          onRound(s)
        })
      ),
      Effect.catchAll((e) => Effect.logError(`etcd: endpoint (${endpoints.join(",")}) compact failed: ${e.message}`))
    )
  )
  // a failed round is logged and the next one tries again; a defect ends the loop, reported
  return supervised("apiserver compactor", Effect.forever(round))
}
