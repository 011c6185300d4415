/**
 * How a watch ends when it cannot go on. clientv3 reports these as a last `{Canceled: true}`
 * response whose `Err()` is the error; here each is a typed failure of the watch Stream.
 * Transport errors (Unavailable, Internal) are not among them: the watch reconnects and resumes.
 */
import { Schema } from "effect"
import { EtcdError, GrpcCode } from "../errors.js"
import type { ResponseHeader } from "./key-value.js"

export const COMPACTED_MESSAGE = "etcdserver: mvcc: required revision has been compacted"

/** etcd's gRPC code of the error (rpctypes), filled in by the constructor */
const codeOf = <C extends GrpcCode>(code: C) =>
  Schema.Literal(code).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => code)
  )

/** a response header as a Schema (its int64s encode as decimal strings) */
const ResponseHeaderSchema: Schema.Schema<ResponseHeader, { readonly [K in keyof ResponseHeader]: string }> =
  Schema.Struct({
    clusterId: Schema.BigInt,
    memberId: Schema.BigInt,
    revision: Schema.BigInt,
    raftTerm: Schema.BigInt
  })

/**
 * The watch's next revision was compacted away (etcd's ErrCompacted). `compactRevision` is the
 * server's compaction revision: the earliest revision a new watch can start from (after a re-list);
 * 0n when the server only gave the reason (a negative start revision).
 */
export class WatchCompacted extends Schema.TaggedError<WatchCompacted>()("WatchCompacted", {
  code: codeOf(GrpcCode.OutOfRange),
  compactRevision: Schema.BigInt,
  message: Schema.String,
  /** the header of the server's compaction response, when there was one */
  header: Schema.optional(Schema.UndefinedOr(ResponseHeaderSchema))
}) {}

/** The server refused or ended the watch for a reason of its own (`cancel_reason`, verbatim). */
export class WatchCanceled extends Schema.TaggedError<WatchCanceled>()("WatchCanceled", {
  code: codeOf(GrpcCode.Canceled),
  reason: Schema.String,
  message: Schema.String
}) {}

/** The user may not read the watched range (cancel reason `... etcdserver: permission denied`). */
export class WatchPermissionDenied extends Schema.TaggedError<WatchPermissionDenied>()("WatchPermissionDenied", {
  code: codeOf(GrpcCode.PermissionDenied),
  message: Schema.String
}) {}

/** A require-leader watch lost its leader (etcd's ErrNoLeader, gRPC Unavailable "etcdserver: no leader"). */
export class WatchNoLeader extends Schema.TaggedError<WatchNoLeader>()("WatchNoLeader", {
  code: codeOf(GrpcCode.Unavailable),
  message: Schema.String
}) {}

/** Every way a watch Stream fails. `EtcdError` carries any other non-retryable gRPC status. */
export type WatchError = WatchCompacted | WatchCanceled | WatchPermissionDenied | WatchNoLeader | EtcdError

export const watchCompacted = (compactRevision: bigint, header?: ResponseHeader): WatchCompacted =>
  // no `header` key without a header, so the error equals itself after a Schema round trip
  new WatchCompacted(
    header === undefined
      ? { compactRevision, message: COMPACTED_MESSAGE }
      : { compactRevision, message: COMPACTED_MESSAGE, header }
  )

/** A created+canceled (or canceled) response's reason, as the typed failure clientv3 would map it to. */
export const fromCancelReason = (reason: string): WatchError => {
  if (reason === COMPACTED_MESSAGE) return watchCompacted(0n)
  if (reason.includes("etcdserver: permission denied") || reason.includes("code = PermissionDenied")) {
    return new WatchPermissionDenied({ message: reason })
  }
  return new WatchCanceled({ reason, message: reason === "" ? "etcdserver: watch canceled" : reason })
}

export { EtcdError }
