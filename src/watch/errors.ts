/**
 * The mvcc watch errors (server/storage/mvcc/watcher.go, kvstore.go) with etcd's exact text. The
 * server reports them in-band as a created+canceled response's cancel_reason.
 */
import { Data } from "effect"

export type WatchErrorReason = "EmptyRange" | "StreamClosed" | "DuplicateId" | "NotExist" | "Compacted"

const messages: Record<WatchErrorReason, string> = {
  EmptyRange: "mvcc: watcher range is empty",
  // etcd's watchStream.Watch answers a closed stream with ErrEmptyWatcherRange too (a quirk kept for parity)
  StreamClosed: "mvcc: watcher range is empty",
  DuplicateId: "mvcc: duplicate watch ID provided on the WatchStream",
  NotExist: "mvcc: watcher does not exist",
  Compacted: "mvcc: required revision has been compacted"
}

export class WatchError extends Data.TaggedError("WatchError")<{
  readonly reason: WatchErrorReason
  readonly message: string
}> {
  static make(reason: WatchErrorReason): WatchError {
    return new WatchError({ reason, message: messages[reason] })
  }
}
