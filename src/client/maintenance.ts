/**
 * The Maintenance API, as far as the command line needs it: Status (etcdctl `endpoint status`).
 */
import { Effect } from "effect"
import type { EtcdError } from "../errors.js"
import type * as M from "../proto/index.js"
import { type ClientConnectionShape, unaryMethod } from "./connection.js"
import type { ResponseHeader } from "./key-value.js"
import { big, fromWireHeader } from "./wire.js"

/** What `maintenance.status` answers: the member's version, db sizes, leader and raft indexes, and alarms' errors. */
export interface StatusResult {
  readonly header: ResponseHeader
  readonly version: string
  readonly dbSize: bigint
  readonly leader: bigint
  readonly raftIndex: bigint
  readonly raftTerm: bigint
  readonly raftAppliedIndex: bigint
  readonly errors: ReadonlyArray<string>
  readonly dbSizeInUse: bigint
  readonly isLearner: boolean
}

/** The Maintenance API, as far as the client has it: a member's status. */
export interface Maintenance {
  /** the status of the member the client is connected to (etcdctl `endpoint status`) */
  readonly status: () => Effect.Effect<StatusResult, EtcdError>
}

const Status = unaryMethod<object, M.StatusResponse>("Maintenance", "Status")

export const makeMaintenance = (connection: ClientConnectionShape): Maintenance => ({
  status: () =>
    Effect.map(
      Effect.suspend(() => connection.unary(Status, {})),
      (r) => ({
        header: fromWireHeader(r.header),
        version: r.version,
        dbSize: big(r.dbSize),
        leader: big(r.leader),
        raftIndex: big(r.raftIndex),
        raftTerm: big(r.raftTerm),
        raftAppliedIndex: big(r.raftAppliedIndex),
        errors: r.errors,
        dbSizeInUse: big(r.dbSizeInUse),
        isLearner: r.isLearner
      })
    )
})
