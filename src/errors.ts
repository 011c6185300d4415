/**
 * etcd's errors as values: the exact message text and the gRPC status code the v3 API answers with
 * (api/v3rpc/rpctypes). Every layer fails with `EtcdError`; the gRPC server maps `code` to the status.
 */
import { Schema } from "effect"

/** gRPC status codes (the subset etcd uses, numbered as in grpc's codes.proto). */
export const GrpcCode = {
  OK: 0,
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  DataLoss: 15,
  Unauthenticated: 16
} as const
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode]

/** A gRPC status code as a Schema (one of `GrpcCode`). */
export const GrpcCodeSchema: Schema.Schema<GrpcCode> = Schema.Literal(...Object.values(GrpcCode))

/**
 * An error as etcd reports it over gRPC: `message` is the status description, byte for byte. A
 * Schema class, so it crosses process and wire boundaries (`Schema.encode(EtcdError)`) intact.
 */
export class EtcdError extends Schema.TaggedError<EtcdError>()("EtcdError", {
  code: GrpcCodeSchema,
  message: Schema.String
}) {}

/** The text of an unknown failure cause: its `message` when it has one (an Error), else its string form. */
export const errorText = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

const make = (code: GrpcCode, message: string) => (): EtcdError => new EtcdError({ code, message })

/** The errors of rpctypes/error.go that this project produces. Functions, so each failure is a fresh value. */
export const Errors = {
  emptyKey: make(GrpcCode.InvalidArgument, "etcdserver: key is not provided"),
  keyNotFound: make(GrpcCode.InvalidArgument, "etcdserver: key not found"),
  valueProvided: make(GrpcCode.InvalidArgument, "etcdserver: value is provided"),
  leaseProvided: make(GrpcCode.InvalidArgument, "etcdserver: lease is provided"),
  tooManyOps: make(GrpcCode.InvalidArgument, "etcdserver: too many operations in txn request"),
  duplicateKey: make(GrpcCode.InvalidArgument, "etcdserver: duplicate key given in txn request"),
  compacted: make(GrpcCode.OutOfRange, "etcdserver: mvcc: required revision has been compacted"),
  futureRev: make(GrpcCode.OutOfRange, "etcdserver: mvcc: required revision is a future revision"),
  requestTooLarge: make(GrpcCode.InvalidArgument, "etcdserver: request is too large"),
  /** etcd 3.5+ (3.4 has no sort-option check) */
  invalidSortOption: make(GrpcCode.InvalidArgument, "etcdserver: invalid sort option"),
  leaseNotFound: make(GrpcCode.NotFound, "etcdserver: requested lease not found"),
  leaseExist: make(GrpcCode.FailedPrecondition, "etcdserver: lease already exists"),
  leaseTTLTooLarge: make(GrpcCode.OutOfRange, "etcdserver: too large lease TTL"),
  noSpace: make(GrpcCode.ResourceExhausted, "etcdserver: mvcc: database space exceeded"),
  watchCanceled: make(GrpcCode.Canceled, "etcdserver: watch canceled"),
  noLeader: make(GrpcCode.Unavailable, "etcdserver: no leader"),
  notCapable: make(GrpcCode.FailedPrecondition, "etcdserver: not capable"),
  stopped: make(GrpcCode.Unavailable, "etcdserver: server stopped"),
  /** ErrGRPCCorrupt: a write under the CORRUPT alarm, and here a read that met a corrupt record */
  corrupt: make(GrpcCode.DataLoss, "etcdserver: corrupt cluster")
} as const
