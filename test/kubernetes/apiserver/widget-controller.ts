/**
 * The controller-runtime manager of test/go/controller-runtime/cmd/widget-controller as a
 * supervised child process, and the Widget CRD it reconciles. Supervised as a Deployment would
 * run it: controller-runtime exits when it loses its Lease (a renewal that cannot reach the
 * apiserver within RenewDeadline, as an apiserver restart on a loaded machine may cause), and the
 * supervisor starts it again; `starts` counts how often. Any other exit is a failure: `printed`
 * and `alive` then throw with what it printed.
 */
import { type ChildProcess, spawn } from "node:child_process"

export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["size"],
                properties: { size: { type: "integer", minimum: 0 } }
              },
              status: {
                type: "object",
                properties: {
                  observedGeneration: { type: "integer", format: "int64" },
                  phase: { type: "string" },
                  conditions: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    items: {
                      type: "object",
                      required: ["type", "status", "lastTransitionTime", "reason", "message"],
                      properties: {
                        type: { type: "string" },
                        status: { type: "string", enum: ["True", "False", "Unknown"] },
                        observedGeneration: { type: "integer", format: "int64" },
                        lastTransitionTime: { type: "string", format: "date-time" },
                        reason: { type: "string" },
                        message: { type: "string" }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    ]
  }
}

export interface WidgetController {
  /** stdout lines of every run ("leading", "reconciled <ns>/<name> generation <g> size <s>") */
  readonly lines: Array<string>
  /** stderr of every run: controller-runtime's and client-go's JSON log lines */
  stderr(): string
  /** how many times the process was started */
  starts(): number
  /** resolves once a run printed `line` */
  printed(line: string): Promise<void>
  /** throws if it exited other than by losing its Lease */
  alive(): void
  /** SIGTERM to the current run, no restart; resolves when it exited */
  stop(): Promise<void>
}

export const superviseWidgetController = (program: string, args: ReadonlyArray<string>): WidgetController => {
  const lines: Array<string> = []
  const waiters = new Set<() => void>()
  let stderr = ""
  let starts = 0
  let stopping = false
  let died: Error | undefined
  let child: ChildProcess
  let exited: Promise<void>
  const run = () => {
    starts++
    child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] })
    const stderrBefore = stderr.length
    let buf = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buf += chunk
      let i: number
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, i))
        buf = buf.slice(i + 1)
      }
      for (const w of waiters) w()
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        const lost = stderr.slice(stderrBefore).includes("widget-controller: leader election lost")
        stderr += `[widget-controller exited: ${code ?? signal}]\n`
        if (!stopping && lost) run()
        else if (!stopping) died = new Error(`widget-controller exited (${code ?? signal}):\n${stderr.slice(-4000)}`)
        for (const w of waiters) w()
        resolve()
      })
    )
  }
  run()
  return {
    lines,
    stderr: () => stderr,
    starts: () => starts,
    printed: (line) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (lines.includes(line) || died !== undefined) {
            waiters.delete(check)
            if (died === undefined) resolve()
            else reject(died)
          }
        }
        waiters.add(check)
        check()
      }),
    alive: () => {
      if (died !== undefined) throw died
    },
    stop: () => {
      stopping = true
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    }
  }
}
