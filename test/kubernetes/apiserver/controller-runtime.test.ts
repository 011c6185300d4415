/**
 * controller-runtime v0.25 against `etcd-effect apiserver` as a controller developer runs them: the
 * built program on a port and a data dir, and a manager (test/go/controller-runtime, built with
 * Go) with leader election on a Lease, a reconciler over the Widget CRD (a structural schema, the
 * status subresource) that server-side applies a ConfigMap per Widget (`client.Apply`, protobuf
 * for the built-in kinds), writes `Status().Update` and records events.k8s.io/v1 Events. Seeded
 * random creates, spec updates and deletes of 20 Widgets, half before and half after an apiserver
 * restart (SIGTERM, then the same port and data dir); then, once the manager caught up: every
 * Widget's status observes its generation, its ConfigMap holds its size, is controlled by it and
 * managed by "widget-controller" with an Apply entry; its latest reconcile has an Event; the Lease
 * names the manager; and the manager logged no error but the restart's connection errors.
 * ConfigMaps of deleted Widgets stay, owned by a Widget that no longer exists: deleting them is
 * kube-controller-manager's garbage collector's work, which etcd-effect does not run.
 */
import * as fs from "node:fs"
import { hostname } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest"
import { ensureBuilt, tempDir } from "../../server/support/process.js"
import { seededRandom } from "../../support/fault-proxy.js"
import { freePort } from "../../support/ports.js"
import { type ApiServerProcess, startApiServerProcess } from "./apiserver-process.js"
import { goProgram, hasGo } from "./go-programs.js"
import { request, until } from "./support.js"
import { superviseWidgetController, type WidgetController, widgetCrd } from "./widget-controller.js"

const ns = "widgets"
const widgets = `/apis/example.com/v1/namespaces/${ns}/widgets`
/** kube's defaults (15 s, 10 s, 2 s) but a shorter retry: a restart within 10 s keeps the Lease */
const leaderElection = ["-lease", "15s", "-renew", "10s", "-retry", "1s"]

let program = ""
let dir = ""
let apiserver: ApiServerProcess | undefined
let controller: WidgetController | undefined

beforeAll(async () => {
  if (!hasGo) return
  program = await goProgram("widget-controller", "controller-runtime")
  await ensureBuilt()
  dir = tempDir()
}, 900_000)

afterAll(async () => {
  await controller?.stop()
  await apiserver?.stop()
  if (dir !== "") fs.rmSync(dir, { recursive: true, force: true })
})

/** live Widgets' spec.size by name, and the names deleted last */
interface Model {
  readonly live: Map<string, number>
  readonly deleted: Set<string>
}

/** `n` seeded writes: a create where the name is free, else a spec.size update or a delete */
const randomWrites = async (url: string, model: Model, rand: () => number, n: number): Promise<void> => {
  for (let i = 0; i < n; i++) {
    const name = `w${Math.floor(rand() * 20)}`
    const size = Math.floor(rand() * 100)
    if (!model.live.has(name)) {
      const body = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name }, spec: { size } }
      const r = await request(url, "POST", widgets, body)
      expect(r.status, r.text).toBe(201)
      model.live.set(name, size)
      model.deleted.delete(name)
    } else if (rand() < 0.7) {
      const r = await request(
        url,
        "PATCH",
        `${widgets}/${name}`,
        { spec: { size } },
        {
          "content-type": "application/merge-patch+json"
        }
      )
      expect(r.status, r.text).toBe(200)
      model.live.set(name, size)
    } else {
      const r = await request(url, "DELETE", `${widgets}/${name}`)
      expect(r.status, r.text).toBe(200)
      model.live.delete(name)
      model.deleted.add(name)
    }
  }
}

/** what still differs from the reconciled state (empty once the manager caught up) */
const unreconciled = async (url: string): Promise<Array<string>> => {
  const items = async (p: string): Promise<Array<any>> => {
    const r = await request(url, "GET", p)
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.text}`)
    return r.body.items
  }
  const cms = await items(`/api/v1/namespaces/${ns}/configmaps`)
  const events = await items(`/apis/events.k8s.io/v1/namespaces/${ns}/events`)
  const out: Array<string> = []
  for (const w of await items(widgets)) {
    const { generation, name, uid } = w.metadata
    const ready = w.status?.conditions?.find((c: any) => c.type === "Ready")
    if (w.status?.observedGeneration !== generation || w.status?.phase !== "Ready" || ready?.status !== "True")
      out.push(`${name}: generation ${generation}, status ${JSON.stringify(w.status)}`)
    const cm = cms.find((c) => c.metadata.name === `${name}-cfg`)
    const owner = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      name,
      uid,
      controller: true,
      blockOwnerDeletion: true
    }
    if (cm === undefined) out.push(`${name}: no ConfigMap`)
    else if (cm.data?.size !== String(w.spec.size)) out.push(`${name}: size ${w.spec.size}, ConfigMap ${cm.data?.size}`)
    else if (JSON.stringify(cm.metadata.ownerReferences) !== JSON.stringify([owner]))
      out.push(`${name}: ConfigMap owners ${JSON.stringify(cm.metadata.ownerReferences)}`)
    else if (
      !cm.metadata.managedFields?.some(
        (e: any) => e.manager === "widget-controller" && e.operation === "Apply" && e.fieldsV1?.["f:data"]?.["f:size"]
      )
    )
      out.push(`${name}: ConfigMap managedFields ${JSON.stringify(cm.metadata.managedFields)}`)
    const note = `generation ${generation}, size ${w.spec.size}`
    if (!events.some((e) => e.reason === "Reconciled" && e.regarding?.uid === uid && e.note === note))
      out.push(`${name}: no Reconciled event "${note}"`)
  }
  return out
}

describe.skipIf(!hasGo)("controller-runtime v0.25 against etcd-effect apiserver", () => {
  it("a manager reconciles random Widget writes across an apiserver restart", async () => {
    const port = await freePort()
    const dataDir = path.join(dir, "data")
    apiserver = await startApiServerProcess(port, dataDir)
    const url = apiserver.url
    onTestFailed(() => {
      console.log(`apiserver:\n${apiserver?.output()}\nwidget-controller:\n${controller?.stderr().slice(-20_000)}`)
    })
    expect((await request(url, "POST", "/api/v1/namespaces", { metadata: { name: ns } })).status).toBe(201)
    const crd = await request(url, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd)
    expect(crd.status, crd.text).toBe(201)
    await until(async () => (await request(url, "GET", widgets)).status === 200)

    controller = superviseWidgetController(program, ["-server", url, "-namespace", ns, ...leaderElection])
    await controller.printed("leading")

    const model: Model = { live: new Map(), deleted: new Set() }
    const rand = seededRandom(27)
    await randomWrites(url, model, rand, 30)
    expect(await apiserver.stop()).toBe(0)
    apiserver = await startApiServerProcess(port, dataDir)
    await randomWrites(url, model, rand, 30)

    // the apiserver has what the test wrote
    const stored = (await request(url, "GET", widgets)).body.items.map((w: any) => [w.metadata.name, w.spec.size])
    expect(new Map(stored)).toEqual(model.live)
    expect(model.live.size).toBeGreaterThan(5)
    expect(model.deleted.size).toBeGreaterThan(0)

    let left: Array<string> = []
    onTestFailed(() => console.log(`not reconciled:\n${left.join("\n")}`))
    await until(async () => {
      controller!.alive()
      left = await unreconciled(url)
      return left.length === 0
    })

    // ConfigMaps of deleted Widgets: owned by a Widget that is gone (no garbage collector here)
    const liveUids = new Set((await request(url, "GET", widgets)).body.items.map((w: any) => w.metadata.uid as string))
    for (const cm of (await request(url, "GET", `/api/v1/namespaces/${ns}/configmaps`)).body.items) {
      const name = (cm.metadata.name as string).replace(/-cfg$/, "")
      if (model.live.has(name)) continue
      expect(model.deleted.has(name), cm.metadata.name).toBe(true)
      expect(cm.metadata.ownerReferences.map((o: any) => liveUids.has(o.uid))).toEqual([false])
    }

    const lease = await request(url, "GET", `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/widget-controller`)
    expect(lease.body.spec.holderIdentity).toMatch(new RegExp(`^${hostname()}_[0-9a-f-]{36}$`))
    expect(lease.body.spec.leaseDurationSeconds).toBe(15)
    // controller-runtime's leader election records a core/v1 Event on the Lease
    const coreEvents = (await request(url, "GET", `/api/v1/namespaces/${ns}/events`)).body.items
    expect(
      coreEvents.some(
        (e: any) =>
          e.reason === "LeaderElection" &&
          e.involvedObject?.kind === "Lease" &&
          e.message === `${lease.body.spec.holderIdentity} became leader`
      )
    ).toBe(true)

    // nothing the manager logged as an error is an answer of the apiserver: only the restart's
    // broken and refused connections (and the deadlines they made a renewal miss)
    const errors = controller
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{") && JSON.parse(l).level === "error")
      .map((l) => `${JSON.parse(l).msg}: ${JSON.parse(l).error ?? JSON.parse(l).err}`)
    const transport = /connection refused|EOF|connection reset by peer|broken pipe|context deadline exceeded/
    expect(errors.filter((e) => !transport.test(e))).toEqual([])
    console.log(
      `widget-controller: ${controller.starts()} start(s), ${controller.lines.filter((l) => l.startsWith("reconciled ")).length} reconciles, ${errors.length} connection errors logged`
    )
  }, 600_000)
})
