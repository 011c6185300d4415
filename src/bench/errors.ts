/** The one failure of a benchmark run: it could not be measured, and `reason` says why. */
import { Data } from "effect"

export class BenchError extends Data.TaggedError("BenchError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}
