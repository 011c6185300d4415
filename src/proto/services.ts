/**
 * Typed grpc-js server implementations for the services the server answers in full. Requests
 * arrive decoded; responses may be given in the encodable (Init) shape. Pass an implementation to
 * `server.addService(etcdserverpb.KV.service, impl)`: these are object types (not interfaces), so
 * they are assignable to grpc-js' UntypedServiceImplementation.
 */
import type * as grpc from "@grpc/grpc-js"
import type * as M from "./messages.js"

/** A grpc-js implementation of etcdserverpb.KV: Range, Put, DeleteRange, Txn and Compact, typed. */
export type KVServer = {
  readonly Range: grpc.handleUnaryCall<M.RangeRequest, M.RangeResponseInit>
  readonly Put: grpc.handleUnaryCall<M.PutRequest, M.PutResponseInit>
  readonly DeleteRange: grpc.handleUnaryCall<M.DeleteRangeRequest, M.DeleteRangeResponseInit>
  readonly Txn: grpc.handleUnaryCall<M.TxnRequest, M.TxnResponseInit>
  readonly Compact: grpc.handleUnaryCall<M.CompactionRequest, M.CompactionResponseInit>
}

/** A grpc-js implementation of etcdserverpb.Watch: the bidirectional Watch stream, typed. */
export type WatchServer = {
  readonly Watch: grpc.handleBidiStreamingCall<M.WatchRequest, M.WatchResponseInit>
}

/** A grpc-js implementation of etcdserverpb.Lease: grant, revoke, keep-alive, time-to-live and leases, typed. */
export type LeaseServer = {
  readonly LeaseGrant: grpc.handleUnaryCall<M.LeaseGrantRequest, M.LeaseGrantResponseInit>
  readonly LeaseRevoke: grpc.handleUnaryCall<M.LeaseRevokeRequest, M.LeaseRevokeResponseInit>
  readonly LeaseKeepAlive: grpc.handleBidiStreamingCall<M.LeaseKeepAliveRequest, M.LeaseKeepAliveResponseInit>
  readonly LeaseTimeToLive: grpc.handleUnaryCall<M.LeaseTimeToLiveRequest, M.LeaseTimeToLiveResponseInit>
  readonly LeaseLeases: grpc.handleUnaryCall<M.LeaseLeasesRequest, M.LeaseLeasesResponseInit>
}
