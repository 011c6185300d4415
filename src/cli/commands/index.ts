/**
 * The client commands of `etcd-effect` (etcdctl's names and flags): register them beside `serve`
 * with `Command.withSubcommands([serve, ...clientCommands])`.
 */
import { bench } from "./bench.js"
import { endpoint } from "./endpoint.js"
import { compaction, del, get, put } from "./kv.js"
import { lease } from "./lease.js"
import { watch } from "./watch.js"

export const clientCommands = [put, get, del, watch, lease, compaction, endpoint, bench] as const

export { bench, compaction, del, endpoint, get, lease, put, watch }
