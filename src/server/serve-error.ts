import { Data } from "effect"

/** A start-up failure, as one line for stderr. (Its own module: the serve program's flag checks use it without loading the server.) */
export class ServeError extends Data.TaggedError("ServeError")<{
  readonly reason: "BadConfig" | "Listen"
  readonly message: string
}> {}
