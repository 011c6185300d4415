/**
 * The legacy etcd2 storage (seed 001): an etcd v2 keys client, the etcd2-era watcher and a minimal
 * storage.Interface over v2, for an etcd started with `--enable-v2=true`.
 */
export * from "./errors.js"
export * from "./node.js"
export { KeysClient, type KeysClientConfig, type KeysClientService, layer as keysClientLayer, layerFetch as keysClientLayerFetch, make as makeKeysClient, parseResponse } from "./keys-client.js"
export * from "./high-water-mark.js"
export {
  etcdWatch,
  etcdWatcher,
  type EtcdWatcherDeps,
  INCOMING_BUF_SIZE,
  makeSendResult,
  OUTGOING_BUF_SIZE,
  statusOfError,
  translate
} from "./etcd-watcher.js"
export { Etcd2Store, type Etcd2StoreConfig } from "./store.js"
