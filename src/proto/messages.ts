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
export interface Decoded extends Repr {
  readonly i64: string
  readonly u64: string
  readonly bytes: Buffer
}
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

export const EventType = { PUT: 0, DELETE: 1 } as const
export type EventType = (typeof EventType)[keyof typeof EventType]
export const SortOrder = { NONE: 0, ASCEND: 1, DESCEND: 2 } as const
export type SortOrder = (typeof SortOrder)[keyof typeof SortOrder]
export const SortTarget = { KEY: 0, VERSION: 1, CREATE: 2, MOD: 3, VALUE: 4 } as const
export type SortTarget = (typeof SortTarget)[keyof typeof SortTarget]
export const CompareResult = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const
export type CompareResult = (typeof CompareResult)[keyof typeof CompareResult]
export const CompareTarget = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3, LEASE: 4 } as const
export type CompareTarget = (typeof CompareTarget)[keyof typeof CompareTarget]
export const FilterType = { NOPUT: 0, NODELETE: 1 } as const
export type FilterType = (typeof FilterType)[keyof typeof FilterType]

// ---- mvccpb ----

export interface KeyValueOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly create_revision: W["i64"]
  readonly mod_revision: W["i64"]
  readonly version: W["i64"]
  readonly value: W["bytes"]
  readonly lease: W["i64"]
}
export interface EventOf<W extends Repr> {
  readonly type: EventType
  readonly kv: KeyValueOf<W> | null
  readonly prev_kv: KeyValueOf<W> | null
}

// ---- etcdserverpb: KV ----

export interface ResponseHeaderOf<W extends Repr> {
  readonly cluster_id: W["u64"]
  readonly member_id: W["u64"]
  readonly revision: W["i64"]
  readonly raft_term: W["u64"]
}
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
export interface RangeResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly kvs: ReadonlyArray<KeyValueOf<W>>
  readonly more: boolean
  readonly count: W["i64"]
}
export interface PutRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly value: W["bytes"]
  readonly lease: W["i64"]
  readonly prev_kv: boolean
  readonly ignore_value: boolean
  readonly ignore_lease: boolean
}
export interface PutResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly prev_kv: KeyValueOf<W> | null
}
export interface DeleteRangeRequestOf<W extends Repr> {
  readonly key: W["bytes"]
  readonly range_end: W["bytes"]
  readonly prev_kv: boolean
}
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
export type ResponseOpOf<W extends Repr> =
  | { readonly response: "response_range"; readonly response_range: RangeResponseOf<W> }
  | { readonly response: "response_put"; readonly response_put: PutResponseOf<W> }
  | { readonly response: "response_delete_range"; readonly response_delete_range: DeleteRangeResponseOf<W> }
  | { readonly response: "response_txn"; readonly response_txn: TxnResponseOf<W> }
  | { readonly response?: undefined }
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
export interface TxnRequestOf<W extends Repr> {
  readonly compare: ReadonlyArray<CompareOf<W>>
  readonly success: ReadonlyArray<RequestOpOf<W>>
  readonly failure: ReadonlyArray<RequestOpOf<W>>
}
export interface TxnResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly succeeded: boolean
  readonly responses: ReadonlyArray<ResponseOpOf<W>>
}
export interface CompactionRequestOf<W extends Repr> {
  readonly revision: W["i64"]
  readonly physical: boolean
}
export interface CompactionResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
}

// ---- Watch ----

export type WatchRequestOf<W extends Repr> =
  | { readonly request_union: "create_request"; readonly create_request: WatchCreateRequestOf<W> }
  | { readonly request_union: "cancel_request"; readonly cancel_request: WatchCancelRequestOf<W> }
  | { readonly request_union: "progress_request"; readonly progress_request: WatchProgressRequest }
  | { readonly request_union?: undefined }
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
export interface WatchCancelRequestOf<W extends Repr> {
  readonly watch_id: W["i64"]
}
export interface WatchProgressRequest {}
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

export interface LeaseGrantRequestOf<W extends Repr> {
  readonly TTL: W["i64"]
  readonly ID: W["i64"]
}
export interface LeaseGrantResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
  readonly error: string
}
export interface LeaseRevokeRequestOf<W extends Repr> {
  readonly ID: W["i64"]
}
export interface LeaseRevokeResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
}
export interface LeaseKeepAliveRequestOf<W extends Repr> {
  readonly ID: W["i64"]
}
export interface LeaseKeepAliveResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
}
export interface LeaseTimeToLiveRequestOf<W extends Repr> {
  readonly ID: W["i64"]
  readonly keys: boolean
}
export interface LeaseTimeToLiveResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly ID: W["i64"]
  readonly TTL: W["i64"]
  readonly grantedTTL: W["i64"]
  readonly keys: ReadonlyArray<W["bytes"]>
}
export interface LeaseLeasesRequest {}
export interface LeaseStatusOf<W extends Repr> {
  readonly ID: W["i64"]
}
export interface LeaseLeasesResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly leases: ReadonlyArray<LeaseStatusOf<W>>
}

// ---- Cluster / Maintenance (what the server answers) ----

export interface MemberOf<W extends Repr> {
  readonly ID: W["u64"]
  readonly name: string
  readonly peerURLs: ReadonlyArray<string>
  readonly clientURLs: ReadonlyArray<string>
  readonly isLearner: boolean
}
export interface MemberListRequest {
  readonly linearizable: boolean
}
export interface MemberListResponseOf<W extends Repr> {
  readonly header: ResponseHeaderOf<W> | null
  readonly members: ReadonlyArray<MemberOf<W>>
}
export interface StatusRequest {}
export interface DowngradeInfo {
  readonly enabled: boolean
  readonly targetVersion: string
}
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
export type MessageName = keyof Messages<Decoded>
/** The decoded shape of a message. */
export type Decode<N extends MessageName> = Messages<Decoded>[N]
/** The encodable (input) shape of a message. */
export type Encode<N extends MessageName> = Init<Messages<Encodable>[N]>

export type KeyValue = Decode<"mvccpb.KeyValue">
export type KeyValueInit = Encode<"mvccpb.KeyValue">
export type Event = Decode<"mvccpb.Event">
export type EventInit = Encode<"mvccpb.Event">
export type ResponseHeader = Decode<"ResponseHeader">
export type ResponseHeaderInit = Encode<"ResponseHeader">
export type RangeRequest = Decode<"RangeRequest">
export type RangeRequestInit = Encode<"RangeRequest">
export type RangeResponse = Decode<"RangeResponse">
export type RangeResponseInit = Encode<"RangeResponse">
export type PutRequest = Decode<"PutRequest">
export type PutRequestInit = Encode<"PutRequest">
export type PutResponse = Decode<"PutResponse">
export type PutResponseInit = Encode<"PutResponse">
export type DeleteRangeRequest = Decode<"DeleteRangeRequest">
export type DeleteRangeRequestInit = Encode<"DeleteRangeRequest">
export type DeleteRangeResponse = Decode<"DeleteRangeResponse">
export type DeleteRangeResponseInit = Encode<"DeleteRangeResponse">
export type RequestOp = Decode<"RequestOp">
export type RequestOpInit = Encode<"RequestOp">
export type ResponseOp = Decode<"ResponseOp">
export type ResponseOpInit = Encode<"ResponseOp">
export type Compare = Decode<"Compare">
export type CompareInit = Encode<"Compare">
export type TxnRequest = Decode<"TxnRequest">
export type TxnRequestInit = Encode<"TxnRequest">
export type TxnResponse = Decode<"TxnResponse">
export type TxnResponseInit = Encode<"TxnResponse">
export type CompactionRequest = Decode<"CompactionRequest">
export type CompactionRequestInit = Encode<"CompactionRequest">
export type CompactionResponse = Decode<"CompactionResponse">
export type CompactionResponseInit = Encode<"CompactionResponse">
export type WatchRequest = Decode<"WatchRequest">
export type WatchRequestInit = Encode<"WatchRequest">
export type WatchCreateRequest = Decode<"WatchCreateRequest">
export type WatchCreateRequestInit = Encode<"WatchCreateRequest">
export type WatchCancelRequest = Decode<"WatchCancelRequest">
export type WatchCancelRequestInit = Encode<"WatchCancelRequest">
export type WatchResponse = Decode<"WatchResponse">
export type WatchResponseInit = Encode<"WatchResponse">
export type LeaseGrantRequest = Decode<"LeaseGrantRequest">
export type LeaseGrantRequestInit = Encode<"LeaseGrantRequest">
export type LeaseGrantResponse = Decode<"LeaseGrantResponse">
export type LeaseGrantResponseInit = Encode<"LeaseGrantResponse">
export type LeaseRevokeRequest = Decode<"LeaseRevokeRequest">
export type LeaseRevokeRequestInit = Encode<"LeaseRevokeRequest">
export type LeaseRevokeResponse = Decode<"LeaseRevokeResponse">
export type LeaseRevokeResponseInit = Encode<"LeaseRevokeResponse">
export type LeaseKeepAliveRequest = Decode<"LeaseKeepAliveRequest">
export type LeaseKeepAliveRequestInit = Encode<"LeaseKeepAliveRequest">
export type LeaseKeepAliveResponse = Decode<"LeaseKeepAliveResponse">
export type LeaseKeepAliveResponseInit = Encode<"LeaseKeepAliveResponse">
export type LeaseTimeToLiveRequest = Decode<"LeaseTimeToLiveRequest">
export type LeaseTimeToLiveRequestInit = Encode<"LeaseTimeToLiveRequest">
export type LeaseTimeToLiveResponse = Decode<"LeaseTimeToLiveResponse">
export type LeaseTimeToLiveResponseInit = Encode<"LeaseTimeToLiveResponse">
export type LeaseStatus = Decode<"LeaseStatus">
export type LeaseLeasesResponse = Decode<"LeaseLeasesResponse">
export type LeaseLeasesResponseInit = Encode<"LeaseLeasesResponse">
export type Member = Decode<"Member">
export type MemberInit = Encode<"Member">
export type MemberListResponse = Decode<"MemberListResponse">
export type MemberListResponseInit = Encode<"MemberListResponse">
export type StatusResponse = Decode<"StatusResponse">
export type StatusResponseInit = Encode<"StatusResponse">
