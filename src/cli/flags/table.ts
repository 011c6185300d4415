/**
 * The `etcd-effect` program's commands and flags: one table, read by the bin (its lean path prints
 * help and flag errors and runs get/put/del/watch without loading effect) and by the full program
 * (main.ts), so the two cannot disagree on what a command line means.
 */
import { apiserver } from "./apiserver-flags.js"
import { bench } from "./bench-flags.js"
import { compaction, del, endpoint, get, globalFlags, lease, put, version, watch } from "./client-flags.js"
import type { CommandSpec } from "./command.js"
import { bool } from "./flag.js"
import { serve } from "./serve-flags.js"
import { snapshot } from "./snapshot-flags.js"

/** the program's version (package.json's; a test holds them equal) */
export const PROGRAM_VERSION = "0.1.0"
/** the etcd API version the client commands speak, as `version` reports it */
export const API_VERSION = "3.5"
export const PROGRAM = "etcd-effect"

/** cobra's help flag, on every command */
export const helpFlag = bool({ short: "h", description: "help for this command" })

const help: CommandSpec = {
  path: "help",
  summary: "Help about any command",
  usage: "[command]",
  flags: {},
  globals: false,
  dialect: "pflag",
  runs: "builtin"
}

/** the program itself: its flags are the client commands' global ones, its commands these */
export const root: CommandSpec = {
  path: "",
  summary: "etcd's v3 API and the Kubernetes watch stack, on Effect",
  usage: "[global options] <command> [options] [arguments]",
  flags: {},
  globals: true,
  dialect: "pflag",
  runs: "builtin",
  subcommands: [serve, apiserver, get, put, del, watch, compaction, lease, endpoint, snapshot, bench, version, help]
}

export { globalFlags }
