/** Simple tokens on a hand-moved clock, and --auth-token parsing. */
import { describe, expect, it } from "vitest"
import { SimpleTokens } from "../../src/auth/simple-token.js"
import { INVALID_AUTH_OPTIONS, parseTokenOptions } from "../../src/auth/token-provider.js"

const clock = () => {
  let t = 1_000_000
  return { now: () => t, advance: (ms: number) => (t += ms) }
}

describe("simple tokens", () => {
  it("look like etcd's (16 letters, a dot, an index) and expire after the TTL without use", () => {
    const c = clock()
    const tokens = new SimpleTokens(300_000, c.now)
    tokens.enable()
    const a = tokens.assign("alice")
    expect(a).toMatch(/^[a-zA-Z]{16}\.\d+$/)
    c.advance(299_000)
    expect(tokens.user(a)).toBe("alice")
    // that use started its time again
    c.advance(299_000)
    expect(tokens.user(a)).toBe("alice")
    c.advance(300_000)
    expect(tokens.user(a)).toBeUndefined()
  })

  it("sweep drops expired tokens; a user's tokens go with invalidateUser; disable drops all", () => {
    const c = clock()
    const tokens = new SimpleTokens(1000, c.now)
    tokens.enable()
    const a1 = tokens.assign("a")
    const a2 = tokens.assign("a")
    const b1 = tokens.assign("b")
    expect(a1).not.toBe(a2)
    tokens.invalidateUser("a")
    expect([tokens.user(a1), tokens.user(a2), tokens.user(b1)]).toEqual([undefined, undefined, "b"])
    c.advance(1000)
    tokens.sweep()
    expect(tokens.size).toBe(0)
    const b2 = tokens.assign("b")
    tokens.disable()
    expect(tokens.user(b2)).toBeUndefined()
    tokens.enable()
    expect(tokens.user(b2)).toBeUndefined()
  })
})

describe("--auth-token", () => {
  const ms = (s: string) => (s === "10m" ? 600_000 : undefined)
  it("simple, or jwt with its options; anything else is etcd's 'invalid auth options'", () => {
    expect(parseTokenOptions("simple", ms)).toEqual({ type: "simple" })
    expect(parseTokenOptions("jwt,pub-key=/p,priv-key=/k,sign-method=RS256,ttl=10m", ms)).toEqual({
      type: "jwt",
      publicKeyFile: "/p",
      privateKeyFile: "/k",
      signMethod: "RS256",
      ttlMs: 600_000
    })
    expect(parseTokenOptions("jwt,priv-key=/k,sign-method=ES256", ms)).toMatchObject({ ttlMs: 300_000 })
    expect(parseTokenOptions("bogus", ms)).toBe(INVALID_AUTH_OPTIONS)
    expect(parseTokenOptions("simple,ttl=1", ms)).toBe(INVALID_AUTH_OPTIONS)
    expect(parseTokenOptions("jwt,color=red,sign-method=RS256,priv-key=/k", ms)).toBe(INVALID_AUTH_OPTIONS)
    expect(parseTokenOptions("jwt,ttl=xx,sign-method=RS256,priv-key=/k", ms)).toBe(INVALID_AUTH_OPTIONS)
    expect(parseTokenOptions("jwt,priv-key=/k", ms)).toBe("auth: invalid auth signature method")
    expect(parseTokenOptions("jwt,sign-method=RS256", ms)).toBe("auth: missing key data")
  })
})
