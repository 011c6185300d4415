/**
 * Start-up corruption: a backend whose records cannot be read back (etcd panics while restoring).
 * A typed error in the error channel of the layer that reads them (the store rebuilding its index,
 * the lessor recovering its leases), so the program that builds the member fails with one line.
 */
import { ParseResult, Schema } from "effect"

/** Stored records that do not decode at start-up: the member cannot rebuild its index, leases, auth or alarms. */
export class RecoveryError extends Schema.TaggedError<RecoveryError>()("RecoveryError", {
  /** what was being rebuilt: the store's key index, the lessor's leases, auth's users and roles, the alarms */
  reason: Schema.Literal("IndexRebuild", "LeaseRecovery", "AuthRecovery", "AlarmRecovery"),
  message: Schema.String
}) {}

/** A Schema decode failure as one line (`roles.1: Expected string, actual 3`): start-up errors print one line. */
export const parseErrorLine = (e: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(e)
    .map((i) =>
      (i.path.length > 0 ? `${i.path.map(String).join(".")}: ${i.message}` : i.message).replace(/\s*\n\s*/g, " ")
    )
    .join("; ")
