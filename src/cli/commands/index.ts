/**
 * The client commands of the full program, by their words (the table's paths): each runs a parsed
 * command line.
 */
import { Effect } from "effect"
import type { ParsedRun } from "../flags/parse.js"
import { runBench } from "./bench.js"
import { runEndpointStatus } from "./endpoint.js"
import { runCompaction, runDel, runGet, runPut } from "./kv.js"
import { runGrant, runKeepAlive, runList, runRevoke, runTimetolive } from "./lease.js"
import { runWatch } from "./watch.js"

export const clientCommands: Readonly<Record<string, (p: ParsedRun) => Effect.Effect<void>>> = {
  get: runGet,
  put: runPut,
  del: runDel,
  watch: runWatch,
  compaction: runCompaction,
  "lease grant": runGrant,
  "lease revoke": runRevoke,
  "lease timetolive": runTimetolive,
  "lease keep-alive": runKeepAlive,
  "lease list": runList,
  "endpoint status": runEndpointStatus,
  // loaded on use: restore brings the LMDB backend, which the other commands' start-up need not load
  "snapshot save": (p) =>
    Effect.flatMap(
      Effect.promise(() => import("./snapshot-save.js")),
      (m) => m.runSnapshotSave(p)
    ),
  "snapshot status": (p) =>
    Effect.flatMap(
      Effect.promise(() => import("./snapshot-status.js")),
      (m) => m.runSnapshotStatus(p)
    ),
  "snapshot restore": (p) =>
    Effect.flatMap(
      Effect.promise(() => import("./snapshot-restore.js")),
      (m) => m.runSnapshotRestore(p)
    ),
  bench: runBench
}
