/**
 * The revisioned key-value store: its contract (`MvccStore`), records, and the store's layers.
 *
 * @module
 */
export { type Event, EventType, isCreate, type KeyValue } from "./key-value.js"
export {
  type CompactResponse,
  type Compare,
  CompareResult,
  CompareTarget,
  type DeleteRangeRequest,
  type DeleteRangeResponse,
  MvccStore,
  type MvccStoreShape,
  type PutRequest,
  type PutResponse,
  type RangeRequest,
  type RangeResponse,
  type RequestOp,
  type ResponseHeader,
  type ResponseOp,
  SortOrder,
  SortTarget,
  type TxnRequest,
  type TxnResponse
} from "./kv.js"
export {
  DEFAULT_COMPACTION_BATCH_LIMIT,
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_MAX_TXN_OPS,
  defaultConfig,
  KvStoreConfig,
  type KvStoreConfigShape,
  layer,
  layerConfig,
  layerDefault
} from "./kvstore.js"
export { compareRevision, type Revision } from "./revision.js"
export { failOnFatal, Fatal, type FatalShape, LoopDied } from "../supervision/fatal.js"
export { RecoveryError } from "./recovery-error.js"
export type { WriteResult } from "./pending-write.js"
