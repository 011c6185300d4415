/**
 * The watch layer: etcd's watchable store, its services (the watcher groups, the victims) and its
 * watch streams. The parts inside them (`WatcherGroup`, the interval tree, batches,
 * `WatchStreamImpl`) are internal: import them by file path.
 *
 * @module
 */
export { WatchError, type WatchErrorReason } from "./errors.js"
export type { WatchRequest, WatchStream } from "./watch-stream.js"
export {
  defaultWatchableStoreConfig,
  layer,
  layerOver,
  layerWith,
  WatchableStore,
  type WatchableStoreConfig,
  type WatchableStoreShape
} from "./watchable-store.js"
export { WatcherGroups, type WatcherGroupsShape } from "./watcher-groups.js"
export { defaultVictimsConfig, Victims, type VictimsConfig, type VictimsShape } from "./victims.js"
export { AutoWatchId, FilterType, ProgressAllWatchId, toWatchId, type WatchId, type WatchResponse } from "./watcher.js"
