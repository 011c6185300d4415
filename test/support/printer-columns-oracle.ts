/**
 * Kubernetes' own CRD table printing and client-go's JSONPath as a test oracle:
 * test/go/kubernetes/cmd/printer-columns (apiextensions-apiserver's table convertor and
 * k8s.io/client-go/util/jsonpath v0.37.2), built with Go and cached (go-programs.ts), one process
 * per test file. `ask` sends one request line and resolves with its answer line; answers come in
 * the order requests were written. The Go program's header documents the protocol.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { Schema } from "effect"
import { goProgram } from "../kubernetes/apiserver/go-programs.js"

export interface PrinterColumnsRequest {
  readonly columns: ReadonlyArray<{ name: string; type: string; jsonPath: string; description?: string }>
  readonly object: unknown
  readonly template: string
}

export const PrinterColumnsAnswer = Schema.Struct({
  cells: Schema.NullOr(Schema.Array(Schema.Unknown)),
  tableError: Schema.optional(Schema.String),
  results: Schema.NullOr(Schema.Array(Schema.Array(Schema.Unknown))),
  error: Schema.optional(Schema.String),
  text: Schema.String,
  textError: Schema.optional(Schema.String),
  parseError: Schema.optional(Schema.String)
})
export type PrinterColumnsAnswer = typeof PrinterColumnsAnswer.Type

export interface PrinterColumnsOracle {
  readonly ask: (request: PrinterColumnsRequest) => Promise<PrinterColumnsAnswer>
  readonly close: () => void
}

export const startPrinterColumnsOracle = async (): Promise<PrinterColumnsOracle> => {
  const bin = await goProgram("printer-columns")
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] })
  const waiting: Array<{ resolve: (a: PrinterColumnsAnswer) => void; reject: (e: Error) => void }> = []
  const decode = Schema.decodeUnknownSync(Schema.parseJson(PrinterColumnsAnswer))
  createInterface({ input: child.stdout }).on("line", (line) => {
    const w = waiting.shift()
    if (w === undefined) return
    try {
      w.resolve(decode(line))
    } catch (e) {
      w.reject(e as Error)
    }
  })
  child.on("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`printer-columns exited (${code})`))
  })
  return {
    ask: (request) =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject })
        child.stdin.write(`${JSON.stringify(request)}\n`)
      }),
    close: () => {
      child.stdin.end()
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }
}
