import { Schema } from "effect"

/** A start-up failure, as one line for stderr. (Its own module: the serve program's flag checks use it without loading the server.) */
export class ServeError extends Schema.TaggedError<ServeError>()("ServeError", {
  reason: Schema.Literal("BadConfig", "Listen"),
  message: Schema.String
}) {}
