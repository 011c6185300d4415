/**
 * Shared helpers for the mvcc tests: byte/string conversion and store layers over each backend.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Layer } from "effect"
import { layerLmdb } from "../../src/backend/lmdb.js"
import { layerMemory } from "../../src/backend/memory.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import type { RecoveryError } from "../../src/mvcc/recovery-error.js"
import { type KvStoreConfigShape, layer, layerConfig } from "../../src/mvcc/kvstore.js"

export const b = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "latin1"))
export const s = (u: Uint8Array): string => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString("latin1")

/** A fresh store over a fresh in-memory backend. */
export const memoryStore = (config: Partial<KvStoreConfigShape> = {}): Layer.Layer<MvccStore, RecoveryError> =>
  layer.pipe(Layer.provide(layerConfig(config)), Layer.provide(layerMemory))

/** A store over LMDB in `dataDir` (reopening the same dir restores it). */
export const lmdbStore = (dataDir: string, config: Partial<KvStoreConfigShape> = {}): Layer.Layer<MvccStore, unknown> =>
  layer.pipe(Layer.provide(layerConfig(config)), Layer.provide(layerLmdb({ dataDir })))

/** A temp dir removed by the returned cleanup. */
export const tempDir = (prefix = "mvcc-"): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}
