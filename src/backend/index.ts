/**
 * The storage backend service and its two layers.
 *
 * @module
 */
export { Backend, BackendError, type BackendShape, type BucketName, type WriteOp, type WriteTicket } from "./backend.js"
export { layerLmdb, type LmdbOptions } from "./lmdb.js"
export { layerMemory } from "./memory.js"
