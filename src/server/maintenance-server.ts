/**
 * The Maintenance and Cluster services for one member (etcd's v3rpc/maintenance.go, member.go).
 *
 * - Status: the etcd version whose API behaviour this server matches (see API_VERSION), db sizes,
 *   this member as leader, raft term; the raft index is the store revision (there is no raft log).
 * - Alarm: GET, ACTIVATE, DEACTIVATE on the persisted alarms (alarms.ts); Status lists them in
 *   `errors` as etcd's AlarmMember.String() does ("memberID:<id> alarm:NOSPACE ").
 * - Hash / HashKV: see hash.ts. Defragment: the backend's. Snapshot: the backend's consistent
 *   copy as etcd's bbolt database with its buckets and encodings, then its sha256, in 32 KiB pieces
 *   (snapshot/etcd-snapshot.ts): etcdctl and etcdutl status and restore read it.
 * - MemberList: this member, with its advertised client URLs.
 * - Auth (etcd 3.4's authMaintenanceServer): Defragment, Hash, HashKV and Snapshot need a user
 *   with the root role, and answer the auth package's raw errors ("auth: permission denied",
 *   code Unknown), as etcd 3.4 lets them through; Alarm fails only on a bad token (raft resolves
 *   it, with the gRPC spelling); Status checks nothing.
 */
import { Effect } from "effect"
import type { BackendError, BackendShape } from "../backend/backend.js"
import { EtcdError, GrpcCode } from "../errors.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import { type CallRunner, writeAll } from "./grpc-bridge.js"
import { hashBackend, hashKV } from "./hash.js"
import type { MakeHeader } from "./header.js"
import { toNumber } from "./kv-pb.js"
import type { MemberIdentity } from "./member.js"
import { type AlarmMember, alarmName, type Alarms, AlarmType } from "./alarms.js"
import { rawAuthError } from "../auth/errors.js"
import { etcdSnapshot, messagesOf } from "./snapshot/etcd-snapshot.js"
import { type AuthGuard, authInfoGrpc, authInfoOf, type CallWithMetadata, needsAuth } from "./auth-guard.js"

/**
 * The etcd release whose v3 API behaviour this server matches: requested progress only when every
 * watcher is synced (3.5.13), future start revisions (3.5.22), negative start revisions rejected
 * in-band (3.5.24). Kubernetes reads it to enable consistent reads from its watch cache.
 */
export const API_VERSION = "3.5.24"

/** etcd's snapshotSendBufferSize. */
export const SNAPSHOT_CHUNK_BYTES = 32 * 1024

export interface MemberInfo {
  readonly identity: MemberIdentity
  readonly name: string
  readonly clientUrls: ReadonlyArray<string>
  readonly peerUrls: ReadonlyArray<string>
}

const backendFailure = (e: BackendError): EtcdError =>
  new EtcdError({ code: GrpcCode.Unavailable, message: `etcdserver: ${e.message}` })

type AnyRequest = Record<string, unknown>

/** gogo's text form of an AlarmMember, which etcd puts in StatusResponse.errors. */
const alarmText = (a: AlarmMember): string => `memberID:${a.memberID} alarm:${alarmName(a.alarm)} `

export const makeMaintenanceService = (
  runner: CallRunner,
  store: MvccStoreShape,
  backend: BackendShape,
  member: MemberInfo,
  header: MakeHeader,
  alarms: Alarms,
  guard: AuthGuard
) => {
  /** etcd 3.4's isAuthenticated: the raw auth error, code Unknown */
  const adminOnly = (call: CallWithMetadata): Effect.Effect<void, EtcdError> => {
    if (!needsAuth(guard, call)) return Effect.void
    return authInfoOf(guard, call).pipe(
      Effect.flatMap((ai) => {
        const e = guard.store.isAdminPermitted(ai)
        return e === undefined ? Effect.void : Effect.fail(e)
      }),
      Effect.mapError(rawAuthError)
    )
  }
  return {
    Status: runner.unary<AnyRequest, object>("Status", () =>
      Effect.sync(() => {
        const rev = store.rev()
        return {
          header: header(rev),
          version: API_VERSION,
          dbSize: backend.sizeBytes(),
          leader: member.identity.memberId,
          raftIndex: rev,
          raftTerm: member.identity.raftTerm,
          raftAppliedIndex: rev,
          dbSizeInUse: backend.sizeInUseBytes(),
          errors: alarms.list(AlarmType.NONE).map(alarmText)
        }
      })
    ),

    Alarm: runner.unary<AnyRequest, object>("Alarm", (req, call) =>
      Effect.zipRight(
        needsAuth(guard, call) ? Effect.asVoid(authInfoGrpc(guard, call)) : Effect.void,
        Effect.suspend(() => {
          const type = Number(req["alarm"] ?? 0)
          const memberID = String(req["memberID"] ?? "0")
          const answer = (list: ReadonlyArray<AlarmMember>) => ({ header: header(store.rev()), alarms: list })
          const one = (m: AlarmMember | undefined) => answer(m === undefined ? [] : [m])
          switch (Number(req["action"] ?? 0)) {
            case 1:
              return alarms.activate(memberID, type).pipe(Effect.mapError(backendFailure), Effect.map(one))
            case 2:
              return alarms.deactivate(memberID, type).pipe(Effect.mapError(backendFailure), Effect.map(one))
            default:
              return Effect.succeed(answer(alarms.list(type)))
          }
        })
      )
    ),

    // etcd answers an empty DefragmentResponse (no header)
    Defragment: runner.unary<AnyRequest, object>("Defragment", (_req, call) =>
      Effect.zipRight(adminOnly(call), Effect.mapError(backend.defragment, backendFailure)).pipe(Effect.as({}))
    ),

    Hash: runner.unary<AnyRequest, object>("Hash", (_req, call) =>
      Effect.zipRight(
        adminOnly(call),
        Effect.sync(() => ({ header: header(store.rev()), hash: hashBackend(backend) }))
      )
    ),

    HashKV: runner.unary<AnyRequest, object>("HashKV", (req, call) =>
      Effect.zipRight(
        adminOnly(call),
        Effect.suspend(() => {
          const r = hashKV(store, backend, toNumber(req["revision"] as string))
          if (r instanceof EtcdError) return Effect.fail(r)
          return Effect.succeed({
            header: header(r.currentRevision),
            hash: r.hash,
            compact_revision: r.compactRevision,
            hash_revision: r.hashRevision
          })
        })
      )
    ),

    Snapshot: runner.serverStream<AnyRequest, object>("Snapshot", (call) =>
      Effect.gen(function* () {
        yield* adminOnly(call)
        // the revision and the buckets in one synchronous pass: one consistent view
        const { rev, pieces } = yield* Effect.sync(() => {
          const rev = store.rev()
          return { rev, pieces: etcdSnapshot(backend, member, rev, API_VERSION) }
        })
        const hdr = header(rev)
        let remaining = pieces.reduce((n, p) => n + p.byteLength, 0)
        for (const blob of messagesOf(pieces, SNAPSHOT_CHUNK_BYTES)) {
          remaining -= blob.byteLength
          yield* writeAll(call, [{ header: hdr, remaining_bytes: remaining, blob }])
        }
      })
    )
  }
}

export const makeClusterService = (runner: CallRunner, member: MemberInfo, header: MakeHeader) => ({
  MemberList: runner.unary<AnyRequest, object>("MemberList", () =>
    Effect.sync(() => ({
      // etcd's cluster header has no revision
      header: header(0),
      members: [
        {
          ID: member.identity.memberId,
          name: member.name,
          peerURLs: member.peerUrls,
          clientURLs: member.clientUrls
        }
      ]
    }))
  )
})
