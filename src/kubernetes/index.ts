/**
 * The Kubernetes half: the apiserver's storage over etcd (storage.Interface, the etcd3 watchChan),
 * the legacy etcd2 watcher, the Cacher, and a Kubernetes-style list/watch HTTP API.
 */
export * from "./api/object-meta.js"
export * from "./api/status.js"
export * from "./api/watch-event.js"
export * from "./api/codec.js"
export * from "./storage/interfaces.js"
export * from "./storage/selection-predicate.js"
export { watchInto } from "./storage/watch-sink.js"
export * as Value from "./storage/value/index.js"
export { Etcd3Store, type Etcd3StoreConfig } from "./storage/etcd3/store.js"
export { compactStorage, compactWith } from "./storage/etcd3/compact.js"
export { decodeContinue, encodeContinue } from "./storage/continue.js"
export { parseResourceVersion } from "./storage/versioner.js"
export * as Labels from "./api/labels.js"
export * as Fields from "./api/fields.js"
export * as Etcd2 from "./etcd2/index.js"
export { Cacher, type CacherConfig, type CacherInternals, CacherInternalsTag } from "./cacher/cacher.js"
export * as ApiServer from "./apiserver/index.js"
