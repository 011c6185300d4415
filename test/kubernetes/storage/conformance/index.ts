/** The storage conformance suite: every Storage backend calls this once. */
import type { Backend } from "./support.js"
import { runStoreTests } from "./store-tests.js"
import { runWatchTests } from "./watcher-tests.js"

export const runStorageConformance = (backend: () => Backend, options: { readonly cacher?: boolean } = {}) => {
  runStoreTests(backend, options)
  runWatchTests(backend, options)
}

export type { Backend } from "./support.js"
