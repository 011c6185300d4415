/**
 * The driver of the watch guarantee properties: generated command sequences (random writes and
 * multi-key txns, watchers starting at past/current/future revisions with filters and prev_kv,
 * streams that stop draining (victims), small channels, batches and sync rounds, compaction
 * mid-stream, progress requests; optionally leases — grant, leased puts and txns, revoke,
 * keep-alive, clock advances that let the lessor's expiry fiber revoke them — and concurrent put
 * bursts) run against the real store, every watcher's log then checked against the persisted
 * history (history-check.ts) and, with leases, against the lease model (lease-model.ts).
 */
import { expect } from "@effect/vitest"
import { Clock, Effect, Either, FastCheck as fc, Fiber, Layer, Option, Runtime, TestClock } from "effect"
import { Backend } from "../../src/backend/backend.js"
import type { LmdbStats } from "../../src/backend/lmdb.js"
import { layerMemory } from "../../src/backend/memory.js"
import { type EtcdError, Errors } from "../../src/errors.js"
import { Lessor } from "../../src/lease/lessor.js"
import type { Event } from "../../src/mvcc/key-value.js"
import { MvccStore, type MvccStoreShape } from "../../src/mvcc/kv.js"
import { WatchableStore, type WatchableStoreConfig } from "../../src/watch/watchable-store.js"
import { attachPrevKv, type WatchStream } from "../../src/watch/watch-stream.js"
import { FilterType, type WatchId } from "../../src/watch/watcher.js"
import {
  buildModel,
  type CheckCoverage,
  prefixEnd,
  type RangeSpec,
  toRequest,
  validate,
  type WatchRec
} from "./history-check.js"
import { watchdog } from "../support/stall.js"
import { b, drain, lmdbWatchStack, s, settle, watchLayer, watchStack } from "./helpers.js"
import { LEASE_IDS, type LeaseCoverage, LeaseModel, newLeaseCoverage, validateRemovals } from "./lease-model.js"

// ---------------------------------------------------------------------------------------------
// scenario

const KEYS = ["a", "ab", "abc", "b", "ba", "c"] as const
const key = fc.constantFrom(...KEYS)

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

/** `slot`: a lease (see `leaseAt`); absent: no lease */
interface TxnOp {
  readonly key: string
  readonly put: boolean
  readonly slot?: number | undefined
}

export type Cmd =
  | { readonly _tag: "put"; readonly key: string; readonly value: string }
  | { readonly _tag: "del"; readonly key: string }
  | { readonly _tag: "delPrefix"; readonly key: string }
  | { readonly _tag: "txn"; readonly ops: ReadonlyArray<TxnOp> }
  | {
      readonly _tag: "watch"
      readonly stream: number
      readonly range: RangeSpec
      /** "removal": at the revision of an earlier lease removal (lease scenario), replaying it */
      readonly start: "zero" | "past" | "current" | "future" | "removal"
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
  // leases (the TestClock drives the lessor's expiry fiber)
  | { readonly _tag: "grant"; readonly slot: number; readonly ttl: number }
  | { readonly _tag: "leasePut"; readonly key: string; readonly value: string; readonly slot: number }
  | { readonly _tag: "revoke"; readonly slot: number }
  | { readonly _tag: "keepAlive"; readonly slot: number }
  | { readonly _tag: "elapse"; readonly ms: number }
  /** advance exactly to a granted lease's expiry, then maybe keep it alive right there */
  | { readonly _tag: "toExpiry"; readonly slot: number; readonly keepAlive: boolean }
  // concurrent puts of distinct keys: a real backend group-commits them
  | {
      readonly _tag: "burst"
      readonly puts: ReadonlyArray<{ readonly key: string; readonly slot?: number | undefined }>
    }

/** the lessor's expiry check period (its default) */
const EXPIRY_CHECK_MS = 500

export const STREAMS = 3
const stream = fc.nat(STREAMS - 1)
/** the id a grant asks for */
const grantSlot = fc.nat(LEASE_IDS.length - 1)
/** a lease to use: a quarter any id (so some are not granted), the rest one granted now */
const slot = fc.nat(4 * LEASE_IDS.length - 1)
const optionalSlot = fc.option(slot, { nil: undefined, freq: 2 })

export interface Scenario {
  /** lease grant/put/revoke/keep-alive and TestClock advances that make leases expire (run under it.effect) */
  readonly leases: boolean
  /** concurrent put bursts */
  readonly bursts: boolean
}

type Weighted = fc.WeightedArbitrary<Cmd>

export const commands = (scenario: Scenario): fc.Arbitrary<Cmd> => {
  const txnOp: fc.Arbitrary<TxnOp> = scenario.leases
    ? fc.record({ key, put: fc.boolean(), slot: optionalSlot })
    : fc.record({ key, put: fc.boolean() })
  const base: Array<Weighted> = [
    {
      weight: 8,
      arbitrary: fc.record({ _tag: fc.constant("put" as const), key, value: fc.constantFrom("x", "y", "") })
    },
    { weight: 2, arbitrary: fc.record({ _tag: fc.constant("del" as const), key }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("delPrefix" as const), key }) },
    {
      weight: 3,
      arbitrary: fc.record({
        _tag: fc.constant("txn" as const),
        ops: fc.uniqueArray(txnOp, { minLength: 1, maxLength: 3, selector: (o) => o.key })
      })
    },
    {
      weight: 5,
      arbitrary: fc.record({
        _tag: fc.constant("watch" as const),
        stream,
        range: rangeSpec,
        start: scenario.leases
          ? fc.constantFrom(...(["zero", "past", "current", "future", "removal", "removal"] as const))
          : fc.constantFrom("zero" as const, "past" as const, "current" as const, "future" as const),
        pick: fc.nat(),
        filter: fc.constantFrom(0 as const, 0 as const, 1 as const, 2 as const),
        prevKv: fc.boolean()
      })
    },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), pick: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({ _tag: fc.constant("compact" as const), pick: fc.nat(), physical: fc.boolean() })
    },
    { weight: 5, arbitrary: fc.record({ _tag: fc.constant("tick" as const), ms: fc.constantFrom(10, 100) }) },
    { weight: 2, arbitrary: fc.record({ _tag: fc.constant("yield" as const) }) },
    { weight: 3, arbitrary: fc.record({ _tag: fc.constant("drain" as const), stream }) },
    { weight: 2, arbitrary: fc.record({ _tag: fc.constant("stall" as const), stream, on: fc.boolean() }) },
    {
      weight: 2,
      arbitrary: fc.record({ _tag: fc.constant("progress" as const), stream, pick: fc.nat(), all: fc.boolean() })
    }
  ]
  const leases: Array<Weighted> = scenario.leases
    ? [
        {
          weight: 6,
          arbitrary: fc.record({
            _tag: fc.constant("grant" as const),
            slot: grantSlot,
            ttl: fc.integer({ min: 2, max: 5 }) /* etcd's minimum TTL is 2 s */
          })
        },
        {
          weight: 8,
          arbitrary: fc.record({ _tag: fc.constant("leasePut" as const), key, value: fc.constantFrom("l", "m"), slot })
        },
        { weight: 1, arbitrary: fc.record({ _tag: fc.constant("revoke" as const), slot }) },
        { weight: 3, arbitrary: fc.record({ _tag: fc.constant("keepAlive" as const), slot }) },
        {
          weight: 5,
          // off the expiry fiber's 500 ms grid too, so leases expire between its checks
          arbitrary: fc.record({
            _tag: fc.constant("elapse" as const),
            ms: fc.constantFrom(130, 250, 700, 1000, 1710, 2500)
          })
        },
        { weight: 4, arbitrary: fc.record({ _tag: fc.constant("toExpiry" as const), slot, keepAlive: fc.boolean() }) }
      ]
    : []
  const bursts: Array<Weighted> = scenario.bursts
    ? [
        {
          weight: 2,
          arbitrary: fc.record({
            _tag: fc.constant("burst" as const),
            puts: fc.uniqueArray(scenario.leases ? fc.record({ key, slot: optionalSlot }) : fc.record({ key }), {
              minLength: 2,
              maxLength: 4,
              selector: (p) => p.key
            })
          })
        }
      ]
    : []
  return fc.oneof(...base, ...leases, ...bursts)
}

export const storeConfig: fc.Arbitrary<Partial<WatchableStoreConfig>> = fc.record({
  chanBufLen: fc.constantFrom(1, 1, 2, 4, 128),
  maxWatchersPerSync: fc.constantFrom(1, 2, 512),
  watchBatchMaxRevs: fc.constantFrom(1, 2, 1000),
  historyChunkRevs: fc.constantFrom(1, 3, 1024),
  immediateResync: fc.boolean()
})

// ---------------------------------------------------------------------------------------------
// coverage

/** What the runs exercised, so a property cannot pass by never reaching the interesting paths. */
export interface Coverage extends CheckCoverage {
  runs: number
  victims: number
  progressAll: number
  futureWatchers: number
  moreThanOneRound: number
  readonly leases: LeaseCoverage
  /** LMDB: batches staged and transactions committed (fewer commits: batches were grouped) */
  lmdbBatches: number
  lmdbCommits: number
}

export const newCoverage = (): Coverage => ({
  runs: 0,
  victims: 0,
  compactionResponses: 0,
  multiRevisionBatches: 0,
  progressAll: 0,
  futureWatchers: 0,
  moreThanOneRound: 0,
  leases: newLeaseCoverage(),
  lmdbBatches: 0,
  lmdbCommits: 0
})

// ---------------------------------------------------------------------------------------------
// execution

interface StreamRec {
  readonly ws: WatchStream
  stalled: boolean
  readonly byId: Map<WatchId, WatchRec>
  /** recipients of each -1 progress response still in the channel */
  readonly allQueue: Array<ReadonlyArray<WatchRec>>
}

/**
 * "clock": time commands advance the TestClock and the store's own loops do the work.
 * "direct": they run a sync round (forked, so it interleaves with later commands) or a victim pass,
 * as etcd's unit tests call syncWatchers/moveVictims; far cheaper per case than TestClock.adjust.
 */
export type Mode = "clock" | "direct"

export type BackendKind = "memory" | "lmdb"

export interface RunOptions {
  readonly mode: Mode
  readonly scenario: Scenario
  readonly backend: BackendKind
  readonly coverage: Coverage
}

const isLeaseNotFound = (e: EtcdError) => e.message === Errors.leaseNotFound().message
const isLeaseExist = (e: EtcdError) => e.message === Errors.leaseExist().message

export const run = (cmds: ReadonlyArray<Cmd>, stalled: ReadonlyArray<boolean>, options: RunOptions) =>
  Effect.gen(function* () {
    const { mode, coverage } = options
    const store = yield* WatchableStore
    const st: MvccStoreShape = yield* MvccStore
    const backend = yield* Effect.serviceOption(Backend)
    const lessorOption = yield* Effect.serviceOption(Lessor)
    const streams: Array<StreamRec> = []
    for (let i = 0; i < STREAMS; i++) {
      streams.push({ ws: yield* store.newWatchStream, stalled: stalled[i] === true, byId: new Map(), allQueue: [] })
    }
    const watchers: Array<WatchRec> = []
    const history: Array<Event> = []
    let recorded = 1
    let sawVictims = false
    const rounds: Array<Fiber.RuntimeFiber<number>> = []

    // Leases: a model of leases and live keys, checked after every step. Time is the TestClock in
    // both modes (in direct mode only the lessor's expiry fiber sleeps short enough to wake). Over
    // memory nothing delays that fiber, so its checks fall exactly on the 500 ms grid from the
    // layer's start.
    const lessor = Option.getOrUndefined(lessorOption)
    if (options.scenario.leases && lessor === undefined) expect.fail("the lease scenario needs a Lessor")
    const model = options.scenario.leases
      ? new LeaseModel(
          options.backend === "memory"
            ? { _tag: "grid", t0: yield* Clock.currentTimeMillis, interval: EXPIRY_CHECK_MS }
            : { _tag: "window", interval: EXPIRY_CHECK_MS },
          coverage.leases
        )
      : undefined
    let stepStart = 0
    /** a slot below LEASE_IDS.length is that id; above, one of the leases the model holds now */
    const leaseAt = (n: number): bigint => {
      const granted = model?.grantedIds() ?? []
      return n < LEASE_IDS.length || granted.length === 0
        ? LEASE_IDS[n % LEASE_IDS.length]!
        : granted[n % granted.length]!
    }

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

    /**
     * On a real disk an expiry revoke started during a clock advance is still waiting for its
     * commit (and the expiry fiber may start the next one after it): wait until every staged write
     * has landed, its revision is committed, and no lease the lessor has let go of still holds keys.
     */
    const quiet = Effect.gen(function* () {
      if (options.backend === "memory" || Option.isNone(backend)) return
      for (let i = 0; i < 200; i++) {
        const r = st.rev()
        yield* Effect.orDie(backend.value.flush)
        yield* settle(2)
        if (st.rev() !== r) continue
        if (model === undefined || lessor === undefined) return
        const present = new Set((yield* lessor.leases).leases.map((l) => l.id))
        const letGo = model.grantedIds().filter((id) => !present.has(id))
        const all = yield* st.range({ key: b("\0"), rangeEnd: b("\0") })
        if (!all.kvs.some((kv) => letGo.includes(kv.lease))) return
      }
      expect.fail("writes never settled")
    })

    const advance = (ms: number) =>
      Effect.gen(function* () {
        model?.advanced(ms)
        yield* TestClock.adjust(ms)
        yield* settle(2)
        yield* quiet
      })

    /** After each step with leases: the new revisions, the lessor and the store against the model. */
    const leaseStep = (own: number, what: string) =>
      Effect.gen(function* () {
        if (model === undefined || lessor === undefined) return
        const now = yield* Clock.currentTimeMillis
        const present = new Set((yield* lessor.leases).leases.map((l) => l.id))
        model.step(history.slice(stepStart), own, now, present, what)
        stepStart = history.length
        const all = yield* st.range({ key: b("\0"), rangeEnd: b("\0") })
        model.checkStore(new Map(all.kvs.map((kv) => [s(kv.key), kv.lease])), what)
        const answers = new Map(
          yield* Effect.forEach(LEASE_IDS, (id) =>
            Effect.map(lessor.timeToLive({ id, keys: true }), (r) => [id, r] as const)
          )
        )
        model.checkTimeToLive(answers, now, what)
      })

    const keepAlive = (id: bigint, what: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const r = yield* lessor!.keepAlive(id)
        if (!model!.granted(id)) {
          expect(r.ttl, `${what}: keep-alive of a lease that is gone`).toBe(0)
        } else if (model!.expiredAt(id, now)) {
          // expired, not yet seen by the expiry fiber: the keep-alive revokes it
          expect(r.ttl, `${what}: keep-alive of an expired lease`).toBe(0)
          model!.remove(id, "keepAlive")
        } else {
          expect(r.ttl, `${what}: keep-alive answers the granted TTL`).toBe(model!.renew(id, now))
        }
      })

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

    /** Runs `write`; with the model, checks it failed exactly when a lease it names is not granted. */
    const leased = <A>(write: Effect.Effect<A, EtcdError>, ids: ReadonlyArray<bigint>, what: string) =>
      Effect.gen(function* () {
        const result = yield* Effect.either(write)
        const missing = model !== undefined && ids.some((id) => id !== 0n && !model.granted(id))
        if (Either.isLeft(result)) {
          expect(missing && isLeaseNotFound(result.left), `${what}: ${result.left.message}`).toBe(true)
          coverage.leases.rejectedPuts++
          return false
        }
        expect(missing, `${what}: accepted with a lease that is not granted`).toBe(false)
        return true
      })

    for (const [step, c] of cmds.entries()) {
      const what = `step ${step} ${JSON.stringify(c, (_, v) => (typeof v === "bigint" ? String(v) : v))}`
      /** revisions the command itself makes (with the model: predicted, then checked) */
      let own = 0
      switch (c._tag) {
        case "put":
          yield* st.put({ key: b(c.key), value: b(c.value) })
          model?.put(c.key, 0n)
          own = 1
          break
        case "del":
          yield* st.deleteRange({ key: b(c.key) })
          if (model?.hasKey(c.key)) own = 1
          model?.del(c.key)
          break
        case "delPrefix":
          yield* st.deleteRange({ key: b(c.key), rangeEnd: b(prefixEnd(c.key)) })
          if (model !== undefined) {
            const gone = model.keys().filter((k) => k.startsWith(c.key))
            for (const k of gone) model.del(k)
            own = gone.length > 0 ? 1 : 0
          }
          break
        case "txn": {
          const leaseOf = (o: TxnOp) => (o.slot === undefined ? 0n : leaseAt(o.slot))
          const write = st.txn({
            compare: [],
            success: c.ops.map((o) =>
              o.put
                ? { _tag: "Put" as const, request: { key: b(o.key), value: b("t"), lease: leaseOf(o) } }
                : { _tag: "DeleteRange" as const, request: { key: b(o.key) } }
            ),
            failure: []
          })
          if (model === undefined) {
            yield* write
            break
          }
          if (!(yield* leased(write, c.ops.filter((o) => o.put).map(leaseOf), what))) break
          for (const o of c.ops) {
            if (o.put) {
              model.put(o.key, leaseOf(o))
              own = 1
            } else if (model.hasKey(o.key)) {
              model.del(o.key)
              own = 1
            }
          }
          break
        }
        case "watch": {
          const sr = streams[c.stream]!
          const cur = st.rev()
          const removals = model?.removals.filter((r) => r.rev > 0 && r.rev > st.compactRevision()) ?? []
          const start = c.start === "removal" && removals.length === 0 ? "past" : c.start
          const startRev =
            start === "zero"
              ? 0
              : start === "past"
                ? 1 + (c.pick % cur)
                : start === "current"
                  ? cur
                  : start === "future"
                    ? cur + 1 + (c.pick % 4)
                    : removals[c.pick % removals.length]!.rev
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
            yield* advance(c.ms)
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
        case "grant": {
          const id = LEASE_IDS[c.slot]!
          const r = yield* Effect.either(lessor!.grant({ id, ttl: c.ttl }))
          if (model!.granted(id)) {
            expect(Either.isLeft(r) && isLeaseExist(r.left), `${what}: lease already exists`).toBe(true)
          } else {
            expect(Either.getOrUndefined(r), what).toMatchObject({ id, ttl: c.ttl })
            model!.grant(id, c.ttl, yield* Clock.currentTimeMillis)
          }
          break
        }
        case "leasePut": {
          const id = leaseAt(c.slot)
          if (yield* leased(st.put({ key: b(c.key), value: b(c.value), lease: id }), [id], what)) {
            model!.put(c.key, id)
            own = 1
          }
          break
        }
        case "revoke": {
          const id = leaseAt(c.slot)
          const r = yield* Effect.either(lessor!.revoke(id))
          if (model!.granted(id)) {
            expect(Either.isRight(r), what).toBe(true)
            expect(Either.getOrUndefined(r)?.header.revision, `${what}: header`).toBe(st.rev())
            model!.remove(id, "revoke")
          } else {
            expect(Either.isLeft(r) && isLeaseNotFound(r.left), `${what}: lease not found`).toBe(true)
          }
          break
        }
        case "keepAlive":
          yield* keepAlive(leaseAt(c.slot), what)
          break
        case "elapse":
          yield* advance(c.ms)
          break
        case "toExpiry": {
          const id = leaseAt(c.slot)
          if (!model!.granted(id)) break
          const ms = model!.expiry(id) - (yield* Clock.currentTimeMillis)
          if (ms > 0) yield* advance(ms)
          // Exactly at expiry: gone if the expiry fiber checked at this instant, else expired but
          // still granted, so a keep-alive now must revoke it. The lease step checks which.
          record()
          yield* leaseStep(0, `${what} (advanced ${ms} ms)`)
          if (c.keepAlive) yield* keepAlive(id, what)
          break
        }
        case "burst": {
          const leaseOf = (p: { readonly slot?: number | undefined }) => (p.slot === undefined ? 0n : leaseAt(p.slot))
          const results = yield* Effect.forEach(
            c.puts,
            (p) =>
              leased(st.put({ key: b(p.key), value: b("burst"), lease: leaseOf(p) }), [leaseOf(p)], `${what} ${p.key}`),
            { concurrency: "unbounded" }
          )
          c.puts.forEach((p, i) => {
            if (results[i] === true) {
              model?.put(p.key, leaseOf(p))
              own++
            }
          })
          break
        }
      }
      record()
      yield* leaseStep(own, what)
    }

    if (model !== undefined) {
      // Every lease still granted expires: each its own revision, to every watcher still there.
      for (let i = 0; i < 10 && model.size > 0; i++) {
        yield* advance(Math.max(model.lastExpiry() - (yield* Clock.currentTimeMillis), 0) + EXPIRY_CHECK_MS)
        record()
        yield* leaseStep(0, "final expiry")
      }
      expect(model.size, "every lease expired").toBe(0)
    }
    // Reach every future start revision, so that each watcher can report progress at the end.
    while (live().some((w) => w.startRev > st.rev())) {
      yield* st.put({ key: b("zz"), value: b("end") })
      model?.put("zz", 0n)
      record()
      yield* leaseStep(1, "reaching future start revisions")
    }
    // Quiesce: everyone drains until no watcher is unsynced or a victim and no channel holds anything.
    for (const sr of streams) sr.stalled = false
    for (const f of rounds) yield* Fiber.join(f)
    let quiesce = 0
    for (; quiesce < 300; quiesce++) {
      for (const sr of streams) yield* take(sr)
      record()
      yield* leaseStep(0, "quiesce")
      if (store.slowWatcherCount() === 0 && streams.every((sr) => sr.ws.chanLen() === 0)) break
      if (mode === "clock") {
        yield* advance(quiesce % 2 === 0 ? 10 : 100)
        yield* settle(1)
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

    const finalRev = st.rev()
    const persisted = buildModel(history)
    for (const w of watchers) validate(w, persisted, finalRev, coverage)
    if (model !== undefined) for (const w of watchers) validateRemovals(w, model.removals, finalRev, coverage.leases)
    coverage.runs++
    if (sawVictims) coverage.victims++
  })

// ---------------------------------------------------------------------------------------------
// the property

export interface PropertyOptions extends RunOptions {
  readonly maxCommands: number
  readonly numRuns: number
  /** fast-check's seed: fixed where a coverage check after the runs must not depend on the draw */
  readonly seed?: number | undefined
}

/**
 * One effect running fast-check inside it: a fresh TestContext per case (it.effect.prop) costs
 * more than the case itself. Every case still gets its own store, streams, lessor and loops (and,
 * over LMDB, its own data dir). Direct mode runs the loops with periods of an hour, out of the way.
 */
export const property = (options: PropertyOptions) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const opened: Array<LmdbStats> = []
    const layerFor = (cfg: Partial<WatchableStoreConfig>): Layer.Layer<WatchableStore | MvccStore, unknown> => {
      const config: Partial<WatchableStoreConfig> =
        options.mode === "direct" ? { ...cfg, watchResyncPeriod: "1 hour", victimRetryPeriod: "1 hour" } : cfg
      if (options.backend === "lmdb") {
        return lmdbWatchStack(config, {}, (stats) => {
          opened.push(stats)
        })
      }
      return options.scenario.leases ? watchStack(layerMemory, config) : watchLayer(config)
    }
    // no wall-clock budget for the whole (its tests take none): a case that ends nothing for STALL_MS is a hang
    let cases = 0
    yield* Effect.promise(() =>
      watchdog(
        "watch guarantee cases",
        () => cases,
        () =>
          fc.assert(
            fc.asyncProperty(
              storeConfig,
              fc.array(commands(options.scenario), { minLength: 5, maxLength: options.maxCommands, size: "max" }),
              fc.array(fc.boolean(), { minLength: STREAMS, maxLength: STREAMS }),
              (cfg, cmds, stalled) =>
                Runtime.runPromise(runtime)(
                  Effect.scoped(run(cmds, stalled, options).pipe(Effect.provide(layerFor(cfg))))
                ).finally(() => void cases++)
            ),
            { numRuns: options.numRuns, ...(options.seed !== undefined ? { seed: options.seed } : {}) }
          )
      )
    )
    for (const stats of opened) {
      options.coverage.lmdbBatches += stats.batches
      options.coverage.lmdbCommits += stats.commits
    }
  })
