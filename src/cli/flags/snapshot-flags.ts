/**
 * `snapshot save|status|restore`: etcdctl's `snapshot save` (a client command, with the global
 * flags) and etcdutl 3.6's `snapshot status` and `snapshot restore` (offline: their own flags and
 * etcdutl's `-w`), with etcdutl's names, defaults and descriptions.
 */
import type { CommandSpec } from "./command.js"
import { bool, string, uint } from "./flag.js"

/** etcdutl's --write-out: checked by the command (etcdutl refuses an unknown one as a bad feature) */
const writeOut = string({
  short: "w",
  default: "simple",
  description: "output format (fields, json, simple, table)"
})

export const snapshotStatusFlags = { "write-out": writeOut } as const

export const snapshotRestoreFlags = {
  "bump-revision": uint({ description: "How much to increase the latest revision" }),
  "data-dir": string({ shownDefault: "<name>.etcd", description: "Path to the output data directory" }),
  "initial-advertise-peer-urls": string({
    default: "http://localhost:2380",
    description: "This member's peer URLs"
  }),
  "initial-cluster": string({
    default: "default=http://localhost:2380",
    description: "This member only (name=URL)"
  }),
  "initial-cluster-token": string({
    default: "etcd-cluster",
    description: "Cluster token (member and cluster ids)"
  }),
  "initial-memory-map-size": uint({
    default: 10737418240,
    description: "Accepted as etcdutl's (LMDB sizes itself)"
  }),
  "mark-compacted": bool({
    description: "Mark the latest revision compacted (with --bump-revision)"
  }),
  name: string({ default: "default", description: "Human-readable name for this member" }),
  "skip-hash-check": bool({
    description: "Ignore the integrity hash (a db copied from a data dir)"
  }),
  "wal-dir": string({ description: "Must not exist (our WAL is <data-dir>/member/wal)" }),
  "write-out": writeOut
} as const

const offline = (path: string, summary: string, usage: string, flags: CommandSpec["flags"]): CommandSpec => ({
  path,
  summary,
  usage,
  flags,
  globals: false,
  dialect: "pflag",
  runs: "client"
})

export const snapshot: CommandSpec = {
  path: "snapshot",
  summary: "Manages etcd node snapshots",
  usage: "<subcommand>",
  flags: {},
  globals: true,
  dialect: "pflag",
  runs: "client",
  subcommands: [
    {
      ...offline("snapshot save", "Stores an etcd node backend snapshot to a given file", "<filename>", {}),
      globals: true
    },
    offline("snapshot status", "Gets backend snapshot status of a given file", "<filename>", snapshotStatusFlags),
    offline(
      "snapshot restore",
      "Restores an etcd member snapshot to an etcd-effect data directory",
      "<filename> --data-dir {output dir} [options]",
      snapshotRestoreFlags
    )
  ]
}
