/**
 * value.NewPrefixTransformers (value/transformer.go): several transformers, each behind the prefix
 * it writes. The first writes (its prefix, then its output). A read goes to every transformer
 * whose prefix the value carries, in order, until one succeeds; the result is stale when that is
 * not the first (written by an older key or provider: the store rewrites it on its next update).
 *
 * The encryption configuration nests them: one per provider (`k8s:enc:aesgcm:v1:`), each holding
 * one per key (`<key name>:`), so a value written with the second key of the first provider is
 * stale too.
 *
 * Failures, as the apiserver: an empty-prefix transformer (identity) that refuses a value is
 * skipped silently (it cannot read encrypted data; a later key may); the errors of the others are
 * reported together (deduplicated, `[a, b]` when several); when no prefix matched at all, the
 * transformer's own `noMatch` error.
 */
import { hasPrefix } from "./identity.js"
import type { FromStorageResult, ValueTransformer } from "./transformer.js"

/** A transformer and the prefix that marks the values it wrote (`k8s:enc:aesgcm:v1:key1:`). */
export interface PrefixTransformer {
  readonly prefix: Uint8Array
  readonly transformer: ValueTransformer
}

/** NewPrefixTransformers' default error */
export const errNoMatchingTransformer = "the provided value does not match any of the supported transformers"

/** utilerrors.Reduce(NewAggregate(errs)).Error(): one message as is, several deduplicated in brackets */
export const aggregateMessage = (errors: ReadonlyArray<string>): string => {
  const seen = [...new Set(errors)]
  return seen.length === 1 ? seen[0]! : `[${seen.join(", ")}]`
}

/** value.NewPrefixTransformers: writes with the first transformer; reads with the one whose prefix the value has. */
export const prefixTransformers = (
  transformers: ReadonlyArray<PrefixTransformer>,
  noMatch: string = errNoMatchingTransformer
): ValueTransformer => {
  if (transformers.length === 0) throw new RangeError("prefixTransformers: at least one transformer is required")
  const first = transformers[0]!
  return {
    fromStorage: (data, key): FromStorageResult => {
      let errors: Array<string> | undefined
      for (let i = 0; i < transformers.length; i++) {
        const t = transformers[i]!
        if (!hasPrefix(data, t.prefix)) continue
        const r = t.transformer.fromStorage(t.prefix.length === 0 ? data : data.subarray(t.prefix.length), key)
        if (r.ok) return i === 0 || r.stale ? r : { ok: true, data: r.data, stale: true }
        // identity's "encrypted data" refusal is not an error of this value: let the others try
        if (t.prefix.length !== 0) (errors ??= []).push(r.error)
      }
      return { ok: false, error: errors === undefined ? noMatch : aggregateMessage(errors) }
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
