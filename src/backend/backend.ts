/**
 * The storage backend, etcd's server/storage/backend as an Effect service: named buckets of ordered
 * byte keys, read synchronously, written in atomic batches that are group-committed.
 *
 * Contract (both Layers, LMDB and memory, honour it; the mvcc store relies on it):
 * - `write(ops)` stages one atomic batch *synchronously*: every later `get`/`range` sees it at once
 *   (like etcd's txReadBuffer). It returns an Effect that completes when that batch is durable.
 *   `writeNow(ops)` is the same staging with the durability wait as a callback (a `WriteTicket`),
 *   for the store's write fast path (no Effect per write); `write` is built on it. `writeNow([])`
 *   stages nothing: its ticket is `flush`'s (done once everything staged before it is durable).
 *   Batches become durable in staging order, and batches staged while a commit is in flight are
 *   committed together (group commit), so many concurrent writers share one fsync.
 * - Reads never block; keys compare bytewise. Once the backend is open a read fails only on a
 *   record whose checksum does not match (LMDB: value-checksum.ts): it throws a CorruptRecord
 *   rather than return the bytes, and the backend remembers it (`corruptions`).
 */
import { Context, Effect, Schema } from "effect"

/**
 * etcd's buckets: "key" (revision → KeyValue), "meta" (revisions, compaction marks), "lease", and
 * the auth store's "auth" (enabled flag, auth revision), "authUsers" and "authRoles".
 */
export type BucketName = "key" | "meta" | "lease" | "auth" | "authUsers" | "authRoles"

/** One key's write in a batch: a put, or a delete when `value` is undefined. */
export interface WriteOp {
  readonly bucket: BucketName
  readonly key: Uint8Array
  /** the new value; `undefined` deletes the key */
  readonly value: Uint8Array | undefined
}

/** A backend failure: the data dir locked by another process, not a data dir, unreadable, a failed write, or closed. */
export class BackendError extends Schema.TaggedError<BackendError>()("BackendError", {
  reason: Schema.Literal("Locked", "NotADataDir", "Unreadable", "WriteFailed", "Closed"),
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

/** The backend failed because the disk is full (ENOSPC from a write): the write is refused as NOSPACE. */
export const isNoSpace = (e: BackendError): boolean =>
  typeof e.cause === "object" && e.cause !== null && "code" in e.cause && e.cause.code === "ENOSPC"

/**
 * A stored record whose checksum does not match: thrown by `get`/`range` instead of returning it.
 * `stored` holds the bytes as read (unverified: for a best-effort description, never to serve).
 */
export class CorruptRecord extends Schema.TaggedError<CorruptRecord>()("CorruptRecord", {
  bucket: Schema.Literal("key", "meta", "lease", "auth", "authUsers", "authRoles"),
  key: Schema.Uint8ArrayFromSelf,
  stored: Schema.Uint8ArrayFromSelf,
  message: Schema.String
}) {}

/** A staged batch's durability, as a callback (`BackendShape.writeNow`). */
export interface WriteTicket {
  /**
   * Calls `f` once, when the batch is durable (`undefined`) or has failed; synchronously when it
   * already is. Tickets settle in staging order, each ticket's callbacks in registration order.
   */
  readonly onDone: (f: (error: BackendError | undefined) => void) => void
}

/** A ticket already durable (the memory backend's, an empty batch's). */
export const durableTicket: WriteTicket = { onDone: (f) => f(undefined) }

/** The ticket's wait as an Effect (what `write` returns); a failed staging fails at once. */
export const awaitTicket = (ticket: WriteTicket | BackendError): Effect.Effect<void, BackendError> => {
  if (ticket instanceof BackendError) return Effect.fail(ticket)
  if (ticket === durableTicket) return Effect.void
  return Effect.async<void, BackendError>((resume) => {
    ticket.onDone((error) => resume(error === undefined ? Effect.void : Effect.fail(error)))
  })
}

/**
 * The storage backend's operations: reads of the latest values, ranges, and batched writes with
 * their durability tickets.
 */
export interface BackendShape {
  /** the latest value of `key`, staged batches included */
  readonly get: (bucket: BucketName, key: Uint8Array) => Uint8Array | undefined
  /**
   * Entries with start <= key < end in key order (end `undefined`: to the end of the bucket),
   * staged batches included; at most `limit` entries when given.
   */
  readonly range: (
    bucket: BucketName,
    start: Uint8Array,
    end: Uint8Array | undefined,
    limit?: number
  ) => ReadonlyArray<readonly [Uint8Array, Uint8Array]>
  /** Stages one atomic batch now; the returned Effect waits until it is durable. */
  readonly write: (ops: ReadonlyArray<WriteOp>) => Effect.Effect<void, BackendError>
  /**
   * Stages one atomic batch now, as `write`; returns its ticket, or the error that refused it
   * (closed, failed, invalid ops) without staging anything.
   */
  readonly writeNow: (ops: ReadonlyArray<WriteOp>) => WriteTicket | BackendError
  /** Waits until everything staged so far is durable. */
  readonly flush: Effect.Effect<void, BackendError>
  /** bytes the backend occupies (etcd's db size) */
  readonly sizeBytes: () => number
  /** bytes in use by live data (etcd's db size in use) */
  readonly sizeInUseBytes: () => number
  /** A consistent copy of every bucket, for Maintenance.Snapshot. */
  readonly snapshot: Effect.Effect<Uint8Array, BackendError>
  /** Reclaims free space where the engine supports it (Maintenance.Defragment). */
  readonly defragment: Effect.Effect<void, BackendError>
  /**
   * Reads every stored record and checks its checksum (etcd's initial and periodic corruption
   * checks); the records that fail, also added to `corruptions`. The memory backend has none.
   */
  readonly verify: Effect.Effect<ReadonlyArray<CorruptRecord>, BackendError>
  /** Every corrupt record a read or `verify` met since open, in the order found, each once. */
  readonly corruptions: () => ReadonlyArray<CorruptRecord>
  /**
   * Calls `f` once when the backend fails (fail-stop: a WAL write or fdatasync, an LMDB commit),
   * also when no write waits on it (an LMDB commit fails in the background); at once when it has
   * failed already. A backend that cannot fail (memory) need not have it.
   */
  readonly onFailure?: (f: (error: BackendError) => void) => void
}

/** The storage backend service (etcd's backend.Backend): buckets of keys over LMDB or memory. */
export class Backend extends Context.Tag("etcd-effect/Backend")<Backend, BackendShape>() {}
