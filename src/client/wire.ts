/**
 * Between proto-loader's decoded messages (int64 as decimal strings, bytes as Buffer) and the
 * client's shapes (bigint, Uint8Array). Unary calls only; the Watch hot path has its own codec.
 */
import type * as M from "../proto/index.js"
import { EMPTY_BYTES, emptyHeader, type KeyValue, type ResponseHeader } from "./key-value.js"

export const big = (value: string | number | null | undefined): bigint =>
  value === null || value === undefined || value === "" ? 0n : BigInt(value)

export const fromWireHeader = (h: M.ResponseHeader | null | undefined): ResponseHeader =>
  h === null || h === undefined
    ? emptyHeader
    : {
        clusterId: big(h.cluster_id),
        memberId: big(h.member_id),
        revision: big(h.revision),
        raftTerm: big(h.raft_term)
      }

export const fromWireKv = (kv: M.KeyValue): KeyValue => ({
  key: kv.key ?? EMPTY_BYTES,
  createRevision: big(kv.create_revision),
  modRevision: big(kv.mod_revision),
  version: big(kv.version),
  value: kv.value ?? EMPTY_BYTES,
  lease: big(kv.lease)
})

/** int64 for proto-loader's encoder: decimal strings keep all 64 bits. */
export const i64 = (value: bigint | number | undefined): string =>
  value === undefined ? "0" : BigInt(value).toString()
