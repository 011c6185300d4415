/**
 * Every hand-written protobuf encoder and decoder of the tree, with the fields of each message it
 * handles and the ones it leaves (to protobufjs, or unread by design) with the reason. The guard
 * (hand-codec-fields.test.ts) fails when a message of the loaded proto Root has a field that an
 * entry neither handles nor leaves — a field added to the .proto that a hand codec would drop
 * silently — as etcd guards its one hand copy with TestWatchResponseProtoFieldCount.
 */
export interface HandCodec {
  /** where the code is, e.g. "server/kv-wire.ts rangeResponseSerializer" */
  readonly codec: string
  /** fully qualified message name */
  readonly message: string
  readonly handles: ReadonlyArray<string>
  /** field → why this codec does not handle it */
  readonly leaves?: Readonly<Record<string, string>>
}

const HEADER = ["cluster_id", "member_id", "revision", "raft_term"]
const KEY_VALUE = ["key", "create_revision", "mod_revision", "version", "value", "lease"]
const BENCH = "bench scanners read what the load generator counts and skip the rest by length"

export const handCodecs: ReadonlyArray<HandCodec> = [
  // server: responses written without protobufjs
  { codec: "server/kv-wire.ts headerBytes", message: "etcdserverpb.ResponseHeader", handles: HEADER },
  { codec: "server/kv-wire.ts keyValuePlan", message: "mvccpb.KeyValue", handles: KEY_VALUE },
  {
    codec: "server/kv-wire.ts rangeResponseSerializer",
    message: "etcdserverpb.RangeResponse",
    handles: ["header", "kvs", "more", "count"]
  },
  { codec: "server/watch-wire.ts encodeHeaderField", message: "etcdserverpb.ResponseHeader", handles: HEADER },
  { codec: "mvcc/kv-codec.ts encodeKeyValue (watch-wire's events)", message: "mvccpb.KeyValue", handles: KEY_VALUE },
  { codec: "server/watch-wire.ts encodeEventField", message: "mvccpb.Event", handles: ["type", "kv", "prev_kv"] },
  {
    codec: "server/watch-wire.ts WatchResponseEncoder.response",
    message: "etcdserverpb.WatchResponse",
    handles: ["header", "watch_id", "canceled", "compact_revision", "events"],
    leaves: {
      created: "control responses go through WatchResponseEncoder.object (protobufjs)",
      cancel_reason: "control responses go through WatchResponseEncoder.object (protobufjs)",
      fragment: "fragments go through WatchResponseEncoder.object (protobufjs)"
    }
  },
  // client: the watch stream's codec and the lean CLI path's KV codec
  { codec: "client/watch-codec.ts readHeader", message: "etcdserverpb.ResponseHeader", handles: HEADER },
  { codec: "client/watch-codec.ts readKeyValue", message: "mvccpb.KeyValue", handles: KEY_VALUE },
  { codec: "client/watch-codec.ts readEvent", message: "mvccpb.Event", handles: ["type", "kv", "prev_kv"] },
  {
    codec: "client/watch-codec.ts decodeWatchResponse",
    message: "etcdserverpb.WatchResponse",
    handles: ["header", "watch_id", "created", "canceled", "compact_revision", "cancel_reason", "fragment", "events"]
  },
  {
    codec: "client/watch-codec.ts encodeCreateRequest/encodeCancelRequest/encodeProgressRequest",
    message: "etcdserverpb.WatchRequest",
    handles: ["create_request", "cancel_request", "progress_request"]
  },
  {
    codec: "client/watch-codec.ts encodeCreateRequest",
    message: "etcdserverpb.WatchCreateRequest",
    handles: ["key", "range_end", "start_revision", "progress_notify", "filters", "prev_kv", "fragment"],
    leaves: { watch_id: "the server assigns watch ids; clientv3 never picks one either" }
  },
  { codec: "client/watch-codec.ts encodeCancelRequest", message: "etcdserverpb.WatchCancelRequest", handles: ["watch_id"] },
  {
    codec: "client/lean-kv-codec.ts encodeRange",
    message: "etcdserverpb.RangeRequest",
    handles: ["key", "range_end", "limit", "revision", "sort_order", "sort_target", "serializable", "keys_only", "count_only"],
    leaves: {
      min_mod_revision: "the CLI's get has no --min-mod-revision (nor the lean path)",
      max_mod_revision: "the CLI's get has no --max-mod-revision (nor the lean path)",
      min_create_revision: "the CLI's get has no --min-create-revision (nor the lean path)",
      max_create_revision: "the CLI's get has no --max-create-revision (nor the lean path)"
    }
  },
  {
    codec: "client/lean-kv-codec.ts encodePut",
    message: "etcdserverpb.PutRequest",
    handles: ["key", "value", "lease", "prev_kv", "ignore_value", "ignore_lease"]
  },
  {
    codec: "client/lean-kv-codec.ts encodeDeleteRange",
    message: "etcdserverpb.DeleteRangeRequest",
    handles: ["key", "range_end", "prev_kv"]
  },
  {
    codec: "client/lean-kv-codec.ts decodeRangeResponse",
    message: "etcdserverpb.RangeResponse",
    handles: ["header", "kvs", "more", "count"]
  },
  { codec: "client/lean-kv-codec.ts decodePutResponse", message: "etcdserverpb.PutResponse", handles: ["header", "prev_kv"] },
  {
    codec: "client/lean-kv-codec.ts decodeDeleteRangeResponse",
    message: "etcdserverpb.DeleteRangeResponse",
    handles: ["header", "deleted", "prev_kvs"]
  },
  // bench: shallow scanners, by design
  {
    codec: "bench/watch-scan.ts WatchScanner",
    message: "etcdserverpb.WatchResponse",
    handles: ["header", "watch_id", "created", "canceled", "compact_revision", "cancel_reason", "fragment", "events"]
  },
  {
    codec: "bench/watch-scan.ts headerRevision",
    message: "etcdserverpb.ResponseHeader",
    handles: ["revision"],
    leaves: { cluster_id: BENCH, member_id: BENCH, raft_term: BENCH }
  },
  {
    codec: "bench/watch-scan.ts WatchScanner (events)",
    message: "mvccpb.Event",
    handles: ["kv"],
    leaves: { type: BENCH, prev_kv: BENCH }
  },
  {
    codec: "bench/watch-scan.ts WatchScanner (kv)",
    message: "mvccpb.KeyValue",
    handles: ["mod_revision", "value"],
    leaves: { key: BENCH, create_revision: BENCH, version: BENCH, lease: BENCH }
  },
  {
    codec: "bench/unary-scan.ts responseRevision/rangeKvCount",
    message: "etcdserverpb.RangeResponse",
    handles: ["header", "kvs"],
    leaves: { more: BENCH, count: BENCH }
  }
]
