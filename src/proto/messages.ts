/**
 * TypeScript shapes of the etcd v3 messages as they cross @grpc/proto-loader with the options in
 * ./load.ts (keepCase, longs: String, enums: Number, bytes: Buffer, defaults, oneofs).
 *
 * Each message is written once, generic over how scalars are represented (`Repr`):
 * - `Decoded`: what a handler receives as a request and a client receives as a response. Every scalar
 *   and repeated field is present (defaults: true); an unset sub-message is `null`; of a oneof only the
 *   set member is present, named by the oneof's virtual field (e.g. `request: "request_put"`).
 *   int64/uint64 arrive as decimal strings: lease ids and member ids exceed 2^53.
 * - `Encodable`, wrapped in `Init<…>`: what may be handed to grpc-js to encode. Every field is
 *   optional; int64 accepts string | number | bigint (protobufjs' Long.fromValue handles all three).
 *   Bytes are Uint8Array only: protobufjs would read a string as base64, a trap for keys.
 *
 * `X` is the decoded shape, `XInit` the encodable one. Only the messages the server and client use
 * are typed here; the rest still load and travel untyped.
 */

/** How int64, uint64 and bytes look on one side of the codec. */
export interface Repr {
  readonly i64: unknown
  readonly u64: unknown
  readonly bytes: unknown
}
/** Scalars as a decoded message holds them: int64 and uint64 as decimal strings, bytes as Buffer. */
export interface Decoded extends Repr {
  readonly i64: string
  readonly u64: string
  readonly bytes: Buffer
}
/** Scalars as grpc-js may be handed them to encode: int64 and uint64 as string, number or bigint, bytes as Uint8Array. */
export interface Encodable extends Repr {
  readonly i64: string | number | bigint
  readonly u64: string | number | bigint
  readonly bytes: Uint8Array
}

type Scalar = string | number | bigint | boolean | Uint8Array
/** Deep-optional input form: any field may be omitted, null or undefined. */
export type Init<T> = T extends Scalar ? T
  : T extends ReadonlyArray<infer E> ? ReadonlyArray<Init<E>>
  : { readonly [K in keyof T]?: Init<NonNullable<T[K]>> | null | undefined }

// ---- enums (numbers on the wire and in both shapes; same values as src/mvcc) ----

/** mvccpb.Event.EventType: PUT (0) or DELETE (1). */
export const EventType = { PUT: 0, DELETE: 1 } as const
/** One of the values of `EventType`. */
export type EventType = (typeof EventType)[keyof typeof EventType]
/** RangeRequest.SortOrder: NONE (0), ASCEND (1) or DESCEND (2). */
export const SortOrder = { NONE: 0, ASCEND: 1, DESCEND: 2 } as const
/** One of the values of `SortOrder`. */
export type SortOrder = (typeof SortOrder)[keyof typeof SortOrder]
/** RangeRequest.SortTarget: the field a range is sorted by (KEY, VERSION, CREATE, MOD, VALUE). */
export const SortTarget = { KEY: 0, VERSION: 1, CREATE: 2, MOD: 3, VALUE: 4 } as const
/** One of the values of `SortTarget`. */
export type SortTarget = (typeof SortTarget)[keyof typeof SortTarget]
/** Compare.CompareResult: how a txn compare tests its target (EQUAL, GREATER, LESS, NOT_EQUAL). */
export const CompareResult = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const
/** One of the values of `CompareResult`. */
export type CompareResult = (typeof CompareResult)[keyof typeof CompareResult]
/** Compare.CompareTarget: what a txn compare reads (VERSION, CREATE, MOD, VALUE, LEASE). */
export const CompareTarget = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3, LEASE: 4 } as const
/** One of the values of `CompareTarget`. */
export type CompareTarget = (typeof CompareTarget)[keyof typeof CompareTarget]
/** WatchCreateRequest.FilterType: the events a watch leaves out (NOPUT, NODELETE). */
export const FilterType = { NOPUT: 0, NODELETE: 1 } as const
/** One of the values of `FilterType`. */
export type FilterType = (typeof FilterType)[keyof typeof FilterType]

// ---- mvccpb ----

/** `mvccpb.KeyValue`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface KeyValueOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly create_revision: W["i64"]
  readonly mod_revision: W["i64"]
  readonly version: W["i64"]
  readonly value: W["bytes"]
  readonly lease: W["i64"]
}
/** `mvccpb.Event`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface EventOf<W extends Repr> {
  readonly type: EventType
  readonly kv: KeyValueOf<W> | null
  readonly prev_kv: KeyValueOf<W> | null
}

// ---- etcdserverpb: KV ----

/** `etcdserverpb.ResponseHeader`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface ResponseHeaderOf<W extends Repr> {
  readonly cluster_id: W["u64"]
  readonly member_id: W["u64"]
  readonly revision: W["i64"]
  readonly raft_term: W["u64"]
}
/** `etcdserverpb.RangeRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface RangeRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly range_end: W["bytes"]
  readonly limit: W["i64"]
  readonly revision: W["i64"]
  readonly sort_order: SortOrder
  readonly sort_target: SortTarget
  readonly serializable: boolean
  readonly keys_only: boolean
  readonly count_only: boolean
  readonly min_mod_revision: W["i64"]
  readonly max_mod_revision: W["i64"]
  readonly min_create_revision: W["i64"]
  readonly max_create_revision: W["i64"]
}
/** `etcdserverpb.RangeResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface RangeResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly kvs: ReadonlyArray<KeyValueOf<W>>
  readonly more: boolean
  readonly count: W["i64"]
}
/** `etcdserverpb.PutRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface PutRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly value: W["bytes"]
  readonly lease: W["i64"]
  readonly prev_kv: boolean
  readonly ignore_value: boolean
  readonly ignore_lease: boolean
}
/** `etcdserverpb.PutResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface PutResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly prev_kv: KeyValueOf<W> | null
}
/** `etcdserverpb.DeleteRangeRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface DeleteRangeRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly range_end: W["bytes"]
  readonly prev_kv: boolean
}
/** `etcdserverpb.DeleteRangeResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface DeleteRangeResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly deleted: W["i64"]
  readonly prev_kvs: ReadonlyArray<KeyValueOf<W>>
}
/** oneof request; `{ request?: undefined }` is an op with no member set */
export type RequestOpOf<W extends Repr> =
  | { readonly request: "request_range"; readonly request_range: RangeRequestOf<W> }
  | { readonly request: "request_put"; readonly request_put: PutRequestOf<W> }
  | { readonly request: "request_delete_range"; readonly request_delete_range: DeleteRangeRequestOf<W> }
  | { readonly request: "request_txn"; readonly request_txn: TxnRequestOf<W> }
  | { readonly request?: undefined }
/** `etcdserverpb.ResponseOp`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export type ResponseOpOf<W extends Repr> =
  | { readonly response: "response_range"; readonly response_range: RangeResponseOf<W> }
  | { readonly response: "response_put"; readonly response_put: PutResponseOf<W> }
  | { readonly response: "response_delete_range"; readonly response_delete_range: DeleteRangeResponseOf<W> }
  | { readonly response: "response_txn"; readonly response_txn: TxnResponseOf<W> }
  | { readonly response?: undefined }
/** `etcdserverpb.Compare`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export type CompareOf<W extends Repr> =
  & {
    readonly result: CompareResult
    readonly target: CompareTarget
    readonly key: W["bytes"]
    readonly range_end: W["bytes"]
  }
  & (
    | { readonly target_union: "version"; readonly version: W["i64"] }
    | { readonly target_union: "create_revision"; readonly create_revision: W["i64"] }
    | { readonly target_union: "mod_revision"; readonly mod_revision: W["i64"] }
    | { readonly target_union: "value"; readonly value: W["bytes"] }
    | { readonly target_union: "lease"; readonly lease: W["i64"] }
    | { readonly target_union?: undefined }
  )
/** `etcdserverpb.TxnRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface TxnRequestOf<W extends Repr> {
  readonly compare: ReadonlyArray<CompareOf<W>>
  readonly success: ReadonlyArray<RequestOpOf<W>>
  readonly failure: ReadonlyArray<RequestOpOf<W>>
}
/** `etcdserverpb.TxnResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface TxnResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly succeeded: boolean
  readonly responses: ReadonlyArray<ResponseOpOf<W>>
}
/** `etcdserverpb.CompactionRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface CompactionRequestOf<W extends Repr> {
  readonly revision: W["i64"]
  readonly physical: boolean
}
/** `etcdserverpb.CompactionResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface CompactionResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
}

// ---- Watch ----

/** `etcdserverpb.WatchRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export type WatchRequestOf<W extends Repr> =
  | { readonly request_union: "create_request"; readonly create_request: WatchCreateRequestOf<W> }
  | { readonly request_union: "cancel_request"; readonly cancel_request: WatchCancelRequestOf<W> }
  | { readonly request_union: "progress_request"; readonly progress_request: WatchProgressRequest }
  | { readonly request_union?: undefined }
/** `etcdserverpb.WatchCreateRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface WatchCreateRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly range_end: W["bytes"]
  readonly start_revision: W["i64"]
  readonly progress_notify: boolean
  readonly filters: ReadonlyArray<FilterType>
  readonly prev_kv: boolean
  readonly watch_id: W["i64"]
  readonly fragment: boolean
}
/** `etcdserverpb.WatchCancelRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface WatchCancelRequestOf<W extends Repr> {
  readonly watch_id: W["i64"]
}
/** etcdserverpb.WatchProgressRequest: asks the server for a progress notification (no fields). */
export interface WatchProgressRequest {}
/** `etcdserverpb.WatchResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface WatchResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly watch_id: W["i64"]
  readonly created: boolean
  readonly canceled: boolean
  readonly compact_revision: W["i64"]
  readonly cancel_reason: string
  readonly fragment: boolean
  readonly events: ReadonlyArray<EventOf<W>>
}

// ---- Lease ----

/** `etcdserverpb.LeaseGrantRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseGrantRequestOf<W extends Repr> {
  readonly TTL: W["i64"]
  readonly ID: W["i64"]
}
/** `etcdserverpb.LeaseGrantResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseGrantResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
  readonly error: string
}
/** `etcdserverpb.LeaseRevokeRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseRevokeRequestOf<W extends Repr> {
  readonly ID: W["i64"]
}
/** `etcdserverpb.LeaseRevokeResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseRevokeResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
}
/** `etcdserverpb.LeaseKeepAliveRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseKeepAliveRequestOf<W extends Repr> {
  readonly ID: W["i64"]
}
/** `etcdserverpb.LeaseKeepAliveResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseKeepAliveResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
}
/** `etcdserverpb.LeaseTimeToLiveRequest`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseTimeToLiveRequestOf<W extends Repr> {
  readonly ID: W["i64"]
  readonly keys: boolean
}
/** `etcdserverpb.LeaseTimeToLiveResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseTimeToLiveResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
  readonly grantedTTL: W["i64"]
  readonly keys: ReadonlyArray<W["bytes"]>
}
/** etcdserverpb.LeaseLeasesRequest: lists every lease (no fields). */
export interface LeaseLeasesRequest {}
/** `etcdserverpb.LeaseStatus`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseStatusOf<W extends Repr> {
  readonly ID: W["i64"]
}
/** `etcdserverpb.LeaseLeasesResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface LeaseLeasesResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly leases: ReadonlyArray<LeaseStatusOf<W>>
}

// ---- Cluster / Maintenance (what the server answers) ----

/** `etcdserverpb.Member`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface MemberOf<W extends Repr> {
  readonly ID: W["u64"]
  readonly name: string
  readonly peerURLs: ReadonlyArray<string>
  readonly clientURLs: ReadonlyArray<string>
  readonly isLearner: boolean
}
/** etcdserverpb.MemberListRequest: lists the cluster's members. */
export interface MemberListRequest {
  readonly linearizable: boolean
}
/** `etcdserverpb.MemberListResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface MemberListResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly members: ReadonlyArray<MemberOf<W>>
}
/** etcdserverpb.StatusRequest: asks a member for its status (no fields). */
export interface StatusRequest {}
/** etcdserverpb.DowngradeInfo (etcd 3.6's StatusResponse): whether a downgrade is on and to which version. */
export interface DowngradeInfo {
  readonly enabled: boolean
  readonly targetVersion: string
}
/** `etcdserverpb.StatusResponse`'s fields, generic over how scalars are represented (`Decoded` or `Encodable`). */
export interface StatusResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly version: string
  readonly dbSize: W["i64"]
  readonly leader: W["u64"]
  readonly raftIndex: W["u64"]
  readonly raftTerm: W["u64"]
  readonly raftAppliedIndex: W["u64"]
  readonly errors: ReadonlyArray<string>
  readonly dbSizeInUse: W["i64"]
  readonly isLearner: boolean
  readonly storageVersion: string
  readonly dbSizeQuota: W["i64"]
  readonly downgradeInfo: DowngradeInfo | null
}

/** Every key of any member of a union (a oneof's members live in different members). */
export type AllKeys<T> = T extends unknown ? keyof T : never
/** The type of key K across the members of a union that have it. */
export type FieldType<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never

/** Every typed message by its proto name (without package), in both shapes. */
export interface Messages<W extends Repr> {
  readonly "mvccpb.KeyValue": KeyValueOf<W>
  readonly "mvccpb.Event": EventOf<W>
  readonly ResponseHeader: ResponseHeaderOf<W>
  readonly RangeRequest: RangeRequestOf<W>
  readonly RangeResponse: RangeResponseOf<W>
  readonly PutRequest: PutRequestOf<W>
  readonly PutResponse: PutResponseOf<W>
  readonly DeleteRangeRequest: DeleteRangeRequestOf<W>
  readonly DeleteRangeResponse: DeleteRangeResponseOf<W>
  readonly RequestOp: RequestOpOf<W>
  readonly ResponseOp: ResponseOpOf<W>
  readonly Compare: CompareOf<W>
  readonly TxnRequest: TxnRequestOf<W>
  readonly TxnResponse: TxnResponseOf<W>
  readonly CompactionRequest: CompactionRequestOf<W>
  readonly CompactionResponse: CompactionResponseOf<W>
  readonly WatchRequest: WatchRequestOf<W>
  readonly WatchCreateRequest: WatchCreateRequestOf<W>
  readonly WatchCancelRequest: WatchCancelRequestOf<W>
  readonly WatchProgressRequest: WatchProgressRequest
  readonly WatchResponse: WatchResponseOf<W>
  readonly LeaseGrantRequest: LeaseGrantRequestOf<W>
  readonly LeaseGrantResponse: LeaseGrantResponseOf<W>
  readonly LeaseRevokeRequest: LeaseRevokeRequestOf<W>
  readonly LeaseRevokeResponse: LeaseRevokeResponseOf<W>
  readonly LeaseKeepAliveRequest: LeaseKeepAliveRequestOf<W>
  readonly LeaseKeepAliveResponse: LeaseKeepAliveResponseOf<W>
  readonly LeaseTimeToLiveRequest: LeaseTimeToLiveRequestOf<W>
  readonly LeaseTimeToLiveResponse: LeaseTimeToLiveResponseOf<W>
  readonly LeaseLeasesRequest: LeaseLeasesRequest
  readonly LeaseStatus: LeaseStatusOf<W>
  readonly LeaseLeasesResponse: LeaseLeasesResponseOf<W>
  readonly Member: MemberOf<W>
  readonly MemberListRequest: MemberListRequest
  readonly MemberListResponse: MemberListResponseOf<W>
  readonly StatusRequest: StatusRequest
  readonly StatusResponse: StatusResponseOf<W>
  readonly DowngradeInfo: DowngradeInfo
}
/** The proto names of the typed messages (`"PutRequest"`, `"mvccpb.KeyValue"`, …). */
export type MessageName = keyof Messages<Decoded>
/** The decoded shape of a message. */
export type Decode<N extends MessageName> = Messages<Decoded>[N]
/** The encodable (input) shape of a message. */
export type Encode<N extends MessageName> = Init<Messages<Encodable>[N]>

/** `mvccpb.KeyValue` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type KeyValue = Decode<"mvccpb.KeyValue">
/** `mvccpb.KeyValue` as a caller builds it for encoding: every field optional (`Encode`). */
export type KeyValueInit = Encode<"mvccpb.KeyValue">
/** `mvccpb.Event` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type Event = Decode<"mvccpb.Event">
/** `mvccpb.Event` as a caller builds it for encoding: every field optional (`Encode`). */
export type EventInit = Encode<"mvccpb.Event">
/** `etcdserverpb.ResponseHeader` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type ResponseHeader = Decode<"ResponseHeader">
/** `etcdserverpb.ResponseHeader` as a caller builds it for encoding: every field optional (`Encode`). */
export type ResponseHeaderInit = Encode<"ResponseHeader">
/** `etcdserverpb.RangeRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type RangeRequest = Decode<"RangeRequest">
/** `etcdserverpb.RangeRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type RangeRequestInit = Encode<"RangeRequest">
/** `etcdserverpb.RangeResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type RangeResponse = Decode<"RangeResponse">
/** `etcdserverpb.RangeResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type RangeResponseInit = Encode<"RangeResponse">
/** `etcdserverpb.PutRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type PutRequest = Decode<"PutRequest">
/** `etcdserverpb.PutRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type PutRequestInit = Encode<"PutRequest">
/** `etcdserverpb.PutResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type PutResponse = Decode<"PutResponse">
/** `etcdserverpb.PutResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type PutResponseInit = Encode<"PutResponse">
/** `etcdserverpb.DeleteRangeRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type DeleteRangeRequest = Decode<"DeleteRangeRequest">
/** `etcdserverpb.DeleteRangeRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type DeleteRangeRequestInit = Encode<"DeleteRangeRequest">
/** `etcdserverpb.DeleteRangeResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type DeleteRangeResponse = Decode<"DeleteRangeResponse">
/** `etcdserverpb.DeleteRangeResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type DeleteRangeResponseInit = Encode<"DeleteRangeResponse">
/** `etcdserverpb.RequestOp` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type RequestOp = Decode<"RequestOp">
/** `etcdserverpb.RequestOp` as a caller builds it for encoding: every field optional (`Encode`). */
export type RequestOpInit = Encode<"RequestOp">
/** `etcdserverpb.ResponseOp` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type ResponseOp = Decode<"ResponseOp">
/** `etcdserverpb.ResponseOp` as a caller builds it for encoding: every field optional (`Encode`). */
export type ResponseOpInit = Encode<"ResponseOp">
/** `etcdserverpb.Compare` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type Compare = Decode<"Compare">
/** `etcdserverpb.Compare` as a caller builds it for encoding: every field optional (`Encode`). */
export type CompareInit = Encode<"Compare">
/** `etcdserverpb.TxnRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type TxnRequest = Decode<"TxnRequest">
/** `etcdserverpb.TxnRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type TxnRequestInit = Encode<"TxnRequest">
/** `etcdserverpb.TxnResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type TxnResponse = Decode<"TxnResponse">
/** `etcdserverpb.TxnResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type TxnResponseInit = Encode<"TxnResponse">
/** `etcdserverpb.CompactionRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type CompactionRequest = Decode<"CompactionRequest">
/** `etcdserverpb.CompactionRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type CompactionRequestInit = Encode<"CompactionRequest">
/** `etcdserverpb.CompactionResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type CompactionResponse = Decode<"CompactionResponse">
/** `etcdserverpb.CompactionResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type CompactionResponseInit = Encode<"CompactionResponse">
/** `etcdserverpb.WatchRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type WatchRequest = Decode<"WatchRequest">
/** `etcdserverpb.WatchRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type WatchRequestInit = Encode<"WatchRequest">
/** `etcdserverpb.WatchCreateRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type WatchCreateRequest = Decode<"WatchCreateRequest">
/** `etcdserverpb.WatchCreateRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type WatchCreateRequestInit = Encode<"WatchCreateRequest">
/** `etcdserverpb.WatchCancelRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type WatchCancelRequest = Decode<"WatchCancelRequest">
/** `etcdserverpb.WatchCancelRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type WatchCancelRequestInit = Encode<"WatchCancelRequest">
/** `etcdserverpb.WatchResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type WatchResponse = Decode<"WatchResponse">
/** `etcdserverpb.WatchResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type WatchResponseInit = Encode<"WatchResponse">
/** `etcdserverpb.LeaseGrantRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseGrantRequest = Decode<"LeaseGrantRequest">
/** `etcdserverpb.LeaseGrantRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseGrantRequestInit = Encode<"LeaseGrantRequest">
/** `etcdserverpb.LeaseGrantResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseGrantResponse = Decode<"LeaseGrantResponse">
/** `etcdserverpb.LeaseGrantResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseGrantResponseInit = Encode<"LeaseGrantResponse">
/** `etcdserverpb.LeaseRevokeRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseRevokeRequest = Decode<"LeaseRevokeRequest">
/** `etcdserverpb.LeaseRevokeRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseRevokeRequestInit = Encode<"LeaseRevokeRequest">
/** `etcdserverpb.LeaseRevokeResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseRevokeResponse = Decode<"LeaseRevokeResponse">
/** `etcdserverpb.LeaseRevokeResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseRevokeResponseInit = Encode<"LeaseRevokeResponse">
/** `etcdserverpb.LeaseKeepAliveRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseKeepAliveRequest = Decode<"LeaseKeepAliveRequest">
/** `etcdserverpb.LeaseKeepAliveRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseKeepAliveRequestInit = Encode<"LeaseKeepAliveRequest">
/** `etcdserverpb.LeaseKeepAliveResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseKeepAliveResponse = Decode<"LeaseKeepAliveResponse">
/** `etcdserverpb.LeaseKeepAliveResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseKeepAliveResponseInit = Encode<"LeaseKeepAliveResponse">
/** `etcdserverpb.LeaseTimeToLiveRequest` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseTimeToLiveRequest = Decode<"LeaseTimeToLiveRequest">
/** `etcdserverpb.LeaseTimeToLiveRequest` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseTimeToLiveRequestInit = Encode<"LeaseTimeToLiveRequest">
/** `etcdserverpb.LeaseTimeToLiveResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseTimeToLiveResponse = Decode<"LeaseTimeToLiveResponse">
/** `etcdserverpb.LeaseTimeToLiveResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseTimeToLiveResponseInit = Encode<"LeaseTimeToLiveResponse">
/** `etcdserverpb.LeaseStatus` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseStatus = Decode<"LeaseStatus">
/** `etcdserverpb.LeaseLeasesResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type LeaseLeasesResponse = Decode<"LeaseLeasesResponse">
/** `etcdserverpb.LeaseLeasesResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type LeaseLeasesResponseInit = Encode<"LeaseLeasesResponse">
/** `etcdserverpb.Member` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type Member = Decode<"Member">
/** `etcdserverpb.Member` as a caller builds it for encoding: every field optional (`Encode`). */
export type MemberInit = Encode<"Member">
/** `etcdserverpb.MemberListResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type MemberListResponse = Decode<"MemberListResponse">
/** `etcdserverpb.MemberListResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type MemberListResponseInit = Encode<"MemberListResponse">
/** `etcdserverpb.StatusResponse` as decoded: every field present, int64s as decimal strings (`Decode`). */
export type StatusResponse = Decode<"StatusResponse">
/** `etcdserverpb.StatusResponse` as a caller builds it for encoding: every field optional (`Encode`). */
export type StatusResponseInit = Encode<"StatusResponse">
