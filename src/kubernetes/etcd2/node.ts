/**
 * etcd v2's response body (client v2 `Response` / `Node`) as effect/Schema, and the response as the
 * watcher sees it: action, node, prevNode and the X-Etcd-Index header. Indices are JSON numbers
 * (exact below 2^53, which v2's raft index never reaches in practice).
 */
import { Schema } from "effect"

/** An etcd v2 node: a key with its value, or a directory with its children, and its indices and TTL. */
export interface Node {
  readonly key: string
  readonly value?: string | undefined
  readonly dir?: boolean | undefined
  readonly nodes?: ReadonlyArray<Node> | undefined
  readonly createdIndex: number
  readonly modifiedIndex: number
  readonly ttl?: number | undefined
  readonly expiration?: string | undefined
}

const Index = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

/** The `Node` Schema (recursive through `nodes`). */
export const Node: Schema.Schema<Node> = Schema.Struct({
  key: Schema.String,
  value: Schema.optional(Schema.String),
  dir: Schema.optional(Schema.Boolean),
  nodes: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<Node> => Node))),
  createdIndex: Index,
  modifiedIndex: Index,
  ttl: Schema.optional(Schema.Number),
  expiration: Schema.optional(Schema.String)
})

/** v2 actions (etcd/store/event.go) plus "get", the initial state of a watch */
export type Action = "get" | "create" | "set" | "update" | "compareAndSwap" | "delete" | "compareAndDelete" | "expire"

/** The body of a v2 response: the action, the node and its previous state. */
export const ResponseBody = Schema.Struct({
  action: Schema.String,
  node: Node,
  prevNode: Schema.optional(Node)
})
/** A v2 response body as a value. */
export type ResponseBody = typeof ResponseBody.Type

/** One v2 response: the body and `X-Etcd-Index` (etcd's index when it answered). */
export interface Response {
  readonly action: string
  readonly node: Node
  readonly prevNode?: Node | undefined
  readonly etcdIndex: number
}

/** The leaves under a node (a recursive get's objects, depth first in etcd's order); directories are not objects. */
export const leaves = (node: Node, out: Array<Node> = []): Array<Node> => {
  if (node.dir === true) {
    for (const n of node.nodes ?? []) leaves(n, out)
  } else {
    out.push(node)
  }
  return out
}
