/**
 * etcd3/event.go: an etcd KeyValue or watch Event as the watchChan's internal event.
 */
import { type Event, EventType, type KeyValue } from "../../../client/key-value.js"

export interface WatchChanEvent {
  readonly key: string
  readonly value: Uint8Array | undefined
  readonly prevValue: Uint8Array | undefined
  /** the event's revision: ModRevision (the deletion revision for a delete) */
  readonly rev: bigint
  readonly isDeleted: boolean
  readonly isCreated: boolean
  readonly isProgressNotify: boolean
  /** the initial-events-end bookmark of a watch-list */
  readonly isInitialEventsEndBookmark: boolean
}

const decoder = new TextDecoder()

/** parseKV: a key from the initial list becomes a synthetic create. */
export const parseKV = (kv: KeyValue): WatchChanEvent => ({
  key: decoder.decode(kv.key),
  value: kv.value,
  prevValue: undefined,
  rev: kv.modRevision,
  isDeleted: false,
  isCreated: true,
  isProgressNotify: false,
  isInitialEventsEndBookmark: false
})

/**
 * parseEvent: fails (the message the apiserver logs and returns) when an update or delete arrives
 * without its previous value — etcd compacted it, so the old object can't be filtered or sent.
 */
export const parseEvent = (e: Event): WatchChanEvent | string => {
  const isDeleted = e.type === EventType.DELETE
  const isCreated = !isDeleted && e.kv.createRevision === e.kv.modRevision
  if (!isCreated && e.prevKv === undefined) {
    return `etcd event received with PrevKv=nil (key=${JSON.stringify(decoder.decode(e.kv.key))}, modRevision=${e.kv.modRevision}, type=${isDeleted ? "DELETE" : "PUT"})`
  }
  return {
    key: decoder.decode(e.kv.key),
    value: isDeleted ? undefined : e.kv.value,
    prevValue: e.prevKv?.value,
    rev: e.kv.modRevision,
    isDeleted,
    isCreated,
    isProgressNotify: false,
    isInitialEventsEndBookmark: false
  }
}

/** progressNotifyEvent: etcd says every event up to `rev` was delivered. */
export const progressNotifyEvent = (rev: bigint, initialEventsEnd = false): WatchChanEvent => ({
  key: "",
  value: undefined,
  prevValue: undefined,
  rev,
  isDeleted: false,
  isCreated: false,
  isProgressNotify: true,
  isInitialEventsEndBookmark: initialEventsEnd
})
