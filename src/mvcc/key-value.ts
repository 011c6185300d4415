/**
 * mvccpb.KeyValue and mvccpb.Event as plain, immutable records (proto/kv.proto).
 * Plain objects, not Schema classes: these sit on the per-event hot path.
 */

/** A key's state at one revision. Keys and values are bytes; revisions fit a JS number (< 2^53). */
export interface KeyValue {
  readonly key: Uint8Array
  /** revision of the last creation of this key (0 in a DELETE event's kv) */
  readonly createRevision: number
  /** revision of the last modification (the deletion revision in a DELETE event's kv) */
  readonly modRevision: number
  /** 1 on creation, +1 per modification, 0 once deleted */
  readonly version: number
  readonly value: Uint8Array
  /** attached lease id, 0n for none; int64 on the wire, so bigint here */
  readonly lease: bigint
}

/** mvccpb.Event.EventType: numbered as on the wire. */
export const EventType = { PUT: 0, DELETE: 1 } as const
export type EventType = (typeof EventType)[keyof typeof EventType]

/** One change in a committed revision: a PUT or DELETE of a key, with its previous KeyValue when asked for. */
export interface Event {
  readonly type: EventType
  /** PUT: the new KeyValue. DELETE: `{ key, modRevision: deletion revision }`, other fields zero. */
  readonly kv: KeyValue
  /** the key's previous KeyValue; only set where the request asked for it (watch prev_kv is filled at send time) */
  readonly prevKv?: KeyValue | undefined
}

const EMPTY = new Uint8Array(0)

/** The kv of a DELETE event, as etcd shapes it: key and mod revision only. */
export const tombstoneKv = (key: Uint8Array, rev: number): KeyValue => ({
  key,
  createRevision: 0,
  modRevision: rev,
  version: 0,
  value: EMPTY,
  lease: 0n
})

/** `IsCreate` of api/mvccpb/extension.go. */
export const isCreate = (e: Event): boolean => e.type === EventType.PUT && e.kv.createRevision === e.kv.modRevision
