/**
 * Start-up corruption: a backend whose records cannot be read back (etcd panics while restoring).
 * A typed error in the error channel of the layer that reads them (the store rebuilding its index,
 * the lessor recovering its leases), so the program that builds the member fails with one line.
 */
import { Schema } from "effect"

export class RecoveryError extends Schema.TaggedError<RecoveryError>()("RecoveryError", {
  /** what was being rebuilt: the store's key index, or the lessor's leases */
  reason: Schema.Literal("IndexRebuild", "LeaseRecovery"),
  message: Schema.String
}) {}
