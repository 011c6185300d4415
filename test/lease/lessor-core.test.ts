import { describe, expect, it } from "@effect/vitest"
import { LessorCore } from "../../src/lease/lessor-core.js"

const limits = { minLeaseTTL: 2, expiredLeaseRetryMs: 3000, revokeRate: 1000 }
const key = (s: string) => new TextEncoder().encode(s)

describe("LessorCore", () => {
  it("raises short TTLs to the minimum and refuses a taken id", () => {
    const c = new LessorCore(limits)
    expect(c.grant(1n, 1, 0)!.ttl).toBe(2)
    expect(c.grant(2n, -5, 0)!.ttl).toBe(2)
    expect(c.grant(3n, 10, 0)!.ttl).toBe(10)
    expect(c.grant(1n, 10, 0)).toBeUndefined()
    expect(c.lookup(1n)!.ttl).toBe(2)
  })

  it("finds expired leases earliest first, at most `limit`, and re-queues them for a retry", () => {
    const c = new LessorCore(limits)
    for (let i = 1; i <= 5; i++) c.grant(BigInt(i), 10 + i, 0) // expire at 11 s … 15 s
    expect(c.findExpired(10_999, 10)).toEqual([])
    expect(c.findExpired(13_000, 2).map((l) => l.id)).toEqual([1n, 2n])
    expect(c.findExpired(13_000, 10).map((l) => l.id)).toEqual([3n])
    // handed-out leases come back only after the retry interval if still not revoked
    expect(c.findExpired(15_999, 10).map((l) => l.id)).toEqual([4n, 5n])
    // all three were re-queued for 16 s (equal times: any order)
    expect(
      c
        .findExpired(16_000, 10)
        .map((l) => l.id)
        .sort()
    ).toEqual([1n, 2n, 3n])
  })

  it("renew restarts the countdown; an expired lease must be revoked instead", () => {
    const c = new LessorCore(limits)
    c.grant(1n, 10, 0)
    const r = c.renew(1n, 9_000)
    expect(r._tag).toBe("Renewed")
    expect(c.lookup(1n)!.expiry).toBe(19_000)
    expect(c.findExpired(18_999, 10)).toEqual([])
    expect(c.renew(1n, 19_000)._tag).toBe("Expired")
    expect(c.renew(2n, 0)._tag).toBe("NotFound")
  })

  it("a lease being revoked is gone for grant/exists but still detaches keys; a failed revoke restores it", () => {
    const c = new LessorCore(limits)
    c.grant(1n, 10, 0)
    c.attach(1n, key("b"))
    c.attach(1n, key("a"))
    const l = c.beginRevoke(1n)!
    expect(l.sortedKeys().map((k) => new TextDecoder().decode(k))).toEqual(["a", "b"])
    expect(c.exists(1n)).toBe(false)
    expect(c.inUse(1n)).toBe(true)
    c.detach(1n, key("a"))
    c.endRevoke(1n, false, 5_000)
    expect(c.exists(1n)).toBe(true)
    expect(
      c
        .lookup(1n)!
        .sortedKeys()
        .map((k) => new TextDecoder().decode(k))
    ).toEqual(["b"])
    // not yet expired when restored: it expires on its own schedule
    expect(c.findExpired(9_999, 10).map((x) => x.id)).toEqual([])
    expect(c.findExpired(10_000, 10).map((x) => x.id)).toEqual([1n])
    // handed out at 10 s; a revoke failing at 10.5 s puts it back for a retry at 13.5 s
    c.beginRevoke(1n)
    c.endRevoke(1n, false, 10_500)
    expect(c.findExpired(13_499, 10).map((x) => x.id)).toEqual([])
    expect(c.findExpired(13_500, 10).map((x) => x.id)).toEqual([1n])
    c.beginRevoke(1n)
    c.endRevoke(1n, true, 11_000)
    expect(c.inUse(1n)).toBe(false)
  })

  it("promote gives recovered leases a fresh countdown plus the extension", () => {
    const c = new LessorCore(limits)
    c.recover([
      { id: 1n, ttl: 1, remainingTTL: 0 },
      { id: 2n, ttl: 30, remainingTTL: 7 }
    ])
    expect(c.lookup(1n)!.expiry).toBe(Infinity)
    expect(c.lookup(1n)!.ttl).toBe(2) // minimum TTL applies on recovery too
    c.promote(100_000, 1000)
    expect(c.lookup(1n)!.expiry).toBe(100_000 + 1000 + 2000)
    expect(c.lookup(2n)!.expiry).toBe(100_000 + 1000 + 7000) // a checkpointed remainder counts
  })

  it("promote spreads a pile of expiries so no second exceeds 3/4 of the revoke rate", () => {
    const c = new LessorCore({ ...limits, revokeRate: 100 })
    const records = Array.from({ length: 400 }, (_, i) => ({ id: BigInt(i + 1), ttl: 10, remainingTTL: 0 }))
    c.recover(records)
    c.promote(0, 1000)
    const perSecond = new Map<number, number>()
    for (const l of c.leases.values()) {
      const s = Math.floor(l.expiry / 1000)
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1)
      expect(l.expiry).toBeGreaterThanOrEqual(11_000)
    }
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(75 + 1)
    // without the spreading all 400 would expire at 11 s
    expect(perSecond.size).toBeGreaterThan(4)
  })
})
