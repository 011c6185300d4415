/**
 * `watch KEY [RANGE_END]`: prints events as etcdctl does, and keeps going across lost connections
 * and server restarts (the client resumes each watch where it stopped, without loss or repeats).
 *
 * Unlike etcdctl it does not ask for a leader (`hasleader`): a single restarted member has none for
 * a moment, and etcd answers such a stream with a final "no leader".
 */
import { Chunk, Console, Effect, Stream } from "effect"
import type { WatchError } from "../../client/index.js"
import type { ParsedRun } from "../flags/parse.js"
import { CommandFailed, usage, withClient } from "./global.js"
import { checked } from "./kv.js"
import { type WriteOut, write } from "./output.js"
import { UsageError, watchArgs } from "./usage.js"
import { printResponse, responseJson } from "./watch-output.js"

/** cobrautl.ExitInterrupted: etcdctl's exit code when the server cancels the watch */
const EXIT_INTERRUPTED = 5

/**
 * etcdctl: "watch was canceled (<err>)", then "Error: watch is canceled by the server", exit 5.
 * Printed here, so withClient only sees CommandFailed (no second "Error:" line, no exit 1).
 */
const canceled = (writeOut: WriteOut, error: WatchError) =>
  Effect.gen(function* () {
    if (writeOut === "json" && error._tag === "WatchCompacted") {
      const header = error.header ?? { clusterId: 0n, memberId: 0n, revision: 0n, raftTerm: 0n }
      write(
        `${responseJson({ header, events: [], created: false, progressNotify: false }, { compactRevision: error.compactRevision, canceled: true })}\n`
      )
    }
    yield* Console.error(`watch was canceled (${error.message})\nError: watch is canceled by the server`)
    return yield* Effect.fail(new CommandFailed("watch is canceled by the server", EXIT_INTERRUPTED))
  })

export const runWatch = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(watchArgs(p), p)
  if (c instanceof UsageError) return usage(c)
  const { args: a, settings: s } = c
  return withClient(
    s,
    (client) =>
      client
        .watch(a.key, {
          prefix: a.prefix,
          rangeEnd: a.rangeEnd,
          startRevision: a.revision,
          prevKv: a.prevKv,
          progressNotify: a.progressNotify
        })
        .pipe(
          Stream.runForEachChunk((chunk) => Effect.sync(() => Chunk.forEach(chunk, printResponse(s)))),
          Effect.catchAll((error) => canceled(s.writeOut, error))
        ),
    { longRunning: true }
  )
}
