/**
 * The lessor's state as a plain synchronous machine (etcd's lessor struct without the locks):
 * the lease map, the expiry queue, and the leases whose revoke is in flight. `lessor.ts` wraps it
 * in Effects (persistence, the store's deletes, the expiry fiber); everything here runs inside one
 * synchronous step, so callers see each operation atomically.
 *
 * Times are milliseconds on the lessor's clock (Effect's Clock, so TestClock drives it).
 */
import { keyString } from "../mvcc/key-string.js"
import { Lease } from "./lease.js"
import { LeaseQueue } from "./lease-queue.js"
import type { LeaseRecord } from "./leasepb.js"

export interface LessorLimits {
  /** seconds; shorter grants are raised to it */
  readonly minLeaseTTL: number
  /** after handing an expired lease out for revoke, look at it again this much later (ms) */
  readonly expiredLeaseRetryMs: number
  /** leases revoked per second at most; promote spreads expiries so piles stay under 3/4 of it */
  readonly revokeRate: number
}

export type RenewResult =
  | { readonly _tag: "Renewed"; readonly lease: Lease }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Expired"; readonly lease: Lease }

export class LessorCore {
  readonly leases = new Map<bigint, Lease>()
  readonly queue = new LeaseQueue()
  /** leases removed from `leases` whose keys are being deleted; kept so detach still finds them */
  readonly revoking = new Map<bigint, Lease>()

  constructor(readonly limits: LessorLimits) {}

  // --- the store's seam (LeaseAttachments) ---

  exists(id: bigint): boolean {
    return this.leases.has(id)
  }

  attach(id: bigint, key: Uint8Array): void {
    // The store only attaches after `exists`; an unknown id here would be a store bug, so ignore it.
    this.leases.get(id)?.keys.set(keyString(key), key)
  }

  detach(id: bigint, key: Uint8Array): void {
    ;(this.leases.get(id) ?? this.revoking.get(id))?.keys.delete(keyString(key))
  }

  // --- operations ---

  /** Creates a lease expiring `ttl` seconds from `now`; undefined when the id is taken. */
  grant(id: bigint, ttl: number, now: number): Lease | undefined {
    if (this.leases.has(id)) return undefined
    const lease = new Lease(id, Math.max(ttl, this.limits.minLeaseTTL))
    lease.refresh(now)
    this.leases.set(id, lease)
    this.queue.registerOrUpdate(id, lease.expiry)
    return lease
  }

  /** Drops a lease without revoking it (a grant whose record could not be written). */
  forget(id: bigint): void {
    this.leases.delete(id)
    this.queue.remove(id)
  }

  /** True while `id` is granted or its revoke is still running: an auto id must avoid both. */
  inUse(id: bigint): boolean {
    return this.leases.has(id) || this.revoking.has(id)
  }

  /**
   * Takes the lease out of the map for a revoke: from now on puts with it fail and it never
   * expires again. Returns it, or undefined when it is not granted.
   */
  beginRevoke(id: bigint): Lease | undefined {
    const lease = this.leases.get(id)
    if (lease === undefined) return undefined
    this.leases.delete(id)
    this.queue.remove(id)
    this.revoking.set(id, lease)
    return lease
  }

  /**
   * Ends a revoke. On failure the lease comes back (unless the id was granted anew meanwhile) and
   * the expiry loop looks at it again after the retry interval, as etcd retries unrevoked leases.
   */
  endRevoke(id: bigint, succeeded: boolean, now: number): void {
    const lease = this.revoking.get(id)
    this.revoking.delete(id)
    if (succeeded || lease === undefined || this.leases.has(id)) return
    this.leases.set(id, lease)
    this.queue.registerOrUpdate(id, lease.expired(now) ? now + this.limits.expiredLeaseRetryMs : lease.expiry)
  }

  /** etcd's Renew: restarts the countdown of a live lease; an expired one must be revoked instead. */
  renew(id: bigint, now: number): RenewResult {
    const lease = this.leases.get(id)
    if (lease === undefined) return { _tag: "NotFound" }
    if (lease.expired(now)) return { _tag: "Expired", lease }
    lease.remainingTTL = 0
    lease.refresh(now)
    this.queue.registerOrUpdate(id, lease.expiry)
    return { _tag: "Renewed", lease }
  }

  lookup(id: bigint): Lease | undefined {
    return this.leases.get(id)
  }

  /** Every lease, soonest expiry first (etcd's Leases order). */
  byExpiry(): Array<Lease> {
    return [...this.leases.values()].sort((a, b) => a.expiry - b.expiry)
  }

  /**
   * Up to `limit` expired leases, earliest first (etcd's findExpiredLeases). Each one handed out is
   * re-queued at now + retry interval, so a revoke that fails is retried, never lost; entries of
   * leases already gone are dropped.
   */
  findExpired(now: number, limit: number): Array<Lease> {
    const out: Array<Lease> = []
    while (out.length < limit) {
      const item = this.queue.peek()
      if (item === undefined) break
      const lease = this.leases.get(item.id)
      if (lease === undefined) {
        this.queue.pop()
        continue
      }
      if (now < item.time) break
      if (!lease.expired(now) && lease.expiry > now) {
        // a retry entry that came due before the lease's own (renewed) expiry
        this.queue.registerOrUpdate(item.id, lease.expiry)
        continue
      }
      this.queue.registerOrUpdate(item.id, now + this.limits.expiredLeaseRetryMs)
      if (lease.expired(now)) out.push(lease)
    }
    return out
  }

  /** Rebuilds the map from persisted records (etcd's initAndRecover); expiries stay "never" until promote. */
  recover(records: ReadonlyArray<LeaseRecord>): void {
    for (const r of records) {
      this.leases.set(r.id, new Lease(r.id, Math.max(r.ttl, this.limits.minLeaseTTL), r.remainingTTL))
    }
  }

  /**
   * etcd's Promote: every lease gets a fresh countdown from `now` plus `extendMs`. With many
   * leases, expiries that would pile up within a second are spread out so no second has more than
   * 3/4 of the revoke rate.
   */
  promote(now: number, extendMs: number): void {
    for (const lease of this.leases.values()) {
      lease.refresh(now, extendMs)
      this.queue.registerOrUpdate(lease.id, lease.expiry)
    }
    if (this.leases.size < this.limits.revokeRate) return

    const leases = this.byExpiry()
    let baseWindow = leases[0]!.remainingMs(now)
    let nextWindow = baseWindow + 1000
    let expires = 0
    const targetPerSecond = Math.floor((3 * this.limits.revokeRate) / 4)
    for (const lease of leases) {
      const remaining = lease.remainingMs(now)
      if (remaining > nextWindow) {
        baseWindow = remaining
        nextWindow = baseWindow + 1000
        expires = 1
        continue
      }
      expires++
      if (expires <= targetPerSecond) continue
      // Leases n seconds ahead of the window's base are pushed back by one second less.
      const delay = (1000 * expires) / targetPerSecond - (remaining - baseWindow)
      nextWindow = baseWindow + delay
      lease.refresh(now, delay + extendMs)
      this.queue.registerOrUpdate(lease.id, lease.expiry)
    }
  }
}
