/**
 * The client commands of the full program, by their words (the table's paths): each runs a parsed
 * command line.
 */
import type { Effect } from "effect"
import type { ParsedRun } from "../flags/parse.js"
import { runBench } from "./bench.js"
import { runEndpointStatus } from "./endpoint.js"
import { runCompaction, runDel, runGet, runPut } from "./kv.js"
import { runGrant, runKeepAlive, runList, runRevoke, runTimetolive } from "./lease.js"
import { runSnapshotRestore } from "./snapshot-restore.js"
import { runSnapshotSave } from "./snapshot-save.js"
import { runSnapshotStatus } from "./snapshot-status.js"
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
  "snapshot save": runSnapshotSave,
  "snapshot status": runSnapshotStatus,
  "snapshot restore": runSnapshotRestore,
  bench: runBench
}
