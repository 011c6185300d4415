/**
 * One lease (etcd's lease.Lease): granted TTL, expiry on the lessor's clock and the keys attached
 * to it. Plain mutable object owned by the lessor; every mutation happens inside one synchronous
 * step of the lessor, so no locks.
 */

export class Lease {
  /** expiry in milliseconds on the lessor's clock; Infinity = never (not yet promoted) */
  expiry = Infinity
  /** attached keys by their latin1 form (mvcc/key-string.ts) */
  readonly keys = new Map<string, Uint8Array>()

  constructor(
    readonly id: bigint,
    /** granted TTL in seconds (already raised to the minimum TTL) */
    readonly ttl: number,
    /** last checkpointed remaining TTL in seconds; 0 = unset */
    public remainingTTL = 0
  ) {}

  /** The TTL a refresh counts from: the checkpointed remainder if set, else the full TTL. */
  effectiveTTL(): number {
    return this.remainingTTL > 0 ? this.remainingTTL : this.ttl
  }

  /** Restarts the countdown at `now`, plus `extendMs` (etcd's refresh). */
  refresh(now: number, extendMs = 0): void {
    this.expiry = now + extendMs + this.effectiveTTL() * 1000
  }

  remainingMs(now: number): number {
    return this.expiry - now
  }

  expired(now: number): boolean {
    return this.remainingMs(now) <= 0
  }

  /** Attached keys in bytewise order: the order a revoke deletes them in. */
  sortedKeys(): Array<Uint8Array> {
    const names = [...this.keys.keys()].sort()
    return names.map((n) => this.keys.get(n)!)
  }
}
