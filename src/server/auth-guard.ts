/**
 * Who a call is from, as etcd's AuthInfoFromCtx decides it: the token in the call's metadata
 * ("token", as clientv3 sends it, or "authorization", as the JSON gateway forwards the
 * Authorization header); without one, the client certificate's common name when
 * --client-cert-auth is on. A token that does not resolve is "invalid auth token" — even with
 * auth disabled, as etcd answers.
 *
 * Hot path: `needsAuth` is false for a call without a token while auth is disabled (one boolean
 * and two Map lookups); the services then run exactly as they did without auth.
 */
import type * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import type { AuthStoreShape } from "../auth/auth-store.js"
import { type AuthError, AuthErrors } from "../auth/errors.js"
import type { AuthInfo } from "../auth/token-provider.js"
import type { EtcdError } from "../errors.js"

export interface AuthGuard {
  readonly store: AuthStoreShape
  /**
   * The common name of the call's verified client certificate, when --client-cert-auth is on and
   * the connection has one (etcd's AuthInfoFromTLS); undefined otherwise. Plain-text listeners
   * never have one.
   */
  readonly commonName: (call: CallWithMetadata) => string | undefined
}

export interface CallWithMetadata {
  readonly metadata: grpc.Metadata
}

/** grpc-js keeps metadata in a Map (`internalRepr`); reading it directly skips key validation. */
const repr = (md: grpc.Metadata): Map<string, Array<unknown>> | undefined => {
  const m = (md as unknown as { readonly internalRepr?: unknown }).internalRepr
  return m instanceof Map ? (m as Map<string, Array<unknown>>) : undefined
}

const first = (md: grpc.Metadata, key: string): string | undefined => {
  const v = (repr(md)?.get(key) ?? md.get(key))[0]
  return v === undefined ? undefined : typeof v === "string" ? v : String(v)
}

/** The call's token, if it sent one. */
export const tokenOf = (md: grpc.Metadata): string | undefined => first(md, "token") ?? first(md, "authorization")

const hasToken = (md: grpc.Metadata): boolean => {
  const m = repr(md)
  if (m !== undefined) return m.has("token") || m.has("authorization")
  return md.get("token").length > 0 || md.get("authorization").length > 0
}

/** Whether the call must go through auth: auth is on, or it carries a token to check. */
export const needsAuth = (guard: AuthGuard, call: CallWithMetadata): boolean =>
  guard.store.enabled || hasToken(call.metadata)

/**
 * The caller (undefined: nobody, which etcd then treats as the empty user), or the auth error
 * that ends the call (an unknown or expired token).
 */
export const authInfoOf = (
  guard: AuthGuard,
  call: CallWithMetadata
): Effect.Effect<AuthInfo | undefined, AuthError> => {
  const token = tokenOf(call.metadata)
  if (token === undefined) return Effect.succeed(guard.store.authInfoFromCommonName(guard.commonName(call)))
  return Effect.flatMap(guard.store.authInfoFromToken(token), (ai) =>
    ai === undefined ? Effect.fail(AuthErrors.invalidAuthToken) : Effect.succeed(ai)
  )
}

/** authInfoOf with the gRPC spelling of its error. */
export const authInfoGrpc = (
  guard: AuthGuard,
  call: CallWithMetadata
): Effect.Effect<AuthInfo | undefined, EtcdError> => Effect.mapError(authInfoOf(guard, call), (e) => e.grpc())

/** Fails with the gRPC form of `e` when there is one. */
export const check = (e: AuthError | undefined): Effect.Effect<void, EtcdError> =>
  e === undefined ? Effect.void : Effect.fail(e.grpc())

/**
 * The CN hook for a TLS connection: grpc-js exposes the verified peer certificate through
 * `getAuthContext()`. Used only with --client-cert-auth; the JSON gateway's calls have none (etcd
 * ignores the CN of gateway requests too).
 */
export const peerCommonName =
  (clientCertAuth: boolean) =>
  (call: CallWithMetadata): string | undefined => {
    if (!clientCertAuth) return undefined
    const ctx = (
      call as { getAuthContext?: () => { sslPeerCertificate?: { subject?: { CN?: string | Array<string> } } } }
    ).getAuthContext?.()
    const cn = ctx?.sslPeerCertificate?.subject?.CN
    return Array.isArray(cn) ? cn[0] : cn
  }
