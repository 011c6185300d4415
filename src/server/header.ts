/**
 * etcd's v3rpc `header.fill`: every top-level response carries cluster_id, member_id, raft_term
 * and a revision. Responses nested in a Txn carry only their revision, as etcd's do.
 */
import type { ResponseHeaderInit } from "../proto/messages.js"
import type { MemberIdentity } from "./member.js"

export type MakeHeader = (revision: number) => ResponseHeaderInit

export const makeHeader = (identity: MemberIdentity): MakeHeader => {
  const { clusterId, memberId, raftTerm } = identity
  return (revision) =>
    revision === 0
      ? { cluster_id: clusterId, member_id: memberId, raft_term: raftTerm }
      : { cluster_id: clusterId, member_id: memberId, revision, raft_term: raftTerm }
}

/** The header of a response nested in a Txn: the revision alone. */
export const nestedHeader = (revision: number): ResponseHeaderInit => (revision === 0 ? {} : { revision })
