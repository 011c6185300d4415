/**
 * --auth-token: "simple" (the default) or "jwt,pub-key=<file>,priv-key=<file>,sign-method=<alg>,ttl=<duration>",
 * parsed as etcd's auth.NewTokenProvider does (an unknown type or option is "auth: invalid auth
 * options"), and the provider interface both kinds implement.
 */
import { Effect } from "effect"
import { EtcdError, GrpcCode } from "../errors.js"
import { SimpleTokens } from "./simple-token.js"

/** Who a request is from: the user, and the auth revision its credential was issued at. */
export interface AuthInfo {
  readonly username: string
  readonly revision: number
}

/** A token provider (etcd's auth.TokenProvider): simple or jwt tokens, as --auth-token picks. */
export interface TokenProvider {
  /** starts accepting tokens (auth enabled) */
  readonly enable: () => void
  /** stops accepting tokens (auth disabled); simple tokens are dropped */
  readonly disable: () => void
  /** the token's user and revision (`revision`: the store's current one, for tokens that carry none) */
  readonly info: (token: string, revision: number) => Effect.Effect<AuthInfo | undefined>
  /** a new token for `user` at the auth store's `revision` */
  readonly assign: (user: string, revision: number) => Effect.Effect<string, EtcdError>
  /** drops the user's simple tokens (the user was deleted or its password changed) */
  readonly invalidateUser: (user: string) => void
  /** periodic housekeeping (simple tokens: drop the expired) */
  readonly sweep: () => void
}

/** --auth-token, parsed: `simple`, or `jwt` with its key files, sign method and TTL. */
export type TokenOptions =
  | { readonly type: "simple" }
  | {
      readonly type: "jwt"
      readonly publicKeyFile: string | undefined
      readonly privateKeyFile: string | undefined
      readonly signMethod: string
      readonly ttlMs: number
    }

/** etcd's jwt default TTL. */
export const DEFAULT_JWT_TTL_MS = 5 * 60_000

export const INVALID_AUTH_OPTIONS = "auth: invalid auth options"

/** Parses --auth-token; the error text otherwise. `parseDuration` is Go's time.ParseDuration. */
export const parseTokenOptions = (
  value: string,
  parseDuration: (s: string) => number | undefined
): TokenOptions | string => {
  const [type, ...rest] = value.split(",")
  if (type === "simple" && rest.length === 0) return { type: "simple" }
  if (type !== "jwt") return INVALID_AUTH_OPTIONS
  let publicKeyFile: string | undefined
  let privateKeyFile: string | undefined
  let signMethod = ""
  let ttlMs = DEFAULT_JWT_TTL_MS
  for (const opt of rest) {
    const eq = opt.indexOf("=")
    if (eq < 0) return INVALID_AUTH_OPTIONS
    const k = opt.slice(0, eq)
    const v = opt.slice(eq + 1)
    switch (k) {
      case "pub-key":
        publicKeyFile = v
        break
      case "priv-key":
        privateKeyFile = v
        break
      case "sign-method":
        signMethod = v
        break
      case "ttl": {
        const ms = parseDuration(v)
        if (ms === undefined) return INVALID_AUTH_OPTIONS
        ttlMs = ms
        break
      }
      default:
        return INVALID_AUTH_OPTIONS
    }
  }
  if (signMethod === "") return "auth: invalid auth signature method"
  if (publicKeyFile === undefined && privateKeyFile === undefined) return "auth: missing key data"
  return { type: "jwt", publicKeyFile, privateKeyFile, signMethod, ttlMs }
}

/** etcd's simple tokens: random strings held in memory, each valid for `ttlMs` after its last use. */
export const simpleTokenProvider = (
  ttlMs: number,
  now?: () => number
): TokenProvider & { readonly tokens: SimpleTokens } => {
  const tokens = new SimpleTokens(ttlMs, now)
  return {
    tokens,
    enable: () => tokens.enable(),
    disable: () => tokens.disable(),
    info: (token, revision) =>
      Effect.sync(() => {
        const username = tokens.user(token)
        return username === undefined ? undefined : { username, revision }
      }),
    assign: (user) => Effect.sync(() => tokens.assign(user)),
    invalidateUser: (user) => tokens.invalidateUser(user),
    sweep: () => tokens.sweep()
  }
}

/** An assign on a jwt provider with only a public key. */
export const verifyOnly = () =>
  new EtcdError({ code: GrpcCode.Unknown, message: "auth: token signing attempted with verify-only key" })
