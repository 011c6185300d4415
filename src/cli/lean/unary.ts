/**
 * `get`, `put` and `del` on the lean path: one unary call, printed by the same functions as the
 * full program (commands/kv-output.ts), errors worded as global.ts words them ("Error: <etcd's
 * message>", exit code 1; "context deadline exceeded" past --dial-timeout or --command-timeout).
 *
 * Returns false when the command is better left to the full program: the connection could not be
 * made (grpc-js retries until the dial timeout and reports it its own way), or it broke under a
 * `get` (repeatable; grpc-js' wording of a dropped call is its own). A `put` or `del` whose
 * connection broke after the request went out is not repeated: it reports the break.
 */
import {
  decodeDeleteRangeResponse,
  decodePutResponse,
  decodeRangeResponse,
  DELETE_RANGE_PATH,
  encodeDeleteRange,
  encodePut,
  encodeRange,
  PUT_PATH,
  RANGE_PATH
} from "../../client/lean-kv-codec.js"
import { printDelete, printGet, printPut } from "../commands/kv-output.js"
import type { LeanCommand } from "./argv.js"
import { connect } from "./connect.js"

const DEADLINE_EXCEEDED = 4
const UNAVAILABLE = 14

export const fail = (message: string): void => {
  console.error(`Error: ${message}`)
  process.exitCode = 1
}

type Unary = Exclude<LeanCommand, { _tag: "watch" }>

const SORT_ORDERS = { NONE: 0, ASCEND: 1, DESCEND: 2 } as const
const SORT_TARGETS = { KEY: 0, VERSION: 1, CREATE: 2, MOD: 3, VALUE: 4 } as const

const request = (c: Unary): { path: string; frame: Buffer; print: (body: Uint8Array) => void } => {
  const printing = c.global.settings
  switch (c._tag) {
    case "get": {
      const a = c.args
      return {
        path: RANGE_PATH,
        frame: encodeRange(a.key, {
          ...a,
          sortOrder: a.sort === undefined ? 0 : SORT_ORDERS[a.sort.order],
          sortTarget: a.sort === undefined ? 0 : SORT_TARGETS[a.sort.target]
        }),
        print: (body) => printGet({ ...a, writeOut: printing.writeOut, hex: printing.hex }, decodeRangeResponse(body))
      }
    }
    case "put":
      return {
        path: PUT_PATH,
        frame: encodePut(c.args.key, c.args.value, c.args),
        print: (body) => printPut(printing, decodePutResponse(body))
      }
    case "del":
      return {
        path: DELETE_RANGE_PATH,
        frame: encodeDeleteRange(c.args.key, c.args),
        print: (body) => printDelete(printing, decodeDeleteRangeResponse(body))
      }
  }
}

export const runUnary = async (c: Unary): Promise<boolean> => {
  const connection = await connect(c.global.endpoint, c.global.settings.dialTimeoutMs)
  if (connection === undefined) return false
  if (connection === "timeout") {
    fail("context deadline exceeded")
    return true
  }
  const { frame, path, print } = request(c)
  return new Promise<boolean>((resolve) => {
    let done = false
    const finish = (handled: boolean) => {
      done = true
      clearTimeout(timer)
      connection.close()
      resolve(handled)
    }
    const timer = setTimeout(() => {
      if (done) return
      fail("context deadline exceeded")
      finish(true)
    }, c.global.settings.commandTimeoutMs)
    connection.call(path, frame, (code, message, body) => {
      if (done) return
      if (code === 0 && body !== undefined) {
        try {
          print(body)
        } catch (e) {
          fail(`grpc: error unmarshalling response: ${e instanceof Error ? e.message : String(e)}`)
        }
        return finish(true)
      }
      // the transport's own failure (GrpcConnection words it "<path>: <reason>"), not etcd's status
      if (code === UNAVAILABLE && message.startsWith(`${path}: `) && c._tag === "get") return finish(false)
      fail(code === DEADLINE_EXCEEDED ? "context deadline exceeded" : message)
      finish(true)
    })
  })
}
