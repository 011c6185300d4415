/**
 * Start-up corruption: a backend whose records cannot be read back (etcd panics while restoring).
 * A typed error in the error channel of the layer that reads them (the store rebuilding its index,
 * the lessor recovering its leases), so the program that builds the member fails with one line.
 */
import { Schema } from "effect"

export class RecoveryError extends Schema.TaggedError<RecoveryError>()("RecoveryError", {
  /** what was being rebuilt: the store's key index, the lessor's leases, auth's users and roles, the alarms */
  reason: Schema.Literal("IndexRebuild", "LeaseRecovery", "AuthRecovery", "AlarmRecovery"),
  message: Schema.String
}) {}
