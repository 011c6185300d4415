/** The one failure of a benchmark run: it could not be measured, and `reason` says why. */
import { Schema } from "effect"

export class BenchError extends Schema.TaggedError<BenchError>()("BenchError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}
