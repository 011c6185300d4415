/**
 * Recovery at open: the batches the WAL acknowledged before the last process ended but LMDB did
 * not get yet (everything above LMDB's applied mark) are replayed into LMDB in one synced
 * transaction; the old segments are then deleted and the log starts over in a new segment.
 */
import * as fs from "node:fs"
import { Effect } from "effect"
import type { BackendError } from "./backend.js"
import type { DataDirLayout } from "./data-dir.js"
import { lmdbCommitCause } from "./disk-full.js"
import type { LmdbStats } from "./lmdb-core.js"
import { type LmdbEnv, putAppliedMark, putOps, readAppliedMark, unreadable } from "./lmdb-env.js"
import { DEFAULT_SEGMENT_BYTES, readWal, WalCorrupt, type WalIo, WalWriter } from "./wal.js"

export interface Recovered {
  /** the applied mark after the replay: WAL seqs continue above it */
  readonly applied: number
  /** the log's writer, on a new segment */
  readonly writer: WalWriter
}

export const replayWal = (
  env: LmdbEnv,
  layout: DataDirLayout,
  stats: LmdbStats,
  options: { readonly segmentBytes: number | undefined; readonly io: WalIo }
): Effect.Effect<Recovered, BackendError> =>
  Effect.gen(function* () {
    let applied = readAppliedMark(env)
    const wal = yield* Effect.try({
      try: () => readWal(layout.walDir, applied),
      catch: (e) =>
        unreadable(
          layout.dir,
          e instanceof WalCorrupt ? "corrupt write-ahead log" : "cannot read the write-ahead log",
          e
        )
    })
    if (wal.records.length > 0) {
      const last = wal.records[wal.records.length - 1]!.seq
      yield* Effect.tryPromise({
        try: () =>
          env.root
            .batch(() => {
              for (const r of wal.records) putOps(env.dbs, r.ops)
              putAppliedMark(env, last)
            })
            .catch(async (e: unknown) => Promise.reject(await lmdbCommitCause(e, layout.dbPath))),
        catch: (e) => unreadable(layout.dir, "cannot replay the write-ahead log into LMDB", e)
      })
      stats.commits++
      stats.replayed = wal.records.length
      applied = last
    }
    // Everything in the old segments is in LMDB now; the log starts over in a new segment.
    const writer = yield* Effect.try({
      try: () => {
        for (const seg of wal.segments) fs.rmSync(seg.path, { force: true })
        return new WalWriter({
          dir: layout.walDir,
          segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
          io: options.io,
          nextIndex: wal.segments.length === 0 ? 0 : wal.segments[wal.segments.length - 1]!.index + 1
        })
      },
      catch: (e) => unreadable(layout.dir, "cannot open the write-ahead log", e)
    })
    return { applied, writer }
  })
