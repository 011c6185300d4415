/**
 * A bbolt file that cannot be read: the message is bbolt's own where bbolt has one ("invalid
 * database", "version mismatch", "checksum error", "file size too small"), else names the page.
 */
import { Schema } from "effect"

export class BoltError extends Schema.TaggedError<BoltError>()("BoltError", {
  message: Schema.String
}) {}
