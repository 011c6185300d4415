/**
 * etcd's auth errors. Two spellings exist, as in etcd: the gRPC ones of rpctypes ("etcdserver: …",
 * with their status codes) that the KV, Lease, Watch and Auth services answer, and the raw auth
 * package errors ("auth: …") that etcd 3.4's Maintenance service lets through unconverted, so
 * clients see them with code Unknown.
 */
import { EtcdError, GrpcCode } from "../errors.js"

/** An auth package error: its rpctypes twin and its raw text. */
export interface AuthError {
  /** the error as the gRPC API answers it (`etcdserver: …`, with its gRPC code) */
  readonly grpc: () => EtcdError
  /** the auth package text ("auth: …"), as Maintenance answers it (code Unknown) */
  readonly raw: string
}

const make = (code: GrpcCode, text: string): AuthError => ({
  grpc: () => new EtcdError({ code, message: `etcdserver: ${text}` }),
  raw: `auth: ${text}`
})

/** etcd's auth errors by name (auth.ErrRootUserNotExist, …), each as gRPC and as auth-package text. */
export const AuthErrors = {
  rootUserNotExist: make(GrpcCode.FailedPrecondition, "root user does not exist"),
  rootRoleNotExist: make(GrpcCode.FailedPrecondition, "root user does not have root role"),
  userAlreadyExist: make(GrpcCode.FailedPrecondition, "user name already exists"),
  userEmpty: make(GrpcCode.InvalidArgument, "user name is empty"),
  userNotFound: make(GrpcCode.FailedPrecondition, "user name not found"),
  roleAlreadyExist: make(GrpcCode.FailedPrecondition, "role name already exists"),
  roleNotFound: make(GrpcCode.FailedPrecondition, "role name not found"),
  roleEmpty: make(GrpcCode.InvalidArgument, "role name is empty"),
  authFailed: make(GrpcCode.InvalidArgument, "authentication failed, invalid user ID or password"),
  permissionDenied: make(GrpcCode.PermissionDenied, "permission denied"),
  roleNotGranted: make(GrpcCode.FailedPrecondition, "role is not granted to the user"),
  permissionNotGranted: make(GrpcCode.FailedPrecondition, "permission is not granted to the role"),
  authNotEnabled: make(GrpcCode.FailedPrecondition, "authentication is not enabled"),
  invalidAuthToken: make(GrpcCode.Unauthenticated, "invalid auth token"),
  invalidAuthMgmt: make(GrpcCode.InvalidArgument, "invalid auth management"),
  authOldRevision: make(GrpcCode.InvalidArgument, "revision of auth store is old")
} as const

/** The name of one of `AuthErrors`. */
export type AuthErrorName = keyof typeof AuthErrors

/** The error's text as grpc-go prints a status ("rpc error: code = … desc = …"): a watch's cancel_reason. */
export const statusText = (e: EtcdError): string => `rpc error: code = ${CODE_NAMES[e.code]} desc = ${e.message}`

const CODE_NAMES: Record<number, string> = {
  [GrpcCode.InvalidArgument]: "InvalidArgument",
  [GrpcCode.PermissionDenied]: "PermissionDenied",
  [GrpcCode.Unauthenticated]: "Unauthenticated",
  [GrpcCode.FailedPrecondition]: "FailedPrecondition"
}

/**
 * etcd 3.4's ErrNoPasswordUser: Authenticate of a user added with --no-password. rpctypes has no
 * twin, so clients get the raw text with code Unknown.
 */
export const noPasswordUser = () =>
  new EtcdError({
    code: GrpcCode.Unknown,
    message: "auth: authentication failed, password was given for no password user"
  })

/** The raw form for Maintenance: code Unknown, the auth package's text. */
export const rawAuthError = (e: AuthError): EtcdError => new EtcdError({ code: GrpcCode.Unknown, message: e.raw })
