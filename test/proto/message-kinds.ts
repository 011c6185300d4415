/**
 * A field-by-field description of every message typed in src/proto/messages.ts, as "kinds"
 * ("int64", "bytes", "repeated message", "oneof", …). The compiler checks it against the TS types
 * (`satisfies MessageKinds`: a missing, extra or differently typed field is a type error), and
 * compat.test.ts checks it against the loaded protos. Together they tie the hand-written types to
 * the .proto files. compat.test.ts also compiles this file, so `npm test` enforces the type half.
 */
import type { AllKeys, FieldType, MessageName, Messages, Repr } from "../../src/proto/messages.js"

interface Probe extends Repr {
  readonly i64: { readonly __kind: "int64" }
  readonly u64: { readonly __kind: "uint64" }
  readonly bytes: { readonly __kind: "bytes" }
}

type KindOf<T> = [T] extends [ReadonlyArray<infer E>] ? `repeated ${KindOf<E> & string}`
  : [T] extends [{ readonly __kind: infer K }] ? K
  : [T] extends [boolean] ? "bool"
  : [T] extends [number] ? "enum"
  : [T] extends [string] ? (string extends T ? "string" : "oneof") // a literal union names a oneof's member
  : [T] extends [object] ? "message"
  : never

export type MessageKinds = {
  readonly [N in MessageName]: {
    readonly [K in AllKeys<Messages<Probe>[N]>]: KindOf<NonNullable<FieldType<Messages<Probe>[N], K>>>
  }
}

const header = "message" as const
export const messageKinds = {
  "mvccpb.KeyValue": {
    key: "bytes", create_revision: "int64", mod_revision: "int64", version: "int64", value: "bytes", lease: "int64"
  },
  "mvccpb.Event": { type: "enum", kv: "message", prev_kv: "message" },
  ResponseHeader: { cluster_id: "uint64", member_id: "uint64", revision: "int64", raft_term: "uint64" },
  RangeRequest: {
    key: "bytes", range_end: "bytes", limit: "int64", revision: "int64", sort_order: "enum", sort_target: "enum",
    serializable: "bool", keys_only: "bool", count_only: "bool", min_mod_revision: "int64",
    max_mod_revision: "int64", min_create_revision: "int64", max_create_revision: "int64"
  },
  RangeResponse: { header, kvs: "repeated message", more: "bool", count: "int64" },
  PutRequest: {
    key: "bytes", value: "bytes", lease: "int64", prev_kv: "bool", ignore_value: "bool", ignore_lease: "bool"
  },
  PutResponse: { header, prev_kv: "message" },
  DeleteRangeRequest: { key: "bytes", range_end: "bytes", prev_kv: "bool" },
  DeleteRangeResponse: { header, deleted: "int64", prev_kvs: "repeated message" },
  RequestOp: {
    request: "oneof", request_range: "message", request_put: "message", request_delete_range: "message",
    request_txn: "message"
  },
  ResponseOp: {
    response: "oneof", response_range: "message", response_put: "message", response_delete_range: "message",
    response_txn: "message"
  },
  Compare: {
    result: "enum", target: "enum", key: "bytes", range_end: "bytes", target_union: "oneof", version: "int64",
    create_revision: "int64", mod_revision: "int64", value: "bytes", lease: "int64"
  },
  TxnRequest: { compare: "repeated message", success: "repeated message", failure: "repeated message" },
  TxnResponse: { header, succeeded: "bool", responses: "repeated message" },
  CompactionRequest: { revision: "int64", physical: "bool" },
  CompactionResponse: { header },
  WatchRequest: {
    request_union: "oneof", create_request: "message", cancel_request: "message", progress_request: "message"
  },
  WatchCreateRequest: {
    key: "bytes", range_end: "bytes", start_revision: "int64", progress_notify: "bool", filters: "repeated enum",
    prev_kv: "bool", watch_id: "int64", fragment: "bool"
  },
  WatchCancelRequest: { watch_id: "int64" },
  WatchProgressRequest: {},
  WatchResponse: {
    header, watch_id: "int64", created: "bool", canceled: "bool", compact_revision: "int64",
    cancel_reason: "string", fragment: "bool", events: "repeated message"
  },
  LeaseGrantRequest: { TTL: "int64", ID: "int64" },
  LeaseGrantResponse: { header, ID: "int64", TTL: "int64", error: "string" },
  LeaseRevokeRequest: { ID: "int64" },
  LeaseRevokeResponse: { header },
  LeaseKeepAliveRequest: { ID: "int64" },
  LeaseKeepAliveResponse: { header, ID: "int64", TTL: "int64" },
  LeaseTimeToLiveRequest: { ID: "int64", keys: "bool" },
  LeaseTimeToLiveResponse: { header, ID: "int64", TTL: "int64", grantedTTL: "int64", keys: "repeated bytes" },
  LeaseLeasesRequest: {},
  LeaseStatus: { ID: "int64" },
  LeaseLeasesResponse: { header, leases: "repeated message" },
  Member: { ID: "uint64", name: "string", peerURLs: "repeated string", clientURLs: "repeated string", isLearner: "bool" },
  MemberListRequest: { linearizable: "bool" },
  MemberListResponse: { header, members: "repeated message" },
  StatusRequest: {},
  StatusResponse: {
    header, version: "string", dbSize: "int64", leader: "uint64", raftIndex: "uint64", raftTerm: "uint64",
    raftAppliedIndex: "uint64", errors: "repeated string", dbSizeInUse: "int64", isLearner: "bool",
    storageVersion: "string", dbSizeQuota: "int64", downgradeInfo: "message"
  },
  DowngradeInfo: { enabled: "bool", targetVersion: "string" }
} as const satisfies MessageKinds
