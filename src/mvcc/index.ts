/** The revisioned key-value store: its contract (`MvccStore`), records, and the store's layers. */
export * from "./key-value.js"
export * from "./kv.js"
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
export { failOnFatal, Fatal, type FatalShape, LoopDied, supervised } from "./fatal.js"
export { RecoveryError } from "./recovery-error.js"
