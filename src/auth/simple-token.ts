/**
 * etcd's simple token provider (auth/simple_token.go): a token is 16 random letters, a dot and an
 * index; it lives in memory only (a restart forgets it, clients authenticate again) and expires
 * after `ttl` without use — each use starts its time again. Disabling auth drops every token; a
 * changed or deleted user loses its own.
 */
import { randomInt } from "node:crypto"

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
const PREFIX_LENGTH = 16

/** etcd's simpleTokenTTLDefault (--auth-token-ttl). */
export const DEFAULT_SIMPLE_TOKEN_TTL_SECONDS = 300

export class SimpleTokens {
  private readonly tokens = new Map<string, { readonly user: string; expires: number }>()
  private index = 0
  private enabled = false

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now
  ) {}

  enable(): void {
    this.enabled = true
  }

  disable(): void {
    this.enabled = false
    this.tokens.clear()
  }

  assign(user: string): string {
    let prefix = ""
    for (let i = 0; i < PREFIX_LENGTH; i++) prefix += LETTERS[randomInt(LETTERS.length)]
    const token = `${prefix}.${++this.index}`
    this.tokens.set(token, { user, expires: this.now() + this.ttlMs })
    return token
  }

  /** the token's user, its time started again; undefined when unknown, expired or disabled */
  user(token: string): string | undefined {
    if (!this.enabled) return undefined
    const t = this.tokens.get(token)
    if (t === undefined) return undefined
    const now = this.now()
    if (t.expires <= now) {
      this.tokens.delete(token)
      return undefined
    }
    t.expires = now + this.ttlMs
    return t.user
  }

  invalidateUser(user: string): void {
    for (const [token, t] of this.tokens) if (t.user === user) this.tokens.delete(token)
  }

  /** drops expired tokens (etcd's TTL keeper does it each second) */
  sweep(): void {
    const now = this.now()
    for (const [token, t] of this.tokens) if (t.expires <= now) this.tokens.delete(token)
  }

  get size(): number {
    return this.tokens.size
  }
}
