/**
 * Encryption at rest (k8s.io/apiserver/pkg/storage/value): transformers and the
 * EncryptionConfiguration file.
 */
export { type FromStorageResult, identity, type ValueTransformer } from "./transformer.js"
export { encryptCheck } from "./identity.js"
export { aesCBC, aesGCM } from "./aes.js"
export { type PrefixTransformer, prefixTransformers } from "./prefix.js"
export {
  type EncryptionConfig,
  EncryptionConfigError,
  EncryptionConfiguration,
  fromConfiguration,
  loadEncryptionConfig,
  parseEncryptionConfig,
  resourceMatches
} from "./encryption-config.js"
