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
/** One of `GrpcCode`'s values. */
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
  /** ErrGRPCEmptyKey: a request without a key */
  emptyKey: make(GrpcCode.InvalidArgument, "etcdserver: key is not provided"),
  /** ErrGRPCKeyNotFound: a put with `ignore_value` or `ignore_lease` on a key that does not exist */
  keyNotFound: make(GrpcCode.InvalidArgument, "etcdserver: key not found"),
  /** ErrGRPCValueProvided: a put with `ignore_value` that also gives a value */
  valueProvided: make(GrpcCode.InvalidArgument, "etcdserver: value is provided"),
  /** ErrGRPCLeaseProvided: a put with `ignore_lease` that also gives a lease */
  leaseProvided: make(GrpcCode.InvalidArgument, "etcdserver: lease is provided"),
  /** ErrGRPCTooManyOps: a txn with more operations than --max-txn-ops */
  tooManyOps: make(GrpcCode.InvalidArgument, "etcdserver: too many operations in txn request"),
  /** ErrGRPCDuplicateKey: a txn that writes one key twice */
  duplicateKey: make(GrpcCode.InvalidArgument, "etcdserver: duplicate key given in txn request"),
  /** ErrGRPCCompacted: a read or watch at a revision compacted away */
  compacted: make(GrpcCode.OutOfRange, "etcdserver: mvcc: required revision has been compacted"),
  /** ErrGRPCFutureRev: a read at a revision the store has not reached */
  futureRev: make(GrpcCode.OutOfRange, "etcdserver: mvcc: required revision is a future revision"),
  /** ErrGRPCRequestTooLarge: a request over --max-request-bytes */
  requestTooLarge: make(GrpcCode.InvalidArgument, "etcdserver: request is too large"),
  /** etcd 3.5+ (3.4 has no sort-option check) */
  invalidSortOption: make(GrpcCode.InvalidArgument, "etcdserver: invalid sort option"),
  /** ErrGRPCLeaseNotFound: a lease id the lessor does not hold */
  leaseNotFound: make(GrpcCode.NotFound, "etcdserver: requested lease not found"),
  /** ErrGRPCLeaseExist: a grant of an id already in use */
  leaseExist: make(GrpcCode.FailedPrecondition, "etcdserver: lease already exists"),
  /** ErrGRPCLeaseTTLTooLarge: a grant with a TTL over etcd's maximum */
  leaseTTLTooLarge: make(GrpcCode.OutOfRange, "etcdserver: too large lease TTL"),
  /** ErrGRPCNoSpace: a write while the NOSPACE alarm is raised (the space quota is exceeded) */
  noSpace: make(GrpcCode.ResourceExhausted, "etcdserver: mvcc: database space exceeded"),
  /** ErrGRPCWatchCanceled: a watch the server canceled */
  watchCanceled: make(GrpcCode.Canceled, "etcdserver: watch canceled"),
  /** ErrGRPCNoLeader: a request with `require_leader` when there is no leader */
  noLeader: make(GrpcCode.Unavailable, "etcdserver: no leader"),
  /** ErrGRPCNotCapable: a request the cluster's version does not support */
  notCapable: make(GrpcCode.FailedPrecondition, "etcdserver: not capable"),
  /** ErrGRPCStopped: a request to a member that is stopping */
  stopped: make(GrpcCode.Unavailable, "etcdserver: server stopped"),
  /** ErrGRPCCorrupt: a write under the CORRUPT alarm, and here a read that met a corrupt record */
  corrupt: make(GrpcCode.DataLoss, "etcdserver: corrupt cluster")
} as const
