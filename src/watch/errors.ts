/**
 * The mvcc watch errors (server/storage/mvcc/watcher.go, kvstore.go) with etcd's exact text. The
 * server reports them in-band as a created+canceled response's cancel_reason.
 */
import { Schema } from "effect"

const WatchErrorReason = Schema.Literal("EmptyRange", "StreamClosed", "DuplicateId", "NotExist", "Compacted")
/** Which watch error: an empty range, a closed stream, a duplicate or unknown id, or a compacted revision. */
export type WatchErrorReason = typeof WatchErrorReason.Type

const messages: Record<WatchErrorReason, string> = {
  EmptyRange: "mvcc: watcher range is empty",
  // etcd's watchStream.Watch answers a closed stream with ErrEmptyWatcherRange too (a quirk kept for parity)
  StreamClosed: "mvcc: watcher range is empty",
  DuplicateId: "mvcc: duplicate watch ID provided on the WatchStream",
  NotExist: "mvcc: watcher does not exist",
  Compacted: "mvcc: required revision has been compacted"
}

/** etcd's mvcc watch error: `reason` names it, `message` is etcd's text (no gRPC code: it travels in-band). */
export class WatchError extends Schema.TaggedError<WatchError>()("WatchError", {
  reason: WatchErrorReason,
  message: Schema.String
}) {
  /** the error of this reason with etcd's text */
  static of(reason: WatchErrorReason): WatchError {
    return new WatchError({ reason, message: messages[reason] })
  }
}
