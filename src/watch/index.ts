/** The watch layer: etcd's watchable store, watch streams and their parts. */
export * from "./errors.js"
export * from "./event-batch.js"
export * from "./interval-tree.js"
export * from "./victims.js"
export * from "./watch-stream.js"
export * from "./watchable-store.js"
export * from "./watcher-group.js"
export * from "./watcher.js"
