/** The storage backend service and its two layers. */
export * from "./backend.js"
export { layerLmdb, type LmdbOptions } from "./lmdb.js"
export { layerMemory } from "./memory.js"
