/**
 * value.NewPrefixTransformers: several transformers, each behind the prefix it writes. The first
 * one writes; a value is read by the first whose prefix it carries, and is stale when that is not
 * the first (written by an older key or provider: the store rewrites it on its next update). An
 * empty prefix (identity) matches everything, so it is only tried once nothing else matched.
 */
import { hasPrefix } from "./identity.js"
import type { FromStorageResult, ValueTransformer } from "./transformer.js"

export interface PrefixTransformer {
  readonly prefix: Uint8Array
  readonly transformer: ValueTransformer
}

export const prefixTransformers = (
  transformers: ReadonlyArray<PrefixTransformer>,
  noMatch = "no matching prefix found"
): ValueTransformer => {
  if (transformers.length === 0) throw new Error("at least one transformer is required")
  const first = transformers[0]!
  return {
    fromStorage: (data, key): FromStorageResult => {
      const errors: Array<string> = []
      for (let i = 0; i < transformers.length; i++) {
        const t = transformers[i]!
        if (!hasPrefix(data, t.prefix)) continue
        const r = t.transformer.fromStorage(data.subarray(t.prefix.length), key)
        if (t.prefix.length === 0) {
          // an identity that cannot read this (encrypted data) lets the others try
          if (!r.ok) {
            errors.push(r.error)
            continue
          }
          return { ok: true, data: r.data, stale: r.stale || i !== 0 }
        }
        return r.ok ? { ok: true, data: r.data, stale: r.stale || i !== 0 } : r
      }
      return { ok: false, error: errors.length === 1 ? errors[0]! : errors.length > 1 ? `[${errors.join(", ")}]` : noMatch }
    },
    toStorage: (data, key) => {
      const out = first.transformer.toStorage(data, key)
      if (first.prefix.length === 0) return out
      const prefixed = new Uint8Array(first.prefix.length + out.length)
      prefixed.set(first.prefix, 0)
      prefixed.set(out, first.prefix.length)
      return prefixed
    }
  }
}
