/**
 * How a watch ends when it cannot go on. clientv3 reports these as a last `{Canceled: true}`
 * response whose `Err()` is the error; here each is a typed failure of the watch Stream.
 * Transport errors (Unavailable, Internal) are not among them: the watch reconnects and resumes.
 */
import { Data } from "effect"
import { EtcdError } from "../errors.js"
import type { ResponseHeader } from "./key-value.js"

export const COMPACTED_MESSAGE = "etcdserver: mvcc: required revision has been compacted"

/**
 * The watch's next revision was compacted away (etcd's ErrCompacted). `compactRevision` is the
 * server's compaction revision: the earliest revision a new watch can start from (after a re-list);
 * 0n when the server only gave the reason (a negative start revision).
 */
export class WatchCompacted extends Data.TaggedError("WatchCompacted")<{
  readonly compactRevision: bigint
  readonly message: string
  /** the header of the server's compaction response, when there was one */
  readonly header?: ResponseHeader | undefined
}> {}

/** The server refused or ended the watch for a reason of its own (`cancel_reason`, verbatim). */
export class WatchCanceled extends Data.TaggedError("WatchCanceled")<{
  readonly reason: string
  readonly message: string
}> {}

/** The user may not read the watched range (cancel reason `... etcdserver: permission denied`). */
export class WatchPermissionDenied extends Data.TaggedError("WatchPermissionDenied")<{
  readonly message: string
}> {}

/** A require-leader watch lost its leader (etcd's ErrNoLeader, gRPC Unavailable "etcdserver: no leader"). */
export class WatchNoLeader extends Data.TaggedError("WatchNoLeader")<{
  readonly message: string
}> {}

/** Every way a watch Stream fails. `EtcdError` carries any other non-retryable gRPC status. */
export type WatchError = WatchCompacted | WatchCanceled | WatchPermissionDenied | WatchNoLeader | EtcdError

export const watchCompacted = (compactRevision: bigint, header?: ResponseHeader): WatchCompacted =>
  new WatchCompacted({ compactRevision, message: COMPACTED_MESSAGE, header })

/** A created+canceled (or canceled) response's reason, as the typed failure clientv3 would map it to. */
export const fromCancelReason = (reason: string): WatchError => {
  if (reason === COMPACTED_MESSAGE) return watchCompacted(0n)
  if (reason.includes("etcdserver: permission denied") || reason.includes("code = PermissionDenied")) {
    return new WatchPermissionDenied({ message: reason })
  }
  return new WatchCanceled({ reason, message: reason === "" ? "etcdserver: watch canceled" : reason })
}

export { EtcdError }
