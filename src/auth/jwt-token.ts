/**
 * etcd's jwt token provider (auth/jwt.go) on `jose`: tokens are signed with the private key and
 * carry the claims etcd's do — username, revision (the auth revision at issue, so a token of a
 * changed auth store is refused as old) and exp. Verification accepts only the configured
 * algorithm. Keys are PEM files (PKCS#1, SEC1 or PKCS#8 private keys; SPKI or certificate public
 * keys), loaded at start-up; HS* methods use the private key file's bytes as the secret.
 * Tokens need no server state: they survive a restart and `auth disable` does not revoke them.
 */
import { createPrivateKey, createPublicKey, createSecretKey, type KeyObject } from "node:crypto"
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { jwtVerify, SignJWT } from "jose"
import { type TokenProvider, verifyOnly } from "./token-provider.js"

const SIGN_METHODS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "HS256",
  "HS384",
  "HS512"
]

/** --auth-token's jwt options: the key files (either may be absent), sign method and token TTL. */
export interface JwtOptions {
  readonly publicKeyFile: string | undefined
  readonly privateKeyFile: string | undefined
  readonly signMethod: string
  readonly ttlMs: number
}

/** Loads the keys; a string is the start-up error. */
export const jwtTokenProvider = (o: JwtOptions): TokenProvider | string => {
  if (!SIGN_METHODS.includes(o.signMethod)) return "auth: invalid auth signature method"
  let signKey: KeyObject | undefined
  let verifyKey: KeyObject
  try {
    if (o.signMethod.startsWith("HS")) {
      if (o.privateKeyFile === undefined) return "auth: missing key data"
      signKey = createSecretKey(readFileSync(o.privateKeyFile))
      verifyKey = signKey
    } else {
      if (o.privateKeyFile !== undefined) signKey = createPrivateKey(readFileSync(o.privateKeyFile))
      if (o.publicKeyFile !== undefined) verifyKey = createPublicKey(readFileSync(o.publicKeyFile))
      else verifyKey = createPublicKey(signKey!)
      if (signKey !== undefined) {
        const derived = createPublicKey(signKey).export({ format: "der", type: "spki" })
        if (!derived.equals(verifyKey.export({ format: "der", type: "spki" }))) {
          return "auth: public and private keys don't match"
        }
      }
    }
  } catch (e) {
    return `auth: failed to load jwt keys: ${e instanceof Error ? e.message : String(e)}`
  }
  const alg = o.signMethod
  return {
    enable: () => {},
    disable: () => {},
    sweep: () => {},
    invalidateUser: () => {},
    info: (token) =>
      Effect.promise(() =>
        jwtVerify(token, verifyKey, { algorithms: [alg] }).then(
          ({ payload }) =>
            typeof payload["username"] === "string" && typeof payload["revision"] === "number"
              ? { username: payload["username"], revision: payload["revision"] }
              : undefined,
          () => undefined
        )
      ),
    assign: (user, revision) =>
      signKey === undefined
        ? Effect.fail(verifyOnly())
        : Effect.promise(() =>
            new SignJWT({ username: user, revision })
              .setProtectedHeader({ alg, typ: "JWT" })
              .setExpirationTime(Math.floor((Date.now() + o.ttlMs) / 1000))
              .sign(signKey!)
          )
  }
}
