/**
 * `watch KEY [RANGE_END]`: prints events as etcdctl does, and keeps going across lost connections
 * and server restarts (the client resumes each watch where it stopped, without loss or repeats).
 *
 * Unlike etcdctl it does not ask for a leader (`hasleader`): a single restarted member has none for
 * a moment, and etcd answers such a stream with a final "no leader".
 */
import { Args, Command, Options } from "@effect/cli"
import { Chunk, Console, Effect, Option, Stream } from "effect"
import type { WatchError } from "../../client/index.js"
import { globalOptions, usage, withClient } from "./global.js"
import { type WriteOut, write } from "./output.js"
import { printResponse, responseJson } from "./watch-output.js"

/** etcdctl: "watch was canceled (<err>)", then "Error: watch is canceled by the server". */
const canceled = (writeOut: WriteOut, error: WatchError) =>
  Effect.gen(function* () {
    if (writeOut === "json" && error._tag === "WatchCompacted") {
      const header = error.header ?? { clusterId: 0n, memberId: 0n, revision: 0n, raftTerm: 0n }
      write(
        `${responseJson({ header, events: [], created: false, progressNotify: false }, { compactRevision: error.compactRevision, canceled: true })}\n`
      )
    }
    yield* Console.error(`watch was canceled (${error.message})`)
    return yield* Effect.fail(new Error("watch is canceled by the server"))
  })

export const watch = Command.make(
  "watch",
  {
    ...globalOptions,
    key: Args.text({ name: "key" }),
    rangeEnd: Args.text({ name: "range_end" }).pipe(Args.optional),
    prefix: Options.boolean("prefix").pipe(Options.withDescription("Watch on a prefix if prefix is set")),
    rev: Options.integer("rev").pipe(Options.withDescription("Revision to start watching"), Options.withDefault(0)),
    prevKv: Options.boolean("prev-kv").pipe(
      Options.withDescription("get the previous key-value pair before the event happens")
    ),
    progressNotify: Options.boolean("progress-notify").pipe(
      Options.withDescription("get periodic watch progress notification from server")
    )
  },
  (o) => {
    if (o.prefix && Option.isSome(o.rangeEnd))
      return usage("too many arguments, only accept one argument when `--prefix` is set")
    return withClient(
      o,
      (c) =>
        c
          .watch(o.key, {
            prefix: o.prefix,
            rangeEnd: Option.getOrUndefined(o.rangeEnd),
            startRevision: o.rev,
            prevKv: o.prevKv,
            progressNotify: o.progressNotify
          })
          .pipe(
            Stream.runForEachChunk((chunk) => Effect.sync(() => Chunk.forEach(chunk, printResponse(o.writeOut)))),
            Effect.catchAll((error) => canceled(o.writeOut, error))
          ),
      { longRunning: true }
    )
  }
).pipe(Command.withDescription("Watches events stream on keys or prefixes"))
