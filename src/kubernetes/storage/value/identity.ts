/**
 * identity.NewEncryptCheckTransformer: the `identity` provider of an EncryptionConfiguration stores
 * plain bytes, and refuses to hand out a value that is still encrypted (it starts with "k8s:enc:")
 * rather than returning ciphertext as if it were an object.
 */
import type { ValueTransformer } from "./transformer.js"

const ENCRYPTED_PREFIX = new TextEncoder().encode("k8s:enc:")

/** Whether `data` starts with `prefix`. */
export const hasPrefix = (data: Uint8Array, prefix: Uint8Array): boolean => {
  if (data.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false
  return true
}

/** The `identity` provider: stores bytes as they are, and refuses to read a value that starts with `k8s:enc:`. */
export const encryptCheck: ValueTransformer = {
  fromStorage: (data) =>
    hasPrefix(data, ENCRYPTED_PREFIX)
      ? { ok: false, error: "identity transformer tried to read encrypted data" }
      : { ok: true, data, stale: false },
  toStorage: (data) => data
}
