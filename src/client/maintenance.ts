/**
 * The Maintenance API, as far as the command line needs it: Status (etcdctl `endpoint status`) and
 * Snapshot (`snapshot save`: the server's backend as a stream of pieces, the last one ending with
 * the SHA-256 of the whole).
 */
import { Chunk, Effect, Option, Stream } from "effect"
import type { EtcdError } from "../errors.js"
import type * as M from "../proto/index.js"
import { type ClientConnectionShape, fromServiceError, unaryMethod } from "./connection.js"
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

/** One piece of a snapshot stream: its bytes, and the storage version the server reports (3.6+; else "") */
export interface SnapshotPiece {
  readonly blob: Uint8Array
  readonly version: string
}

/** The Maintenance API, as far as the client has it: a member's status and its snapshot stream. */
export interface Maintenance {
  /** the status of the member the client is connected to (etcdctl `endpoint status`) */
  readonly status: () => Effect.Effect<StatusResult, EtcdError>
  /** Maintenance.Snapshot: the pieces in order; interrupting the stream cancels the call */
  readonly snapshot: () => Stream.Stream<SnapshotPiece, EtcdError>
}

const Status = unaryMethod<object, M.StatusResponse>("Maintenance", "Status")
const Snapshot = unaryMethod<object, { blob?: Uint8Array; version?: string }>("Maintenance", "Snapshot")

const snapshotStream = (connection: ClientConnectionShape): Stream.Stream<SnapshotPiece, EtcdError> =>
  Stream.async<SnapshotPiece, EtcdError>((emit) => {
    const call = connection.client.makeServerStreamRequest(
      Snapshot.path,
      Snapshot.serialize,
      Snapshot.deserialize,
      {},
      connection.metadata()
    )
    call.on("data", (r: { blob?: Uint8Array; version?: string }) => {
      void emit(Effect.succeed(Chunk.of({ blob: r.blob ?? new Uint8Array(0), version: r.version ?? "" })))
    })
    call.on("error", (e) => void emit(Effect.fail(Option.some(fromServiceError(e)))))
    call.on("end", () => void emit(Effect.fail(Option.none())))
    return Effect.sync(() => call.cancel())
  })

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
    ),
  snapshot: () => snapshotStream(connection)
})
