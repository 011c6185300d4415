/**
 * What `get`, `put` and `del` print for an answer (etcdctl's printer_simple.go / printer_json.go),
 * as plain functions: the full program (kv.ts) and the lean path (src/cli/lean/) print
 * through the same code, so their output cannot drift apart.
 */
import type { DeleteResult, PutResult, RangeResult } from "../../client/index.js"
import { bytesText, headerJson, json, kvJson, kvLines, type PrintOptions, write } from "./output.js"

export interface GetPrintOptions extends PrintOptions {
  readonly countOnly: boolean
  readonly keysOnly: boolean
  readonly printValueOnly: boolean
}

export const printGet = (o: GetPrintOptions, res: RangeResult): void => {
  if (o.writeOut === "json") {
    const body: Record<string, unknown> = { header: headerJson(res.header) }
    if (res.kvs.length > 0) body["kvs"] = res.kvs.map(kvJson)
    if (res.more) body["more"] = true
    if (res.count !== 0n) body["count"] = res.count
    return write(`${json(body)}\n`)
  }
  if (o.countOnly) return write(`${res.count}\n`)
  let out = ""
  for (const kv of res.kvs) {
    out += o.printValueOnly ? `${bytesText(kv.value, o.hex)}\n` : kvLines(kv, { keysOnly: o.keysOnly, hex: o.hex })
  }
  write(out)
}

export const printPut = (o: PrintOptions, r: PutResult): void => {
  if (o.writeOut === "json") {
    write(`${json({ header: headerJson(r.header), ...(r.prevKv ? { prev_kv: kvJson(r.prevKv) } : {}) })}\n`)
  } else {
    write("OK\n")
    if (r.prevKv !== undefined) write(kvLines(r.prevKv, { hex: o.hex }))
  }
}

export const printDelete = (o: PrintOptions, res: DeleteResult): void => {
  if (o.writeOut === "json") {
    const body: Record<string, unknown> = { header: headerJson(res.header) }
    if (res.deleted !== 0n) body["deleted"] = res.deleted
    if (res.prevKvs.length > 0) body["prev_kvs"] = res.prevKvs.map(kvJson)
    return write(`${json(body)}\n`)
  }
  write(`${res.deleted}\n${res.prevKvs.map((kv) => kvLines(kv, { hex: o.hex })).join("")}`)
}
