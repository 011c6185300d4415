/**
 * The legacy etcd2 storage (seed 001): an etcd v2 keys client, the etcd2-era watcher and a minimal
 * storage.Interface over v2, for an etcd started with `--enable-v2=true`.
 *
 * @module
 */
export {
  CompareFailed,
  ECODE_EVENT_INDEX_CLEARED,
  ECODE_KEY_NOT_FOUND,
  ECODE_NODE_EXIST,
  ECODE_NOT_FILE,
  ECODE_TEST_FAILED,
  EventIndexCleared,
  KeyNotFound,
  type KeysError,
  NodeExist,
  type V2CodeError,
  V2Error,
  V2ErrorBody,
  V2ResponseError,
  V2TransportError
} from "./errors.js"
export { type Action, Node, type Response, ResponseBody } from "./node.js"
export {
  KeysClient,
  type KeysClientConfig,
  type KeysClientShape,
  layer as keysClientLayer,
  layerFetch as keysClientLayerFetch,
  make as makeKeysClient
} from "./keys-client.js"
export {
  HighWaterMark,
  incomingHighWaterMarkGauge,
  outgoingHighWaterMarkGauge,
  type WatcherMarks
} from "./high-water-mark.js"
// the watcher's parts (translate, etcdWatch, the buffer sizes, …) are internal: import them by file path
export { etcdWatcher, type EtcdWatcherDeps, exceptKey, type IncludeFunc } from "./etcd-watcher.js"
export { Etcd2Store, type Etcd2StoreConfig } from "./store.js"
