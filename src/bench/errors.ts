/** The one failure of a benchmark run: it could not be measured, and `reason` says why. */
import { Schema } from "effect"

/**
 * A benchmark that could not run or complete: bad options, an unreachable endpoint, a failed phase
 * (`reason` says which).
 */
export class BenchError extends Schema.TaggedError<BenchError>()("BenchError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}
