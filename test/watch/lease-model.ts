/**
 * The test's own model of leases and live keys, for the guarantee properties that include lease
 * grant, leased puts, revoke, keep-alive and expiry. After every step of a run it is checked
 * against the real lessor and store:
 * - a lease is never gone before its expiry, and is gone once the expiry fiber's next check
 *   after it has run (exactly on the 500 ms grid over the memory backend; within a window where
 *   real disk I/O shifts the fiber's checks);
 * - every removal (expiry, revoke, keep-alive of an expired lease) deletes exactly the keys the
 *   model holds attached to that lease, as DELETE events of ONE revision in sorted key order, and
 *   nothing else happens in that step besides the command's own revisions;
 * - the store's live keys with their leases, and each lease's keys and remaining TTL, match.
 * `validateRemovals` then checks each watcher saw each removal as one batch.
 */
import { expect } from "@effect/vitest"
import type { LeaseTimeToLiveResponse } from "../../src/lease/lessor.js"
import { type Event, EventType } from "../../src/mvcc/key-value.js"
import { describeWatcher, firstRev, inRange, type WatchRec } from "./history-check.js"
import { s } from "./helpers.js"

/** The lease ids the commands pick from: small and at the int64 edge, so ids travel intact. */
export const LEASE_IDS: ReadonlyArray<bigint> = [1n, 2n, 0x1234_5678_9abc_def0n, 0x7fff_ffff_ffff_ffffn]

export type ExpiryTiming =
  /** the expiry fiber checks at t0 + k × interval exactly (nothing delays it) */
  | { readonly _tag: "grid"; readonly t0: number; readonly interval: number }
  /**
   * A revoke waiting for the disk lets the clock run on (the TestClock sees its fiber suspended),
   * so the next check comes up to one clock advance late: gone by expiry + interval + the
   * largest advance made.
   */
  | { readonly _tag: "window"; readonly interval: number }

export type RemovalCause = "expiry" | "revoke" | "keepAlive"

export interface Removal {
  readonly lease: bigint
  readonly cause: RemovalCause
  /** the revision deleting the keys (0: the lease held no keys, no revision) */
  readonly rev: number
  /** sorted */
  readonly keys: ReadonlyArray<string>
}

interface ModelLease {
  readonly id: bigint
  readonly ttl: number
  /** ms on the TestClock */
  expiry: number
  readonly keys: Set<string>
}

export interface LeaseCoverage {
  expiries: number
  multiKeyExpiries: number
  emptyExpiries: number
  revokes: number
  keepAliveRevokes: number
  renewals: number
  rejectedPuts: number
  expiryDeliveries: number
  expiryReplays: number
  expiryCatchUps: number
  expiryPrevKvs: number
  expiryFutureWatchers: number
}

export const newLeaseCoverage = (): LeaseCoverage => ({
  expiries: 0,
  multiKeyExpiries: 0,
  emptyExpiries: 0,
  revokes: 0,
  keepAliveRevokes: 0,
  renewals: 0,
  rejectedPuts: 0,
  expiryDeliveries: 0,
  expiryReplays: 0,
  expiryCatchUps: 0,
  expiryPrevKvs: 0,
  expiryFutureWatchers: 0
})

const sorted = (xs: Iterable<string>): Array<string> => [...xs].sort()

export class LeaseModel {
  private readonly leases = new Map<bigint, ModelLease>()
  /** live key → its lease (0n: none) */
  private readonly live = new Map<string, bigint>()
  /** removals made by the current step's command, not yet matched to a revision */
  private pending: Array<{ readonly lease: ModelLease; readonly cause: RemovalCause }> = []
  readonly removals: Array<Removal> = []
  private maxAdvance = 0

  constructor(
    private readonly timing: ExpiryTiming,
    private readonly coverage: LeaseCoverage
  ) {}

  // --- what the commands do, as the model predicts it ---

  /** a TestClock advance of `ms` */
  advanced(ms: number): void {
    if (ms > this.maxAdvance) this.maxAdvance = ms
  }

  grantedIds(): Array<bigint> {
    return [...this.leases.keys()]
  }

  granted(id: bigint): boolean {
    return this.leases.has(id)
  }

  /** true when a keep-alive at `now` finds the lease expired (the lessor then revokes it) */
  expiredAt(id: bigint, now: number): boolean {
    return now >= this.leases.get(id)!.expiry
  }

  expiry(id: bigint): number {
    return this.leases.get(id)!.expiry
  }

  /** the latest expiry of any lease held */
  lastExpiry(): number {
    let last = -Infinity
    for (const l of this.leases.values()) if (l.expiry > last) last = l.expiry
    return last
  }

  hasKey(key: string): boolean {
    return this.live.has(key)
  }

  keys(): Array<string> {
    return [...this.live.keys()]
  }

  grant(id: bigint, ttl: number, now: number): void {
    this.leases.set(id, { id, ttl, expiry: now + ttl * 1000, keys: new Set() })
  }

  renew(id: bigint, now: number): number {
    const l = this.leases.get(id)!
    l.expiry = now + l.ttl * 1000
    this.coverage.renewals++
    return l.ttl
  }

  put(key: string, lease: bigint): void {
    this.detach(key)
    this.live.set(key, lease)
    if (lease !== 0n) this.leases.get(lease)!.keys.add(key)
  }

  del(key: string): void {
    this.detach(key)
    this.live.delete(key)
  }

  /** An explicit removal by the current command (revoke, or keep-alive of an expired lease). */
  remove(id: bigint, cause: RemovalCause): void {
    const l = this.leases.get(id)!
    this.leases.delete(id)
    this.pending.push({ lease: l, cause })
  }

  private detach(key: string): void {
    const prev = this.live.get(key)
    if (prev !== undefined && prev !== 0n) this.leases.get(prev)?.keys.delete(key)
  }

  // --- the checks after each step ---

  /** Whether the expiry fiber has had a check at or after the lease's expiry by `now`. */
  private mustBeGone(l: ModelLease, now: number): boolean {
    const t = this.timing
    if (t._tag === "grid") return t.t0 + Math.floor((now - t.t0) / t.interval) * t.interval >= l.expiry
    return now >= l.expiry + t.interval + this.maxAdvance
  }

  private mayBeGone(l: ModelLease, now: number): boolean {
    return this.timing._tag === "grid" ? this.mustBeGone(l, now) : now >= l.expiry
  }

  /**
   * One step: `events` are the revisions committed during it, `own` how many of them the command
   * itself made (the rest must be lease removals), `present` the ids the lessor still holds.
   */
  step(events: ReadonlyArray<Event>, own: number, now: number, present: ReadonlySet<bigint>, what: string): void {
    // Expiries: leases the lessor no longer holds although no command removed them.
    const expired: Array<ModelLease> = []
    for (const l of this.leases.values()) {
      if (present.has(l.id)) {
        expect(this.mustBeGone(l, now), `${what}: lease ${l.id} (expiry ${l.expiry}) still granted at ${now}`).toBe(
          false
        )
      } else {
        expect(this.mayBeGone(l, now), `${what}: lease ${l.id} (expiry ${l.expiry}) revoked early at ${now}`).toBe(true)
        expired.push(l)
      }
    }
    for (const l of expired) {
      this.leases.delete(l.id)
      this.pending.push({ lease: l, cause: "expiry" })
    }
    for (const p of this.pending) {
      expect(present.has(p.lease.id), `${what}: lease ${p.lease.id} removed by ${p.cause} but still granted`).toBe(
        false
      )
    }
    for (const id of present) expect(this.leases.has(id), `${what}: lease ${id} granted unexpectedly`).toBe(true)

    // Each removal's keys: DELETE events of one revision, sorted; nothing else besides `own`.
    const groups = new Map<number, Array<Event>>()
    for (const e of events) {
      const g = groups.get(e.kv.modRevision)
      if (g === undefined) groups.set(e.kv.modRevision, [e])
      else g.push(e)
    }
    const used = new Set<number>()
    const expiryRevs: Array<{ readonly rev: number; readonly expiry: number }> = []
    for (const { lease, cause } of this.pending) {
      const keys = sorted(lease.keys)
      for (const k of keys) this.live.delete(k)
      let rev = 0
      if (keys.length > 0) {
        const matches = [...groups].filter(
          ([r, evs]) =>
            !used.has(r) &&
            evs.length === keys.length &&
            evs.every((e, i) => e.type === EventType.DELETE && s(e.kv.key) === keys[i])
        )
        expect(
          matches.map(([r]) => r),
          `${what}: ${cause} of lease ${lease.id} deletes ${JSON.stringify(keys)} in one revision, in key order; ` +
            `revisions of the step: ${JSON.stringify([...groups].map(([r, evs]) => [r, evs.map((e) => [e.type, s(e.kv.key)])]))}`
        ).toHaveLength(1)
        rev = matches[0]![0]
        used.add(rev)
        if (cause === "expiry") expiryRevs.push({ rev, expiry: lease.expiry })
      }
      this.removals.push({ lease: lease.id, cause, rev, keys })
      if (cause === "expiry") {
        if (keys.length === 0) this.coverage.emptyExpiries++
        else this.coverage.expiries++
        if (keys.length > 1) this.coverage.multiKeyExpiries++
      } else if (keys.length > 0) {
        if (cause === "revoke") this.coverage.revokes++
        else this.coverage.keepAliveRevokes++
      }
    }
    this.pending = []
    // the earliest expiry is revoked first (etcd's expiry heap)
    expiryRevs.sort((a, b) => a.rev - b.rev)
    for (let i = 1; i < expiryRevs.length; i++) {
      expect(expiryRevs[i]!.expiry, `${what}: expiry order`).toBeGreaterThanOrEqual(expiryRevs[i - 1]!.expiry)
    }
    expect(groups.size - used.size, `${what}: revisions besides lease removals`).toBe(own)
  }

  /** The store's live keys and their leases (read through Range) are the model's. */
  checkStore(actual: ReadonlyMap<string, bigint>, what: string): void {
    const fmt = (m: ReadonlyMap<string, bigint>) => sorted([...m].map(([k, l]) => `${k}@${l}`))
    expect(fmt(actual), `${what}: live keys and their leases`).toEqual(fmt(this.live))
  }

  /** The lessor's TimeToLive of each id: keys and remaining whole seconds, or -1 when not granted. */
  checkTimeToLive(answers: ReadonlyMap<bigint, LeaseTimeToLiveResponse>, now: number, what: string): void {
    for (const [id, r] of answers) {
      const l = this.leases.get(id)
      expect(
        { ttl: r.ttl, grantedTTL: r.grantedTTL, keys: r.keys.map(s) },
        `${what}: TimeToLive of lease ${id}`
      ).toEqual(
        l === undefined
          ? { ttl: -1, grantedTTL: 0, keys: [] }
          : { ttl: Math.max(0, Math.trunc((l.expiry - now) / 1000)), grantedTTL: l.ttl, keys: sorted(l.keys) }
      )
    }
  }

  get size(): number {
    return this.leases.size
  }
}

/**
 * Each lease removal as one watcher saw it: the removal's keys in the watcher's range (none with
 * NODELETE), as DELETE events of that one revision, in sorted key order, in ONE response, with the
 * lease's KeyValue as prev_kv when asked. A watcher that ended early (canceled, compacted) saw
 * either all of it or none of it.
 */
export const validateRemovals = (
  w: WatchRec,
  removals: ReadonlyArray<Removal>,
  finalRev: number,
  coverage: LeaseCoverage
): void => {
  const where = describeWatcher(w)
  const complete = !w.canceled
  for (const r of removals) {
    if (r.rev === 0 || r.rev < firstRev(w) || r.rev > finalRev) continue
    const want = w.filter === 2 ? [] : r.keys.filter((k) => inRange(w.range, k))
    const responses: Array<{ readonly header: number; readonly events: ReadonlyArray<Event> }> = []
    for (const item of w.log) {
      if (item.kind !== "events") continue
      const evs = item.response.events.filter((e) => e.kv.modRevision === r.rev)
      if (evs.length > 0) responses.push({ header: item.response.revision, events: evs })
    }
    if (want.length === 0) {
      expect(responses, `${where}: ${r.cause} of lease ${r.lease} at ${r.rev} is not for it`).toEqual([])
      continue
    }
    if (responses.length === 0 && !complete) continue
    expect(responses.length, `${where}: ${r.cause} of lease ${r.lease} at ${r.rev} in one response`).toBe(1)
    const got = responses[0]!.events
    expect(
      got.map((e) => [e.type, s(e.kv.key), e.kv.modRevision]),
      `${where}: ${r.cause} of lease ${r.lease} at ${r.rev}`
    ).toEqual(want.map((k) => [EventType.DELETE, k, r.rev]))
    if (w.prevKv) {
      for (const e of got) {
        // prev_kv may be missing only where history was compacted (validate checks when)
        if (e.prevKv === undefined) continue
        expect(e.prevKv.lease, `${where}: prev_kv of ${s(e.kv.key)} at ${r.rev} holds the lease`).toBe(r.lease)
        if (r.cause === "expiry") coverage.expiryPrevKvs++
      }
    }
    if (r.cause === "expiry") {
      coverage.expiryDeliveries++
      if (w.createdAt >= r.rev) coverage.expiryReplays++
      // a header past the revision: read back from history by a sync round (the unsynced path)
      if (responses[0]!.header > r.rev) coverage.expiryCatchUps++
      if (w.startRev > w.createdAt) coverage.expiryFutureWatchers++
    }
  }
}
