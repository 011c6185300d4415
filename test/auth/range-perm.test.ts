/**
 * The range permission rules against a model written differently: a request is allowed when a
 * left-to-right sweep from its first key reaches its end without leaving the union of the
 * permitted intervals (a point request: one interval holds the key). Thousands of random
 * permission sets over a small alphabet, so overlaps, touching ends, points and open ends are
 * common.
 */
import { describe, expect, it } from "vitest"
import * as fc from "effect/FastCheck"
import { type Permission, PermType, rangeOpPermitted, unify } from "../../src/auth/range-perm.js"

const enc = (s: string) => new Uint8Array(Buffer.from(s, "latin1"))
const ZERO = "\0"

/** the model's order on keys: bytewise; `undefined` is +infinity */
const cmp = (a: string | undefined, b: string | undefined): number =>
  a === undefined ? (b === undefined ? 0 : 1) : b === undefined ? -1 : Buffer.compare(enc(a), enc(b))

interface ModelPerm {
  readonly type: number
  readonly key: string
  /** "" point, "\0" open ended, else the end */
  readonly end: string
}

const span = (p: ModelPerm): readonly [string, string | undefined] =>
  p.end === "" ? [p.key, p.key + ZERO] : [p.key, p.end === ZERO ? undefined : p.end]

const grants = (p: ModelPerm, write: boolean) =>
  p.type === PermType.READWRITE || p.type === (write ? PermType.WRITE : PermType.READ)

/** the model: is every key of the request inside the union of the granted spans? */
const modelAllows = (perms: ReadonlyArray<ModelPerm>, write: boolean, key: string, end: string): boolean => {
  const spans = perms.filter((p) => grants(p, write)).map(span)
  if (end === "") return spans.some(([b, e]) => cmp(b, key) <= 0 && cmp(key, e) < 0)
  const stop = end === ZERO ? undefined : end
  if (cmp(stop, key) <= 0) return false
  let at: string | undefined = key
  for (;;) {
    let next: string | undefined | null = null
    for (const [b, e] of spans) {
      if (cmp(b, at) <= 0 && cmp(at, e) < 0 && (next === null || cmp(e, next) > 0)) next = e
    }
    if (next === null) return false
    if (cmp(next, stop) >= 0) return true
    at = next
  }
}

const key = fc.constantFrom("a", "aa", "ab", "b", "ba", "bb", "c", "ca", "d")
const end = fc.oneof(fc.constant(""), fc.constant(ZERO), key)
const perm = fc.record({ type: fc.constantFrom(0, 1, 2), key, end })

const toPerm = (p: ModelPerm): Permission => ({ permType: p.type, key: enc(p.key), rangeEnd: enc(p.end) })

describe("range permissions (etcd's unifiedRangePermissions)", () => {
  it("allow a request exactly when the model does", () => {
    fc.assert(
      fc.property(fc.array(perm, { maxLength: 6 }), fc.boolean(), key, end, (perms, write, k, e) => {
        // a well-formed request: a point, open ended, or an end after the key
        fc.pre(e === "" || e === ZERO || cmp(e, k) > 0)
        const u = unify(perms.map(toPerm))
        const got = rangeOpPermitted(write ? u.write : u.read, enc(k), e === "" ? undefined : enc(e))
        expect(got).toBe(modelAllows(perms, write, k, e))
      }),
      { numRuns: 5000 }
    )
  })

  it("examples: touching ranges join, a point then a range join at key+\\0, gaps refuse", () => {
    const u = unify([
      { permType: PermType.READ, key: enc("a"), rangeEnd: enc("b") },
      { permType: PermType.READ, key: enc("b"), rangeEnd: enc("c") },
      { permType: PermType.WRITE, key: enc("k"), rangeEnd: new Uint8Array(0) },
      { permType: PermType.WRITE, key: enc("k\0"), rangeEnd: enc("m") },
      { permType: PermType.READWRITE, key: enc("x"), rangeEnd: enc(ZERO) }
    ])
    expect(rangeOpPermitted(u.read, enc("a"), enc("c"))).toBe(true)
    expect(rangeOpPermitted(u.read, enc("a"), enc("d"))).toBe(false)
    expect(rangeOpPermitted(u.write, enc("k"), enc("m"))).toBe(true)
    expect(rangeOpPermitted(u.write, enc("k"), undefined)).toBe(true)
    expect(rangeOpPermitted(u.read, enc("k"), undefined)).toBe(false)
    expect(rangeOpPermitted(u.read, enc("x"), enc(ZERO))).toBe(true)
    expect(rangeOpPermitted(u.read, enc("y"), enc("zzzz"))).toBe(true)
    expect(rangeOpPermitted(u.read, enc("w"), enc(ZERO))).toBe(false)
  })

  it("requests whose end is not after the key, as etcd 3.4 answers them (read on [b, d))", () => {
    const u = unify([{ permType: PermType.READ, key: enc("b"), rangeEnd: enc("d") }])
    const allowed = (k: string, e: string) => rangeOpPermitted(u.read, enc(k), enc(e))
    expect([allowed("b", "b"), allowed("c", "c"), allowed("c", "b"), allowed("c", "a")]).toEqual([
      true,
      true,
      true,
      true
    ])
    expect([allowed("a", "a"), allowed("e", "c"), allowed("d", "d")]).toEqual([false, false, false])
  })
})
