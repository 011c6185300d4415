/**
 * etcd's watch guarantees (reference §5.2, the robustness validator's rules) checked against the
 * persisted history of the real store: random writes and multi-key txns, watchers starting at
 * past/current/future revisions with filters and prev_kv, streams that stop draining (victims),
 * small channels, batches and sync rounds, compaction mid-stream, progress requests. Time is the
 * TestClock; the sync loops run when a command advances it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, Runtime, TestClock } from "effect"
import { type Event, EventType, isCreate, type KeyValue } from "../../src/mvcc/key-value.js"
import { MvccStore, type MvccStoreShape } from "../../src/mvcc/kv.js"
import { WatchableStore, type WatchableStoreConfig } from "../../src/watch/watchable-store.js"
import { attachPrevKv, type WatchStream } from "../../src/watch/watch-stream.js"
import { FilterType, type WatchResponse } from "../../src/watch/watcher.js"
import { b, drain, s, settle, watchLayer } from "./helpers.js"

// ---------------------------------------------------------------------------------------------
// scenario

const KEYS = ["a", "ab", "abc", "b", "ba", "c"] as const
const key = fc.constantFrom(...KEYS)

type RangeSpec =
  | { readonly kind: "key"; readonly key: string }
  | { readonly kind: "prefix"; readonly key: string }
  | { readonly kind: "fromKey"; readonly key: string }
  | { readonly kind: "range"; readonly key: string; readonly end: string }
  | { readonly kind: "all" }

const rangeSpec: fc.Arbitrary<RangeSpec> = fc.oneof(
  fc.record({ kind: fc.constant("key" as const), key }),
  fc.record({ kind: fc.constant("prefix" as const), key }),
  fc.record({ kind: fc.constant("fromKey" as const), key }),
  fc
    .tuple(key, key)
    .filter(([x, y]) => x !== y)
    .map(([x, y]): RangeSpec => ({ kind: "range", key: x < y ? x : y, end: x < y ? y : x })),
  fc.constant({ kind: "all" as const })
)

type Cmd =
  | { readonly _tag: "put"; readonly key: string; readonly value: string }
  | { readonly _tag: "del"; readonly key: string }
  | { readonly _tag: "delPrefix"; readonly key: string }
  | { readonly _tag: "txn"; readonly ops: ReadonlyArray<{ readonly key: string; readonly put: boolean }> }
  | {
      readonly _tag: "watch"
      readonly stream: number
      readonly range: RangeSpec
      readonly start: "zero" | "past" | "current" | "future"
      readonly pick: number
      readonly filter: 0 | 1 | 2
      readonly prevKv: boolean
    }
  | { readonly _tag: "cancel"; readonly pick: number }
  | { readonly _tag: "compact"; readonly pick: number; readonly physical: boolean }
  | { readonly _tag: "tick"; readonly ms: number }
  | { readonly _tag: "yield" }
  | { readonly _tag: "drain"; readonly stream: number }
  | { readonly _tag: "stall"; readonly stream: number; readonly on: boolean }
  | { readonly _tag: "progress"; readonly stream: number; readonly pick: number; readonly all: boolean }

const STREAMS = 3
const stream = fc.nat(STREAMS - 1)

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ _tag: fc.constant("put" as const), key, value: fc.constantFrom("x", "y", "") }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("del" as const), key }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("delPrefix" as const), key }) },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("txn" as const),
      ops: fc.uniqueArray(fc.record({ key, put: fc.boolean() }), {
        minLength: 1,
        maxLength: 3,
        selector: (o) => o.key
      })
    })
  },
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant("watch" as const),
      stream,
      range: rangeSpec,
      start: fc.constantFrom("zero" as const, "past" as const, "current" as const, "future" as const),
      pick: fc.nat(),
      filter: fc.constantFrom(0 as const, 0 as const, 1 as const, 2 as const),
      prevKv: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("compact" as const), pick: fc.nat(), physical: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ _tag: fc.constant("tick" as const), ms: fc.constantFrom(10, 100) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("yield" as const) }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("drain" as const), stream }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("stall" as const), stream, on: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ _tag: fc.constant("progress" as const), stream, pick: fc.nat(), all: fc.boolean() })
  }
)

const config: fc.Arbitrary<Partial<WatchableStoreConfig>> = fc.record({
  chanBufLen: fc.constantFrom(1, 1, 2, 4, 128),
  maxWatchersPerSync: fc.constantFrom(1, 2, 512),
  watchBatchMaxRevs: fc.constantFrom(1, 2, 1000),
  historyChunkRevs: fc.constantFrom(1, 3, 1024),
  immediateResync: fc.boolean()
})

// ---------------------------------------------------------------------------------------------
// recording

type Item =
  | { readonly kind: "events"; readonly response: WatchResponse; readonly compactAtTake: number; readonly revAtTake: number }
  | { readonly kind: "progress"; readonly revision: number }
  | { readonly kind: "compacted"; readonly compactRevision: number; readonly revision: number }

interface WatchRec {
  readonly stream: number
  readonly id: number
  readonly range: RangeSpec
  readonly startRev: number
  readonly createdAt: number
  readonly filter: 0 | 1 | 2
  readonly prevKv: boolean
  readonly log: Array<Item>
  canceled: boolean
  compacted: number | undefined
}

interface StreamRec {
  readonly ws: WatchStream
  stalled: boolean
  readonly byId: Map<number, WatchRec>
  /** recipients of each -1 progress response still in the channel */
  readonly allQueue: Array<ReadonlyArray<WatchRec>>
}

/** What the runs exercised, so the property cannot pass by never reaching the interesting paths. */
const coverage = {
  runs: 0,
  victims: 0,
  compactionResponses: 0,
  multiRevisionBatches: 0,
  progressAll: 0,
  futureWatchers: 0,
  moreThanOneRound: 0
}

const prefixEnd = (k: string): string => {
  const cs = Buffer.from(k, "latin1")
  for (let i = cs.length - 1; i >= 0; i--) {
    if (cs[i]! < 0xff) {
      cs[i]!++
      return cs.subarray(0, i + 1).toString("latin1")
    }
  }
  return "\x00"
}

const toRequest = (r: RangeSpec): { key: Uint8Array; end?: Uint8Array } => {
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
const inRange = (r: RangeSpec, k: string): boolean => {
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

const passes = (filter: 0 | 1 | 2, e: Event): boolean =>
  filter === 0 ? true : filter === 1 ? e.type !== EventType.PUT : e.type !== EventType.DELETE

const sameEvent = (got: Event, want: Event): boolean =>
  got.type === want.type &&
  s(got.kv.key) === s(want.kv.key) &&
  got.kv.modRevision === want.kv.modRevision &&
  got.kv.createRevision === want.kv.createRevision &&
  got.kv.version === want.kv.version &&
  s(got.kv.value) === s(want.kv.value) &&
  got.kv.lease === want.kv.lease

// ---------------------------------------------------------------------------------------------
// validation

interface HistoryModel {
  readonly events: ReadonlyArray<Event>
  /** `${rev}|${key}` → the key's KeyValue at rev-1 (undefined: absent) */
  readonly before: Map<string, KeyValue | undefined>
}

const buildModel = (events: ReadonlyArray<Event>): HistoryModel => {
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

const validate = (w: WatchRec, model: HistoryModel, finalRev: number): void => {
  const where = `watcher ${w.stream}/${w.id} ${JSON.stringify(w.range)} start=${w.startRev} created@${w.createdAt} filter=${w.filter}`
  const first = w.startRev === 0 ? w.createdAt + 1 : w.startRev
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
      expect(sameEvent(e, want!), `${where}: event #${delivered} rev ${e.kv.modRevision} vs ${want!.kv.modRevision}`).toBe(
        true
      )
      expect(e.kv.modRevision, `${where}: after the last progress`).toBeGreaterThan(lastProgress)
      const prev = model.before.get(`${e.kv.modRevision}|${s(e.kv.key)}`)
      if (e.type === EventType.PUT) expect(isCreate(e), `${where}: IsCreate`).toBe(prev === undefined)
      if (w.prevKv) {
        if (e.prevKv !== undefined) {
          expect(prev, `${where}: prev_kv for a key that did not exist`).toBeDefined()
          expect(sameEvent({ type: EventType.PUT, kv: e.prevKv }, { type: EventType.PUT, kv: prev! }), `${where}: prev_kv`).toBe(
            true
          )
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

// ---------------------------------------------------------------------------------------------
// execution

/**
 * "clock": time commands advance the TestClock and the store's own loops do the work.
 * "direct": they run a sync round (forked, so it interleaves with later commands) or a victim pass,
 * as etcd's unit tests call syncWatchers/moveVictims; far cheaper per case than TestClock.adjust.
 */
type Mode = "clock" | "direct"

const run = (cmds: ReadonlyArray<Cmd>, stalled: ReadonlyArray<boolean>, mode: Mode) =>
  Effect.gen(function* () {
    const store = yield* WatchableStore
    const st: MvccStoreShape = yield* MvccStore
    const streams: Array<StreamRec> = []
    for (let i = 0; i < STREAMS; i++) {
      streams.push({ ws: yield* store.newWatchStream, stalled: stalled[i] === true, byId: new Map(), allQueue: [] })
    }
    const watchers: Array<WatchRec> = []
    const history: Array<Event> = []
    let recorded = 1
    let sawVictims = false
    const rounds: Array<Fiber.RuntimeFiber<number>> = []

    const record = () => {
      const r = st.rev()
      if (r > recorded) {
        const evs = st.eventsBetween(recorded + 1, r)
        expect(new Set(evs.map((e) => e.kv.modRevision)).size).toBe(r - recorded)
        history.push(...evs)
        recorded = r
      }
      if (store.victimCount() > 0) sawVictims = true
    }

    const take = (sr: StreamRec) =>
      Effect.gen(function* () {
        for (const r of yield* drain(sr.ws)) {
          if (r.watchId === -1) {
            const recipients = sr.allQueue.shift()
            expect(recipients, "a -1 progress response nobody asked for").toBeDefined()
            expect(r.events.length).toBe(0)
            for (const w of recipients!) w.log.push({ kind: "progress", revision: r.revision })
            continue
          }
          const w = sr.byId.get(r.watchId)
          expect(w, `response for unknown id ${r.watchId}`).toBeDefined()
          if (r.compactRevision !== 0) {
            expect(r.events.length).toBe(0)
            w!.log.push({ kind: "compacted", compactRevision: r.compactRevision, revision: r.revision })
          } else if (r.events.length === 0) {
            w!.log.push({ kind: "progress", revision: r.revision })
          } else {
            const response = w!.prevKv ? attachPrevKv(st.getAt, r) : r
            w!.log.push({ kind: "events", response, compactAtTake: st.compactRevision(), revAtTake: st.rev() })
          }
        }
      })

    const requestAll = (sr: StreamRec) =>
      Effect.gen(function* () {
        const before = sr.ws.chanLen()
        const ok = yield* sr.ws.requestProgressAll
        if (ok && sr.ws.chanLen() > before) {
          sr.allQueue.push(watchers.filter((w) => w.stream === streams.indexOf(sr) && !w.canceled))
          coverage.progressAll++
        }
        return ok
      })

    const live = () => watchers.filter((w) => !w.canceled)

    for (const c of cmds) {
      switch (c._tag) {
        case "put":
          yield* st.put({ key: b(c.key), value: b(c.value) })
          break
        case "del":
          yield* st.deleteRange({ key: b(c.key) })
          break
        case "delPrefix":
          yield* st.deleteRange({ key: b(c.key), rangeEnd: b(prefixEnd(c.key)) })
          break
        case "txn":
          yield* st.txn({
            compare: [],
            success: c.ops.map((o) =>
              o.put
                ? { _tag: "Put" as const, request: { key: b(o.key), value: b("t") } }
                : { _tag: "DeleteRange" as const, request: { key: b(o.key) } }
            ),
            failure: []
          })
          break
        case "watch": {
          const sr = streams[c.stream]!
          const cur = st.rev()
          const startRev =
            c.start === "zero" ? 0 : c.start === "past" ? 1 + (c.pick % cur) : c.start === "current" ? cur : cur + 1 + (c.pick % 4)
          if (startRev > cur) coverage.futureWatchers++
          const id = yield* sr.ws.watch({
            ...toRequest(c.range),
            startRev,
            filters: c.filter === 0 ? [] : c.filter === 1 ? [FilterType.NOPUT] : [FilterType.NODELETE],
            prevKv: c.prevKv
          })
          const w: WatchRec = {
            stream: c.stream,
            id,
            range: c.range,
            startRev,
            createdAt: sr.ws.rev(),
            filter: c.filter,
            prevKv: c.prevKv,
            log: [],
            canceled: false,
            compacted: undefined
          }
          sr.byId.set(id, w)
          watchers.push(w)
          break
        }
        case "cancel": {
          const ws = live()
          if (ws.length === 0) break
          const w = ws[c.pick % ws.length]!
          yield* streams[w.stream]!.ws.cancel(w.id)
          w.canceled = true
          break
        }
        case "compact": {
          const lo = st.compactRevision() + 1
          const hi = st.rev()
          if (lo > hi || hi < 2) break
          const at = Math.max(lo, 2) + (c.pick % (hi - Math.max(lo, 2) + 1))
          record()
          yield* st.compact(at, c.physical)
          break
        }
        case "tick":
          if (mode === "clock") {
            yield* TestClock.adjust(c.ms)
            yield* settle(2)
          } else if (c.ms === 10) {
            yield* store.moveVictims
          } else {
            rounds.push(yield* Effect.fork(store.syncWatchers))
          }
          break
        case "yield":
          yield* settle(1)
          break
        case "drain":
          if (!streams[c.stream]!.stalled) yield* take(streams[c.stream]!)
          break
        case "stall":
          streams[c.stream]!.stalled = c.on
          break
        case "progress": {
          const sr = streams[c.stream]!
          if (c.all) yield* requestAll(sr)
          else {
            const ws = live().filter((w) => w.stream === c.stream)
            if (ws.length > 0) yield* sr.ws.requestProgress(ws[c.pick % ws.length]!.id)
          }
          break
        }
      }
      record()
    }

    // Reach every future start revision, so that each watcher can report progress at the end.
    while (live().some((w) => w.startRev > st.rev())) {
      yield* st.put({ key: b("zz"), value: b("end") })
      record()
    }
    // Quiesce: everyone drains until no watcher is unsynced or a victim and no channel holds anything.
    for (const sr of streams) sr.stalled = false
    for (const f of rounds) yield* Fiber.join(f)
    let quiesce = 0
    for (; quiesce < 300; quiesce++) {
      for (const sr of streams) yield* take(sr)
      record()
      if (store.slowWatcherCount() === 0 && streams.every((sr) => sr.ws.chanLen() === 0)) break
      if (mode === "clock") {
        yield* TestClock.adjust(quiesce % 2 === 0 ? 10 : 100)
        yield* settle(3)
      } else {
        yield* store.moveVictims
        yield* store.syncWatchers
      }
    }
    expect(store.slowWatcherCount(), "all watchers caught up").toBe(0)
    if (quiesce > 1) coverage.moreThanOneRound++
    // Compacted watchers are canceled by their client (the Go client does so); then every stream
    // is entirely synced and its requested progress is the final bookmark.
    for (const w of live()) {
      if (w.log.some((i) => i.kind === "compacted")) {
        yield* streams[w.stream]!.ws.cancel(w.id)
        w.canceled = true
      }
    }
    for (const sr of streams) {
      expect(yield* requestAll(sr), "requestProgressAll once synced").toBe(true)
      yield* take(sr)
    }
    expect(store.pendingEventsCount()).toBe(0)
    expect(store.watcherCount()).toBe(live().length)

    const model = buildModel(history)
    for (const w of watchers) validate(w, model, st.rev())
    coverage.runs++
    if (sawVictims) coverage.victims++
  })

describe("watch guarantees against the persisted history", () => {
  // One it.effect running fast-check inside it: a fresh TestContext per case (it.effect.prop) costs
  // more than the case itself. Every case still gets its own store, streams and loops.
  const property = (mode: Mode, maxCommands: number, numRuns: number) =>
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            config,
            fc.array(cmd, { minLength: 5, maxLength: maxCommands, size: "max" }),
            fc.array(fc.boolean(), { minLength: STREAMS, maxLength: STREAMS }),
            (cfg, cmds, stalled) =>
            Runtime.runPromise(runtime)(
              Effect.scoped(
                run(cmds, stalled, mode).pipe(
                  Effect.provide(
                    watchLayer(mode === "direct" ? { ...cfg, watchResyncPeriod: "1 hour", victimRetryPeriod: "1 hour" } : cfg)
                  )
                )
              )
            )
          ),
          { numRuns }
        )
      )
    })

  // Direct mode needs no clock: live, with loop periods of an hour so the loops stay out of the way
  // (the TestContext's fiber supervision makes each case's layer several times dearer).
  it.live(
    "ordered, unique, reliable, atomic, resumable, bookmarkable, IsCreate, prev_kv and filters hold (rounds driven directly)",
    () => property("direct", 60, Number(process.env.WATCH_PROP_RUNS ?? 1500)),
    120_000
  )

  it.effect(
    "the same guarantees with the store's own loops on the TestClock",
    () => property("clock", 40, Number(process.env.WATCH_PROP_CLOCK_RUNS ?? 60)),
    120_000
  )

  it("the generated runs reached victims, compaction responses, multi-revision batches and future watchers", () => {
    expect(coverage.runs).toBeGreaterThan(0)
    expect(coverage.victims).toBeGreaterThan(coverage.runs / 10)
    expect(coverage.compactionResponses).toBeGreaterThan(0)
    expect(coverage.multiRevisionBatches).toBeGreaterThan(0)
    expect(coverage.progressAll).toBeGreaterThan(0)
    expect(coverage.futureWatchers).toBeGreaterThan(0)
    expect(coverage.moreThanOneRound).toBeGreaterThan(0)
  })
})
