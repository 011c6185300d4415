/**
 * The watch layer: etcd's watchable store and its watch streams. The parts (watcher groups,
 * victims, the interval tree, batches, `WatchStreamImpl`) are internal: import them by file path.
 */
export { WatchError, type WatchErrorReason } from "./errors.js"
export type { WatchRequest, WatchStream } from "./watch-stream.js"
export {
  defaultWatchableStoreConfig,
  layer,
  layerWith,
  make,
  WatchableStore,
  type WatchableStoreConfig,
  type WatchableStoreShape
} from "./watchable-store.js"
export { AutoWatchId, FilterType, ProgressAllWatchId, type WatchId, type WatchResponse } from "./watcher.js"
