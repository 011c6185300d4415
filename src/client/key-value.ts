/**
 * The client's view of mvccpb.KeyValue, mvccpb.Event and etcdserverpb.ResponseHeader.
 *
 * Same field names and event numbering as src/mvcc/key-value.ts, but every int64 is a `bigint`:
 * the client speaks to servers it does not control, where revisions, versions, lease and member ids
 * are int64 on the wire (member ids use all 64 bits). See docs/decisions.md ("Client: int64 as bigint").
 */
import { EventType } from "../mvcc/key-value.js"

export { EventType }

/** A key's state at a revision (mvccpb.KeyValue), with revisions, version and lease as bigints. */
export interface KeyValue {
  readonly key: Uint8Array
  /** revision of the key's last creation (0n in a DELETE event's kv) */
  readonly createRevision: bigint
  /** revision of the last modification (the deletion revision in a DELETE event's kv) */
  readonly modRevision: bigint
  /** 1n on creation, +1n per modification, 0n once deleted */
  readonly version: bigint
  readonly value: Uint8Array
  /** attached lease id, 0n for none */
  readonly lease: bigint
}

/** One change a watch reports: a PUT or DELETE of a key, with its previous state when asked for. */
export interface Event {
  readonly type: EventType
  readonly kv: KeyValue
  /** the key's previous state; only with the `prevKv` option, and absent when compacted or a create */
  readonly prevKv?: KeyValue | undefined
}

/**
 * The header of every response: the cluster, the member and the store's revision when it answered,
 * and the raft term.
 */
export interface ResponseHeader {
  readonly clusterId: bigint
  readonly memberId: bigint
  readonly revision: bigint
  readonly raftTerm: bigint
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0)

export const emptyHeader: ResponseHeader = { clusterId: 0n, memberId: 0n, revision: 0n, raftTerm: 0n }

/** `IsCreate` of mvccpb: a PUT whose create revision is its mod revision. */
export const isCreate = (e: Event): boolean => e.type === EventType.PUT && e.kv.createRevision === e.kv.modRevision

/** `IsModify`: a PUT on a key that already existed. */
export const isModify = (e: Event): boolean => e.type === EventType.PUT && e.kv.createRevision !== e.kv.modRevision

const encoder = new TextEncoder()

/** Keys and values are bytes; strings are taken as UTF-8. */
export const toBytes = (value: string | Uint8Array): Uint8Array =>
  typeof value === "string" ? encoder.encode(value) : value

const decoder = new TextDecoder()

/** UTF-8 text of a key or value (lossy for non-UTF-8 bytes). */
export const toText = (bytes: Uint8Array): string => decoder.decode(bytes)
