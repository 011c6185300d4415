/**
 * etcd's auth store: the `AuthStore` service and its layer, its errors, permissions and token
 * providers. The interval sets behind range permissions and the token stores are internal.
 *
 * @module
 */
export {
  AuthStore,
  type AuthStoreConfig,
  type AuthStoreShape,
  DEFAULT_BCRYPT_COST,
  layer,
  ROOT_ROLE,
  ROOT_USER
} from "./auth-store.js"
export { type AuthError, type AuthErrorName, AuthErrors } from "./errors.js"
export { type JwtOptions, jwtTokenProvider } from "./jwt-token.js"
export { type Permission, PermType } from "./range-perm.js"
export { DEFAULT_SIMPLE_TOKEN_TTL_SECONDS } from "./simple-token.js"
export {
  type AuthInfo,
  DEFAULT_JWT_TTL_MS,
  parseTokenOptions,
  simpleTokenProvider,
  type TokenOptions,
  type TokenProvider
} from "./token-provider.js"
