/**
 * Encryption at rest (k8s.io/apiserver/pkg/storage/value): transformers and the
 * EncryptionConfiguration file (--encryption-provider-config).
 *
 * @module
 */
export { type FromStorageResult, identity, type ValueTransformer } from "./transformer.js"
export { encryptCheck, hasPrefix } from "./identity.js"
export { AES_BLOCK_SIZE, AES_KEY_SIZES, aesCBC, aesGCM, GCM_NONCE_SIZE, GCM_TAG_SIZE } from "./aes.js"
export { aggregateMessage, errNoMatchingTransformer, type PrefixTransformer, prefixTransformers } from "./prefix.js"
export {
  type EncryptionConfig,
  EncryptionConfigError,
  EncryptionConfiguration,
  fromConfiguration,
  loadEncryptionConfig,
  parseEncryptionConfig,
  parseGroupResource,
  ResourceTransformers,
  transformerFor,
  validateEncryptionConfiguration
} from "./encryption-config.js"
