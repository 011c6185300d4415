/**
 * etcd-effect's client: `EtcdClient` (KV, Lease, Maintenance, Watch as a scoped Stream).
 *
 * @module
 */
export { EtcdClient, type EtcdClientOptions, type EtcdClientShape, make } from "./client.js"
export { clientConfigFromEnv, defaultWatchRetrySchedule, type EtcdClientConfig, type TlsOptions } from "./config.js"
export { keyRange, prefixEnd, type RangeOptions } from "./key-range.js"
export {
  EventType,
  isCreate,
  isModify,
  type Event,
  type KeyValue,
  type ResponseHeader,
  toBytes,
  toText
} from "./key-value.js"
export type { CompactOptions, KV, TxnBuilder } from "./kv.js"
export {
  type KeepAlive,
  type Lease,
  type LeaseGrantResult,
  leaseHex,
  type LeaseKeepAliveResult,
  LeaseLost,
  type LeaseTimeToLiveResult
} from "./lease.js"
export type { Maintenance, StatusResult } from "./maintenance.js"
export {
  Compare,
  type Comparison,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  Op,
  type OpResult,
  type PutOptions,
  type PutResult,
  type RangeResult,
  type TxnResult
} from "./op.js"
export {
  EtcdError,
  WatchCanceled,
  WatchCompacted,
  type WatchError,
  WatchNoLeader,
  WatchPermissionDenied
} from "./watch-errors.js"
export type { WatchOptions } from "./watch-options.js"
export type { WatchResponse } from "./watch-response.js"
export type { ProgressOptions, Watcher } from "./watch.js"
export { ClientConnection, type ClientConnectionShape } from "./connection.js"
export { WatchStreams, type WatchStreamsOptions, type WatchStreamsShape } from "./watch-streams.js"
