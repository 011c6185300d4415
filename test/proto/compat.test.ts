/**
 * Our proto/ against the etcd3 npm package's copy of etcd's protos, message by message and field by
 * field (names, numbers, types, repeated-ness, oneof membership), enum by enum, and service by
 * service (methods, request/response types, streaming). The comparison is shown to fail on altered
 * copies.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { CompareResult, CompareTarget, SortOrder, SortTarget } from "../../src/mvcc/kv.js"
import { EventType } from "../../src/mvcc/key-value.js"
import * as proto from "../../src/proto/index.js"
import { describeRoot, diffSchemas, loadRoot, readSources, rootFromSources, type Schema } from "./schema.js"

const etcd3ProtoDir = join(dirname(createRequire(import.meta.url).resolve("etcd3/package.json")), "proto")

const ours = describeRoot(loadRoot(proto.protoDir))
const theirs = describeRoot(loadRoot(etcd3ProtoDir))

/**
 * Where ours and etcd3 1.1.2's copy differ, decided from etcd's own api/etcdserverpb/rpc.proto on
 * release-3.4/3.5/3.6: etcd3's copy predates these additions, all of which are in etcd 3.6 (older
 * servers and clients skip unknown fields, so they are wire-compatible with 3.4/3.5 too).
 * Nothing is only in theirs.
 */
const knownDifferences = [
  "field etcdserverpb.AuthUserAddRequest.hashedPassword: only in ours", // 3.5
  "field etcdserverpb.AuthUserChangePasswordRequest.hashedPassword: only in ours", // 3.5
  "field etcdserverpb.HashKVResponse.hash_revision: only in ours", // 3.6
  "field etcdserverpb.SnapshotResponse.version: only in ours", // 3.6
  "field etcdserverpb.StatusResponse.storageVersion: only in ours", // 3.6
  "field etcdserverpb.StatusResponse.dbSizeQuota: only in ours", // 3.6
  "field etcdserverpb.StatusResponse.downgradeInfo: only in ours", // 3.6
  "message etcdserverpb.DowngradeInfo: only in ours", // 3.6, the type of StatusResponse.downgradeInfo
  "message etcdserverpb.DowngradeVersionTestRequest: only in ours" // 3.6, test-only in etcd
].sort()

const enumValues = (schema: Schema, name: string): Record<string, number> =>
  Object.fromEntries([...(schema.enums.get(name) ?? [])].map(([n, v]) => [v, n]))

describe("proto/ matches etcd's v3 API", () => {
  it("loads a comparable amount of both sides (guards against an empty comparison)", () => {
    expect(ours.messages.size).toBeGreaterThan(100)
    expect(theirs.messages.size).toBeGreaterThan(100)
    expect(ours.services.size).toBe(6)
    const fields = [...ours.messages.values()].reduce((n, m) => n + m.size, 0)
    expect(fields).toBeGreaterThan(200)
  })

  it("every message, field, enum, service and method equals etcd3's copy, except the documented 3.5/3.6 additions", () => {
    expect(diffSchemas(ours, theirs).sort()).toEqual(knownDifferences)
  })

  it("has every service and rpc of etcd 3.6 with its streaming shape", () => {
    const methods = Object.fromEntries(
      [...ours.services].map(([svc, ms]) => [
        svc,
        [...ms].map(([m, d]) => `${d.requestStream ? "stream " : ""}${m}${d.responseStream ? " stream" : ""}`)
      ])
    )
    expect(methods).toEqual({
      "etcdserverpb.KV": ["Range", "Put", "DeleteRange", "Txn", "Compact"],
      "etcdserverpb.Watch": ["stream Watch stream"],
      "etcdserverpb.Lease": ["LeaseGrant", "LeaseRevoke", "stream LeaseKeepAlive stream", "LeaseTimeToLive", "LeaseLeases"],
      "etcdserverpb.Cluster": ["MemberAdd", "MemberRemove", "MemberUpdate", "MemberList", "MemberPromote"],
      "etcdserverpb.Maintenance": [
        "Alarm", "Status", "Defragment", "Hash", "HashKV", "Snapshot stream", "MoveLeader", "Downgrade"
      ],
      "etcdserverpb.Auth": [
        "AuthEnable", "AuthDisable", "AuthStatus", "Authenticate", "UserAdd", "UserGet", "UserList", "UserDelete",
        "UserChangePassword", "UserGrantRole", "UserRevokeRole", "RoleAdd", "RoleGet", "RoleList", "RoleDelete",
        "RoleGrantPermission", "RoleRevokePermission"
      ]
    })
  })

  it("spells enum values as etcd does and agrees with the numeric consts of src/mvcc and src/proto", () => {
    for (const [name, values] of ours.enums) {
      for (const v of values.values()) expect(v, name).toMatch(/^[A-Z][A-Z0-9_]*$/)
    }
    expect(enumValues(ours, "mvccpb.Event.EventType")).toEqual(EventType)
    expect(enumValues(ours, "etcdserverpb.RangeRequest.SortOrder")).toEqual(SortOrder)
    expect(enumValues(ours, "etcdserverpb.RangeRequest.SortTarget")).toEqual(SortTarget)
    expect(enumValues(ours, "etcdserverpb.Compare.CompareResult")).toEqual(CompareResult)
    expect(enumValues(ours, "etcdserverpb.Compare.CompareTarget")).toEqual(CompareTarget)
    expect(enumValues(ours, "mvccpb.Event.EventType")).toEqual(proto.EventType)
    expect(enumValues(ours, "etcdserverpb.RangeRequest.SortOrder")).toEqual(proto.SortOrder)
    expect(enumValues(ours, "etcdserverpb.RangeRequest.SortTarget")).toEqual(proto.SortTarget)
    expect(enumValues(ours, "etcdserverpb.Compare.CompareResult")).toEqual(proto.CompareResult)
    expect(enumValues(ours, "etcdserverpb.Compare.CompareTarget")).toEqual(proto.CompareTarget)
    expect(enumValues(ours, "etcdserverpb.WatchCreateRequest.FilterType")).toEqual(proto.FilterType)
    expect(enumValues(ours, "etcdserverpb.AlarmType")).toEqual({ NONE: 0, NOSPACE: 1, CORRUPT: 2 })
    expect(enumValues(ours, "etcdserverpb.AlarmRequest.AlarmAction")).toEqual({ GET: 0, ACTIVATE: 1, DEACTIVATE: 2 })
    expect(enumValues(ours, "etcdserverpb.DowngradeRequest.DowngradeAction"))
      .toEqual({ VALIDATE: 0, ENABLE: 1, CANCEL: 2 })
    expect(enumValues(ours, "authpb.Permission.Type")).toEqual({ READ: 0, WRITE: 1, READWRITE: 2 })
  })

  it("is plain proto3 in etcd's packages, without gateway or gogoproto options", () => {
    const src = readSources(proto.protoDir)
    for (const [file, pkg] of [["rpc", "etcdserverpb"], ["kv", "mvccpb"], ["auth", "authpb"]] as const) {
      expect(src[file]).toMatch(/^syntax = "proto3";$/m)
      expect(src[file]).toMatch(new RegExp(`^package ${pkg};$`, "m"))
      expect(src[file]).not.toMatch(/gogoproto|google\.api|^\s*option\b/m)
    }
  })
})

describe("the comparison detects differences", () => {
  const pristine = readSources(proto.protoDir)

  it("an unaltered in-memory copy compares equal to the loaded files", () => {
    expect(diffSchemas(describeRoot(rootFromSources(pristine)), ours)).toEqual([])
  })

  const alterations: ReadonlyArray<readonly [string, "rpc" | "kv" | "auth", string, string, string]> = [
    ["field number", "rpc", "int64 limit = 3;", "int64 limit = 30;", "field etcdserverpb.RangeRequest.limit: id 30 → 3"],
    ["field type", "rpc", "int64 watch_id = 7;", "uint64 watch_id = 7;",
      "field etcdserverpb.WatchCreateRequest.watch_id: type uint64 → int64"],
    ["message type", "rpc", "mvccpb.KeyValue prev_kv = 2;", "mvccpb.Event prev_kv = 2;",
      "field etcdserverpb.PutResponse.prev_kv: type mvccpb.Event → mvccpb.KeyValue"],
    ["repeated-ness", "rpc", "repeated mvccpb.KeyValue kvs = 2;", "mvccpb.KeyValue kvs = 2;",
      "field etcdserverpb.RangeResponse.kvs: repeated false → true"],
    ["oneof membership", "rpc", "oneof target_union {", "oneof target_value {",
      "field etcdserverpb.Compare.lease: oneof target_value → target_union"],
    ["field name", "kv", "bytes value = 5;", "bytes val = 5;", "field mvccpb.KeyValue.val: only in ours"],
    ["scalar in another file", "kv", "int64 lease = 6;", "int32 lease = 6;", "field mvccpb.KeyValue.lease: type int32 → int64"],
    ["enum value number", "rpc", "NOT_EQUAL = 3;", "NOT_EQUAL = 4;",
      "value of etcdserverpb.Compare.CompareResult notequal=4: only in ours"],
    ["enum value name", "rpc", "NODELETE = 1;", "NOREMOVE = 1;",
      "value of etcdserverpb.WatchCreateRequest.FilterType noremove=1: only in ours"],
    ["missing method", "rpc", "  rpc MemberPromote(MemberPromoteRequest) returns (MemberPromoteResponse);\n", "",
      "method etcdserverpb.Cluster.MemberPromote: only in theirs"],
    ["streaming flag", "rpc", "rpc LeaseKeepAlive(stream LeaseKeepAliveRequest)", "rpc LeaseKeepAlive(LeaseKeepAliveRequest)",
      "method etcdserverpb.Lease.LeaseKeepAlive: requestStream false → true"],
    ["response type", "rpc", "rpc Compact(CompactionRequest) returns (CompactionResponse);",
      "rpc Compact(CompactionRequest) returns (DefragmentResponse);",
      "method etcdserverpb.KV.Compact: responseType etcdserverpb.DefragmentResponse → etcdserverpb.CompactionResponse"]
  ]

  it.each(alterations)("%s", (_what, file, from, to, expected) => {
    expect(pristine[file]).toContain(from)
    const altered = { ...pristine, [file]: pristine[file].replace(from, to) }
    const diff = diffSchemas(describeRoot(rootFromSources(altered)), theirs)
    expect(diff).toContain(expected)
    expect(diff.length).toBeGreaterThan(knownDifferences.length)
  })
})
