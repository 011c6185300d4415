/**
 * Limits both backends enforce, so code tested on the memory backend meets what LMDB accepts.
 */
import { BackendError, type WriteOp } from "./backend.js"

/** LMDB's key limit with the default page size (lmdb-js reports 1978 bytes); keys are never empty. */
export const MAX_KEY_BYTES = 1978

/** Rejects what LMDB would refuse, before anything is staged: a batch stays atomic. */
export const validateOps = (ops: ReadonlyArray<WriteOp>): BackendError | undefined => {
  for (const op of ops) {
    if (op.key.length === 0 || op.key.length > MAX_KEY_BYTES) {
      return new BackendError({
        reason: "WriteFailed",
        message: `backend: key of ${op.key.length} bytes in bucket "${op.bucket}" (keys are 1..${MAX_KEY_BYTES} bytes)`
      })
    }
  }
  return undefined
}
