/**
 * value/encrypt/aes (aes.go): the `aesgcm` and `aescbc` transformers, on node:crypto, with the
 * apiserver's stored layouts (after the provider and key prefixes, which prefix.ts adds):
 *
 * - aesgcm (NewGCMTransformer): a random 12-byte nonce, then the ciphertext, then the 16-byte tag.
 *   The etcd key is the additional authenticated data (value.DefaultContext), so a value copied
 *   under another key does not decrypt.
 * - aescbc (NewCBCTransformer): a random 16-byte IV, then the PKCS#7-padded ciphertext; no
 *   authentication (the apiserver deprecates it for that reason).
 *
 * Errors are the apiserver's words for the same bytes: Go's AEAD Open reports every failure past
 * the nonce as "cipher: message authentication failed", whatever the cause.
 */
import * as crypto from "node:crypto"
import type { FromStorageResult, ValueTransformer } from "./transformer.js"

/** cipher.NewGCM's nonce size; all data in etcd breaks if this ever changes. */
export const GCM_NONCE_SIZE = 12
/** the GCM tag (cipher.AEAD.Overhead) */
export const GCM_TAG_SIZE = 16
/** aes.BlockSize: the CBC IV and padding unit */
export const AES_BLOCK_SIZE = 16

/** The key sizes crypto/aes accepts: AES-128, AES-192, AES-256. */
export const AES_KEY_SIZES: ReadonlyArray<number> = [16, 24, 32]

const errShort = "the stored data was shorter than the required size"
const errOpen = "cipher: message authentication failed"
const errInvalidBlockSize = "the stored data is not a multiple of the block size"
const errInvalidPKCS7Data = "invalid PKCS7 data (empty or not padded)"
const errInvalidPKCS7Padding = "invalid padding on input"

const fail = (error: string): FromStorageResult => ({ ok: false, error })

/**
 * aes.NewCipher's check. A transformer is built once from a validated configuration, so a bad
 * key size is a programming error here: the configuration loader reports it, with the
 * apiserver's field error, before any transformer is made.
 */
const bitsOf = (key: Uint8Array): 128 | 192 | 256 => {
  if (!AES_KEY_SIZES.includes(key.length)) throw new RangeError(`crypto/aes: invalid key size ${key.length}`)
  return (key.length * 8) as 128 | 192 | 256
}

/** value.DefaultContext(key).AuthenticatedData(): the etcd key's bytes */
const authenticatedData = (etcdKey: string): Buffer => Buffer.from(etcdKey, "utf8")

/** aesgcm.NewGCMTransformer: AES-GCM with a random nonce per write, the etcd key as authenticated data. */
export const aesGCM = (key: Uint8Array): ValueTransformer => {
  const name = `aes-${bitsOf(key)}-gcm` as crypto.CipherGCMTypes
  const secret = crypto.createSecretKey(key)
  return {
    fromStorage: (data, etcdKey) => {
      if (data.length < GCM_NONCE_SIZE) return fail(errShort)
      // Open: shorter than the tag, wrong key, wrong AAD, any flipped bit: the one error
      if (data.length < GCM_NONCE_SIZE + GCM_TAG_SIZE) return fail(errOpen)
      try {
        const decipher = crypto.createDecipheriv(name, secret, data.subarray(0, GCM_NONCE_SIZE), {
          authTagLength: GCM_TAG_SIZE
        })
        decipher.setAAD(authenticatedData(etcdKey))
        decipher.setAuthTag(data.subarray(data.length - GCM_TAG_SIZE))
        const body = decipher.update(data.subarray(GCM_NONCE_SIZE, data.length - GCM_TAG_SIZE))
        const last = decipher.final()
        return { ok: true, data: last.length === 0 ? body : Buffer.concat([body, last]), stale: false }
      } catch {
        return fail(errOpen)
      }
    },
    toStorage: (data, etcdKey) => {
      const nonce = crypto.randomBytes(GCM_NONCE_SIZE)
      const cipher = crypto.createCipheriv(name, secret, nonce, { authTagLength: GCM_TAG_SIZE })
      cipher.setAAD(authenticatedData(etcdKey))
      const body = cipher.update(data)
      const last = cipher.final()
      return Buffer.concat([nonce, body, last, cipher.getAuthTag()])
    }
  }
}

/** aescbc.NewCBCTransformer: AES-CBC with a random IV per write and PKCS#7 padding. */
export const aesCBC = (key: Uint8Array): ValueTransformer => {
  const name = `aes-${bitsOf(key)}-cbc`
  const secret = crypto.createSecretKey(key)
  return {
    fromStorage: (data) => {
      if (data.length < AES_BLOCK_SIZE) return fail(errShort)
      const body = data.subarray(AES_BLOCK_SIZE)
      if (body.length % AES_BLOCK_SIZE !== 0) return fail(errInvalidBlockSize)
      // an IV and nothing else: Go indexes the last byte of an empty slice (a panic); refuse it
      if (body.length === 0) return fail(errInvalidPKCS7Data)
      const decipher = crypto.createDecipheriv(name, secret, data.subarray(0, AES_BLOCK_SIZE))
      decipher.setAutoPadding(false)
      const plain = Buffer.concat([decipher.update(body), decipher.final()])
      // the padding checks of aes.go, in its order (it does not cap the pad at the block size)
      const c = plain[plain.length - 1]!
      if (c === 0 || c > plain.length) return fail(errInvalidPKCS7Data)
      const size = plain.length - c
      for (let i = size; i < plain.length; i++) if (plain[i] !== c) return fail(errInvalidPKCS7Padding)
      return { ok: true, data: plain.subarray(0, size), stale: false }
    },
    toStorage: (data) => {
      const iv = crypto.randomBytes(AES_BLOCK_SIZE)
      // node's default padding is PKCS#7, the padding aes.go writes
      const cipher = crypto.createCipheriv(name, secret, iv)
      return Buffer.concat([iv, cipher.update(data), cipher.final()])
    }
  }
}
