/**
 * A watch into a `WatchSink` on any Storage: the storage's own sink watch where it has one (the
 * Cacher: no fiber per watcher), else its Stream run by one fiber in the caller's scope that
 * waits for `resume` whenever the sink says it is full.
 */
import { Effect, type Scope, Stream } from "effect"
import type { StatusError } from "../api/status.js"
import type { ListOptions, StorageShape, WatchHandle, WatchSink } from "./interfaces.js"

/** Watches `key` into `sink`: the storage's own sink watch if it has one, else its Stream run by one fiber. */
export const watchInto = (
  storage: StorageShape,
  key: string,
  options: ListOptions,
  sink: WatchSink
): Effect.Effect<WatchHandle, StatusError, Scope.Scope> => {
  if (storage.watchSink !== undefined) return storage.watchSink(key, options, sink)
  return Effect.gen(function* () {
    const events = yield* storage.watch(key, options)
    let wake: (() => void) | undefined
    let resumed = false
    const drained = Effect.async<void>((cb) => {
      wake = () => cb(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })
    yield* Stream.runForEachChunk(events, (chunk) =>
      Effect.suspend(() => {
        resumed = false
        // a resume during push (the sink drained at once) needs no wait
        return sink.push(Array.from(chunk)) || resumed ? Effect.void : drained
      })
    ).pipe(Effect.ensuring(Effect.sync(() => sink.end())), Effect.forkScoped)
    return {
      resume: () => {
        resumed = true
        const w = wake
        wake = undefined
        w?.()
      }
    }
  })
}
