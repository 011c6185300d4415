/**
 * The checker of etcd's watch guarantees (reference §5.2, the robustness validator's rules): what a
 * watcher received, recorded item by item, validated against the persisted history of the store.
 * Shared by every guarantee property (memory, LMDB, with leases).
 */
import { expect } from "@effect/vitest"
import { type Event, EventType, isCreate, type KeyValue } from "../../src/mvcc/key-value.js"
import type { WatchId, WatchResponse } from "../../src/watch/watcher.js"
import { b, s } from "./helpers.js"

export type RangeSpec =
  | { readonly kind: "key"; readonly key: string }
  | { readonly kind: "prefix"; readonly key: string }
  | { readonly kind: "fromKey"; readonly key: string }
  | { readonly kind: "range"; readonly key: string; readonly end: string }
  | { readonly kind: "all" }

// ---------------------------------------------------------------------------------------------
// recording

export type Item =
  | {
      readonly kind: "events"
      readonly response: WatchResponse
      readonly compactAtTake: number
      readonly revAtTake: number
    }
  | { readonly kind: "progress"; readonly revision: number }
  | { readonly kind: "compacted"; readonly compactRevision: number; readonly revision: number }

export interface WatchRec {
  readonly stream: number
  readonly id: WatchId
  readonly range: RangeSpec
  readonly startRev: number
  readonly createdAt: number
  readonly filter: 0 | 1 | 2
  readonly prevKv: boolean
  readonly log: Array<Item>
  canceled: boolean
  compacted: number | undefined
}

/** Counters the checker bumps, so a property can assert it reached these paths. */
export interface CheckCoverage {
  compactionResponses: number
  multiRevisionBatches: number
}

export const prefixEnd = (k: string): string => {
  const cs = Buffer.from(k, "latin1")
  for (let i = cs.length - 1; i >= 0; i--) {
    if (cs[i]! < 0xff) {
      cs[i]!++
      return cs.subarray(0, i + 1).toString("latin1")
    }
  }
  return "\x00"
}

export const toRequest = (r: RangeSpec): { key: Uint8Array; end?: Uint8Array } => {
  switch (r.kind) {
    case "key":
      return { key: b(r.key) }
    case "prefix":
      return { key: b(r.key), end: b(prefixEnd(r.key)) }
    case "fromKey":
      return { key: b(r.key), end: new Uint8Array() }
    case "range":
      return { key: b(r.key), end: b(r.end) }
    case "all":
      return { key: b("\x00"), end: new Uint8Array() }
  }
}

/** The test's own range rule (bytewise order = latin1 string order). */
export const inRange = (r: RangeSpec, k: string): boolean => {
  switch (r.kind) {
    case "key":
      return k === r.key
    case "prefix":
      return k.startsWith(r.key)
    case "fromKey":
      return k >= r.key
    case "range":
      return k >= r.key && k < r.end
    case "all":
      return k >= "\x00"
  }
}

export const passes = (filter: 0 | 1 | 2, e: Event): boolean =>
  filter === 0 ? true : filter === 1 ? e.type !== EventType.PUT : e.type !== EventType.DELETE

export const sameEvent = (got: Event, want: Event): boolean =>
  got.type === want.type &&
  s(got.kv.key) === s(want.kv.key) &&
  got.kv.modRevision === want.kv.modRevision &&
  got.kv.createRevision === want.kv.createRevision &&
  got.kv.version === want.kv.version &&
  s(got.kv.value) === s(want.kv.value) &&
  got.kv.lease === want.kv.lease

// ---------------------------------------------------------------------------------------------
// validation

export interface HistoryModel {
  readonly events: ReadonlyArray<Event>
  /** `${rev}|${key}` → the key's KeyValue at rev-1 (undefined: absent) */
  readonly before: Map<string, KeyValue | undefined>
}

export const buildModel = (events: ReadonlyArray<Event>): HistoryModel => {
  const state = new Map<string, KeyValue>()
  const before = new Map<string, KeyValue | undefined>()
  let rev = 0
  let pendingRev: Array<[string, KeyValue | undefined]> = []
  const flush = () => {
    for (const [k, kv] of pendingRev) {
      if (kv === undefined) state.delete(k)
      else state.set(k, kv)
    }
    pendingRev = []
  }
  for (const e of events) {
    if (e.kv.modRevision !== rev) {
      flush()
      rev = e.kv.modRevision
    }
    const k = s(e.kv.key)
    before.set(`${rev}|${k}`, state.get(k))
    pendingRev.push([k, e.type === EventType.PUT ? e.kv : undefined])
  }
  return { events, before }
}

/** The first revision a watcher is owed: start 0 means "after the revision it was created at". */
export const firstRev = (w: WatchRec): number => (w.startRev === 0 ? w.createdAt + 1 : w.startRev)

export const describeWatcher = (w: WatchRec): string =>
  `watcher ${w.stream}/${w.id} ${JSON.stringify(w.range)} start=${w.startRev} created@${w.createdAt} filter=${w.filter}`

/**
 * One watcher's log against the history: ordered, unique, reliable, atomic, resumable,
 * bookmarkable, IsCreate, prev_kv and filters. `finalRev`: the revision of the final bookmark a
 * watcher still live at the end must have reached.
 */
export const validate = (w: WatchRec, model: HistoryModel, finalRev: number, coverage: CheckCoverage): void => {
  const where = describeWatcher(w)
  const first = firstRev(w)
  const expected = model.events.filter(
    (e) => e.kv.modRevision >= first && inRange(w.range, s(e.kv.key)) && passes(w.filter, e)
  )
  let delivered = 0
  let lastEventRev = 0
  let lastProgress = 0
  let prevResponseLastRev = -1
  let compactedAt: number | undefined
  for (const item of w.log) {
    expect(compactedAt, `${where}: nothing after the compaction response`).toBeUndefined()
    if (item.kind === "progress") {
      // bookmarkable: ≥ every delivered event and ≥ the previous progress; not before the start
      expect(item.revision, `${where}: progress ≥ last event`).toBeGreaterThanOrEqual(lastEventRev)
      expect(item.revision, `${where}: progress monotonic`).toBeGreaterThanOrEqual(lastProgress)
      expect(item.revision, `${where}: progress not before start`).toBeGreaterThanOrEqual(
        w.startRev > 0 ? w.startRev : w.createdAt
      )
      // reliable up to the bookmark: every matching event ≤ progress was delivered
      const owed = expected.filter((e) => e.kv.modRevision <= item.revision).length
      expect(delivered, `${where}: all events ≤ progress ${item.revision} delivered`).toBe(owed)
      lastProgress = item.revision
      continue
    }
    if (item.kind === "compacted") {
      expect(item.revision, `${where}: compaction header revision`).toBe(0)
      // it really was behind: its next revision max(first, lastEvent+1) < compactRevision
      expect(item.compactRevision, `${where}: compaction justified`).toBeGreaterThan(Math.max(first, lastEventRev + 1))
      compactedAt = item.compactRevision
      coverage.compactionResponses++
      continue
    }
    const r = item.response
    expect(r.events.length, `${where}: event responses are non-empty`).toBeGreaterThan(0)
    const revsIn = r.events.map((e) => e.kv.modRevision)
    // atomic: no revision continues from the previous response
    expect(revsIn[0], `${where}: atomic`).not.toBe(prevResponseLastRev)
    prevResponseLastRev = revsIn[revsIn.length - 1]!
    if (new Set(revsIn).size > 1) coverage.multiRevisionBatches++
    expect(r.revision, `${where}: header ≥ its events`).toBeGreaterThanOrEqual(prevResponseLastRev)
    expect(r.revision, `${where}: header ≤ store revision`).toBeLessThanOrEqual(item.revAtTake)
    for (const e of r.events) {
      const want = expected[delivered]
      // ordered, unique, reliable, resumable, filter: exactly the next persisted matching event
      expect(want, `${where}: unexpected extra event at ${e.kv.modRevision}`).toBeDefined()
      expect(
        sameEvent(e, want!),
        `${where}: event #${delivered} rev ${e.kv.modRevision} vs ${want!.kv.modRevision}`
      ).toBe(true)
      expect(e.kv.modRevision, `${where}: after the last progress`).toBeGreaterThan(lastProgress)
      const prev = model.before.get(`${e.kv.modRevision}|${s(e.kv.key)}`)
      if (e.type === EventType.PUT) expect(isCreate(e), `${where}: IsCreate`).toBe(prev === undefined)
      if (w.prevKv) {
        if (e.prevKv !== undefined) {
          expect(prev, `${where}: prev_kv for a key that did not exist`).toBeDefined()
          expect(
            sameEvent({ type: EventType.PUT, kv: e.prevKv }, { type: EventType.PUT, kv: prev! }),
            `${where}: prev_kv`
          ).toBe(true)
        } else if (!isCreate(e)) {
          // nil is only allowed when rev-1 was compacted by the time it was sent
          expect(e.kv.modRevision - 1, `${where}: prev_kv missing`).toBeLessThan(item.compactAtTake)
        }
      } else {
        expect(e.prevKv, `${where}: prev_kv not requested`).toBeUndefined()
      }
      delivered++
      lastEventRev = e.kv.modRevision
    }
  }
  if (!w.canceled && compactedAt === undefined) {
    // a live watcher ended with the final bookmark: it saw everything up to the final revision
    expect(lastProgress, `${where}: final bookmark`).toBe(finalRev)
    expect(delivered, `${where}: complete`).toBe(expected.length)
  }
}
