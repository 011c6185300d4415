/**
 * The package's public errors are Schema classes: each one encodes to plain JSON and decodes back to
 * an equal instance of its class, and the etcd errors among them carry etcd's gRPC code and text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { BackendError } from "../src/backend/backend.js"
import { BenchError } from "../src/bench/errors.js"
import { LeaseLost } from "../src/client/lease.js"
import {
  WatchCanceled,
  WatchCompacted,
  WatchNoLeader,
  WatchPermissionDenied,
  watchCompacted
} from "../src/client/watch-errors.js"
import { EtcdError, Errors, GrpcCode } from "../src/errors.js"
import { ServeError } from "../src/server/serve-error.js"
import { WatchError } from "../src/watch/errors.js"

// any Schema class of an error: its instances are its Type
type ErrorClass = Schema.Schema<any, any, never> & (abstract new (...args: any) => unknown)

/** samples of every public error that is not a Kubernetes Status (those are Schema classes of their own) */
const samples: ReadonlyArray<readonly [ErrorClass, unknown]> = [
  [EtcdError, Errors.compacted()],
  [EtcdError, new EtcdError({ code: GrpcCode.Unavailable, message: "etcdserver: no leader" })],
  [WatchError, WatchError.of("DuplicateId")],
  [WatchCompacted, watchCompacted(7n, { clusterId: 1n, memberId: 2n ** 63n + 5n, revision: 9n, raftTerm: 2n })],
  [WatchCompacted, watchCompacted(0n)],
  [WatchCanceled, new WatchCanceled({ reason: "x", message: "etcdserver: watch canceled" })],
  [WatchPermissionDenied, new WatchPermissionDenied({ message: "etcdserver: permission denied" })],
  [WatchNoLeader, new WatchNoLeader({ message: "etcdserver: no leader" })],
  [ServeError, new ServeError({ reason: "Listen", message: "listen tcp 127.0.0.1:1: bind: permission denied" })],
  [BackendError, new BackendError({ reason: "Locked", message: "the data dir is locked" })],
  [BenchError, new BenchError({ reason: "connection refused" })],
  [
    LeaseLost,
    new LeaseLost({ id: 2n ** 62n + 1n, reason: "expired", message: "lease 4000000000000001 expired or revoked" })
  ],
  [
    LeaseLost,
    new LeaseLost({
      id: 7n,
      reason: "failed",
      message: "etcdserver: no leader",
      cause: new EtcdError({ code: GrpcCode.Unavailable, message: "etcdserver: no leader" })
    })
  ]
]

describe("public errors as Schema classes", () => {
  it("each one round-trips through its Schema and JSON, to an equal instance of its class", () => {
    for (const [Class, error] of samples) {
      const encoded = Schema.encodeSync(Class)(error)
      const wire = JSON.parse(JSON.stringify(encoded))
      const decoded = Schema.decodeUnknownSync(Class)(wire)
      expect(decoded).toBeInstanceOf(Class)
      expect(decoded).toEqual(error)
      expect((decoded as Error).message).toBe((error as Error).message)
    }
  })

  it("etcd's errors carry etcd's gRPC code and message", () => {
    expect(Schema.encodeSync(EtcdError)(Errors.compacted())).toEqual({
      _tag: "EtcdError",
      code: GrpcCode.OutOfRange,
      message: "etcdserver: mvcc: required revision has been compacted"
    })
    const codes = [
      [watchCompacted(3n), GrpcCode.OutOfRange, "etcdserver: mvcc: required revision has been compacted"],
      [
        new WatchCanceled({ reason: "r", message: "etcdserver: watch canceled" }),
        GrpcCode.Canceled,
        "etcdserver: watch canceled"
      ],
      [
        new WatchPermissionDenied({ message: "etcdserver: permission denied" }),
        GrpcCode.PermissionDenied,
        "etcdserver: permission denied"
      ],
      [new WatchNoLeader({ message: "etcdserver: no leader" }), GrpcCode.Unavailable, "etcdserver: no leader"]
    ] as const
    for (const [e, code, message] of codes) expect([e._tag, e.code, e.message]).toEqual([e._tag, code, message])
    expect([WatchError.of("Compacted").reason, WatchError.of("Compacted").message]).toEqual([
      "Compacted",
      "mvcc: required revision has been compacted"
    ])
  })

  it("decoding refuses what is not one (a code gRPC does not have, a missing message)", () => {
    expect(Either.isLeft(Schema.decodeUnknownEither(EtcdError)({ _tag: "EtcdError", code: 99, message: "x" }))).toBe(
      true
    )
    expect(Either.isLeft(Schema.decodeUnknownEither(EtcdError)({ _tag: "EtcdError", code: 14 }))).toBe(true)
    expect(
      Either.isLeft(
        Schema.decodeUnknownEither(WatchCompacted)({
          _tag: "WatchCompacted",
          code: 1,
          compactRevision: "3",
          message: "m"
        })
      )
    ).toBe(true)
  })
})
