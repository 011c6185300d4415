/**
 * value/encrypt/aes: the `aesgcm` and `aescbc` providers, on node:crypto.
 *
 * - aesgcm: a random 12-byte nonce, then the ciphertext and its 16-byte tag; the etcd key is the
 *   additional authenticated data, so a value copied under another key does not decrypt.
 * - aescbc: a random 16-byte IV, then the PKCS#7-padded ciphertext (no authentication).
 * Keys are 16, 24 or 32 bytes (AES-128/192/256).
 */
import * as crypto from "node:crypto"
import type { ValueTransformer } from "./transformer.js"

const GCM_NONCE = 12
const GCM_TAG = 16
const BLOCK = 16

const cipherName = (mode: "gcm" | "cbc", key: Uint8Array): crypto.CipherGCMTypes | string => {
  const bits = key.length * 8
  if (bits !== 128 && bits !== 192 && bits !== 256) throw new Error(`crypto/aes: invalid key size ${key.length}`)
  return `aes-${bits}-${mode}`
}

/** value.Context.AuthenticatedData: the key as bytes */
const aad = (key: string): Uint8Array => Buffer.from(key, "utf8")

export const aesGCM = (key: Uint8Array): ValueTransformer => {
  const name = cipherName("gcm", key) as crypto.CipherGCMTypes
  return {
    fromStorage: (data, etcdKey) => {
      if (data.length < GCM_NONCE + GCM_TAG) return { ok: false, error: "the stored data was shorter than the required size" }
      try {
        const decipher = crypto.createDecipheriv(name, key, data.subarray(0, GCM_NONCE), { authTagLength: GCM_TAG })
        decipher.setAAD(aad(etcdKey))
        decipher.setAuthTag(data.subarray(data.length - GCM_TAG))
        const plain = Buffer.concat([decipher.update(data.subarray(GCM_NONCE, data.length - GCM_TAG)), decipher.final()])
        return { ok: true, data: plain, stale: false }
      } catch {
        return { ok: false, error: "cipher: message authentication failed" }
      }
    },
    toStorage: (data, etcdKey) => {
      const nonce = crypto.randomBytes(GCM_NONCE)
      const cipher = crypto.createCipheriv(name, key, nonce, { authTagLength: GCM_TAG })
      cipher.setAAD(aad(etcdKey))
      return Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()])
    }
  }
}

export const aesCBC = (key: Uint8Array): ValueTransformer => {
  const name = cipherName("cbc", key)
  return {
    fromStorage: (data) => {
      if (data.length < BLOCK) return { ok: false, error: "the stored data was shorter than the required size" }
      const body = data.subarray(BLOCK)
      if (body.length % BLOCK !== 0) return { ok: false, error: "the stored data is not a multiple of the block size" }
      const decipher = crypto.createDecipheriv(name, key, data.subarray(0, BLOCK))
      decipher.setAutoPadding(false)
      const padded = Buffer.concat([decipher.update(body), decipher.final()])
      const c = padded.length === 0 ? 0 : padded[padded.length - 1]!
      if (padded.length === 0 || c === 0 || c > BLOCK || c > padded.length) {
        return { ok: false, error: "invalid PKCS7 data (empty or not padded)" }
      }
      for (let i = padded.length - c; i < padded.length; i++) {
        if (padded[i] !== c) return { ok: false, error: "invalid padding on input" }
      }
      return { ok: true, data: padded.subarray(0, padded.length - c), stale: false }
    },
    toStorage: (data) => {
      const iv = crypto.randomBytes(BLOCK)
      const cipher = crypto.createCipheriv(name, key, iv)
      return Buffer.concat([iv, cipher.update(data), cipher.final()])
    }
  }
}
