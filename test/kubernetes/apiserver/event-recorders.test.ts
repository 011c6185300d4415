/**
 * client-go's two event recorders against our apiserver (test/go/kubernetes/cmd/eventrecorder):
 * tools/record creates a core/v1 Event and PATCHes (strategic merge) its count to 3;
 * tools/events creates an events.k8s.io/v1 Event and PATCHes a series (count 2) onto it. Each
 * Event reads back through the other group too.
 */
import { execFile } from "node:child_process"
import { beforeAll, describe, expect, it } from "vitest"
import { goProgram, hasGo } from "./go-programs.js"
import { newNamespace, onApiServer, request } from "./support.js"

const server = onApiServer()
let program = ""

beforeAll(async () => {
  if (hasGo) program = await goProgram("eventrecorder")
}, 600_000)

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(program, [...args], { timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr })
    )
  })

describe.skipIf(!hasGo)("client-go event recorders", () => {
  it("tools/record aggregates a core/v1 Event's count; tools/events adds a series to an events.k8s.io/v1 Event", async () => {
    const ns = await newNamespace(server().url, "rec")
    const r = await run(["-server", server().url, "-namespace", ns, "-timeout", "30s"])
    expect(r.code, r.stderr).toBe(0)
    const [legacy, modern] = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    // read back by the typed clientset in protobuf, client-go's default: typed objects decoded from
    // protobuf carry no apiVersion/kind (as from kube-apiserver); each version's own fields tell them apart
    expect(legacy).toMatchObject({
      reason: "Legacy",
      count: 3,
      source: { component: "eventrecorder" },
      involvedObject: { kind: "ConfigMap", name: "recorded", namespace: ns }
    })
    expect(modern).toMatchObject({
      reason: "Modern",
      action: "Recording",
      reportingController: "example.com/eventrecorder",
      series: { count: 2 },
      regarding: { kind: "ConfigMap", name: "recorded", namespace: ns }
    })
    expect(modern.eventTime).toMatch(/\.\d{6}Z$/)
    // each through the other group
    const legacyAsV1 = await request(
      server().url,
      "GET",
      `/apis/events.k8s.io/v1/namespaces/${ns}/events/${legacy.metadata.name}`
    )
    expect(legacyAsV1.body).toMatchObject({ deprecatedCount: 3, note: legacy.message })
    const modernAsCore = await request(server().url, "GET", `/api/v1/namespaces/${ns}/events/${modern.metadata.name}`)
    expect(modernAsCore.body).toMatchObject({
      reportingComponent: "example.com/eventrecorder",
      message: modern.note,
      series: { count: 2 }
    })
  })
})
