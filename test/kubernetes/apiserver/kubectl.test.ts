/**
 * kubectl (the machine's, /usr/bin/kubectl) against `etcd-effect apiserver` started as the built
 * program: apply -f of a CRD and of objects, get (Table), get -o json, get -w printing changes,
 * delete, get --raw of a watch with bookmarks; SIGTERM stops it with exit 0.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt, mainJs } from "../../server/support/process.js"
import { hasKubectl, KUBECTL, runKubectl } from "./clients.js"

/**
 * The tests below are the steps of one kubectl session against one `etcd-effect apiserver`, in
 * the order written: apply makes the CRD and the objects the later steps get, watch and delete,
 * and the last step stops the server. A shuffled run keeps this order (`shuffle: false`); the
 * files around it still move.
 */
describe.skipIf(!hasKubectl && process.env["CI"] === undefined)("apiserver: kubectl", { shuffle: false }, () => {
  let proc: ChildProcess
  let server = ""
  let home = ""
  let stderr = ""

  const kubectl = (args: ReadonlyArray<string>, input?: string) => runKubectl(server, home, args, input)

  // kubectl before 1.27 (Debian bookworm's kubernetes-client is 1.20) validates `apply` with the
  // protobuf OpenAPI v2 document, newer kubectl with OpenAPI v3: the server serves both
  const apply = (file: string) => kubectl(["apply", "-f", file])

  const write = (name: string, text: string) => {
    const p = path.join(home, name)
    fs.writeFileSync(p, text)
    return p
  }

  beforeAll(async () => {
    await ensureBuilt()
    home = fs.mkdtempSync(path.join(os.tmpdir(), "kubectl-home-"))
    proc = spawn(process.execPath, [mainJs, "apiserver", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] })
    proc.stderr!.on("data", (d) => (stderr += String(d)))
    server = await new Promise<string>((resolve, reject) => {
      let out = ""
      proc.stdout!.on("data", (d) => {
        out += String(d)
        const m = /serving on (http:\/\/\S+)/.exec(out)
        if (m !== null) resolve(m[1]!)
      })
      proc.on("exit", (code) => reject(new Error(`apiserver exited ${code}: ${stderr}`)))
    })
  }, 240_000)

  afterAll(async () => {
    if (proc.exitCode === null) {
      proc.kill("SIGKILL")
      await new Promise((r) => proc.once("exit", r))
    }
    fs.rmSync(home, { recursive: true, force: true })
  })

  const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
`
  const objects = (size: number) => `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: ${size}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm1, labels: {app: demo}}
data: {a: b}
`

  it("apply -f a CRD and objects; get (Table with the CRD's columns), get by short name, get -o json; apply again configures", async () => {
    const c = await apply(write("crd.yaml", crd))
    expect(c.stderr).toBe("")
    expect(c.stdout.trim()).toBe("customresourcedefinition.apiextensions.k8s.io/widgets.example.com created")
    const o = await apply(write("objs.yaml", objects(3)))
    expect(o.stdout.trim().split("\n")).toEqual(["widget.example.com/w1 created", "configmap/cm1 created"])
    const get = await kubectl(["get", "widgets"])
    expect(get.stdout.split("\n")[0]!.split(/\s+/)).toEqual(["NAME", "SIZE"])
    expect(get.stdout.split("\n")[1]!.split(/\s+/)).toEqual(["w1", "3"])
    const short = await kubectl(["get", "wd", "w1", "-o", "json"])
    const w = JSON.parse(short.stdout)
    expect(w).toMatchObject({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w1", namespace: "default", generation: 1 },
      spec: { size: 3 }
    })
    const cms = await kubectl(["get", "cm", "-l", "app=demo"])
    expect(cms.stdout).toMatch(/^NAME\s+DATA\s+AGE\ncm1\s+1\s+\d+s\n$/)
    const again = await apply(write("objs.yaml", objects(4)))
    expect(again.stdout.trim().split("\n")).toEqual(["widget.example.com/w1 configured", "configmap/cm1 unchanged"])
    const after = JSON.parse((await kubectl(["get", "widget", "w1", "-o", "json"])).stdout)
    expect(after.spec.size).toBe(4)
    expect(after.metadata.generation).toBe(2)
  })

  it("get -w prints the changes as they happen", async () => {
    const watcher = spawn(KUBECTL, ["--server", server, "get", "configmaps", "-w", "--output-watch-events"], {
      env: { HOME: home, PATH: process.env["PATH"] ?? "", KUBECONFIG: path.join(home, "none") }
    })
    let out = ""
    watcher.stdout.on("data", (d) => (out += String(d)))
    const waitFor = async (re: RegExp) => {
      const t = Date.now()
      while (!re.test(out)) {
        if (Date.now() - t > 15_000) throw new Error(`kubectl get -w printed: ${out}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    try {
      await waitFor(/ADDED\s+cm1/)
      await apply(write("cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm2}\ndata: {x: '1', y: '2'}\n"))
      await waitFor(/ADDED\s+cm2\s+2/)
      await kubectl(["delete", "configmap", "cm2"])
      await waitFor(/DELETED\s+cm2/)
    } finally {
      watcher.kill()
    }
  })

  it("get --raw of a watch with bookmarks: the initial events, then the annotated end bookmark", async () => {
    const r = await kubectl([
      "get",
      "--raw",
      "/apis/example.com/v1/namespaces/default/widgets?watch=1&allowWatchBookmarks=true&timeoutSeconds=1"
    ])
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.type)).toEqual(["ADDED", "BOOKMARK"])
    expect(lines[1].object).toMatchObject({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { annotations: { "k8s.io/initial-events-end": "true" } }
    })
  })

  it("delete removes objects and the CRD (its resource is no longer served); SIGTERM exits 0", async () => {
    const d = await kubectl(["delete", "widget", "w1"])
    expect(d.stdout.trim()).toBe('widget.example.com "w1" deleted')
    expect((await kubectl(["get", "widgets"])).stderr.trim()).toBe("No resources found in default namespace.")
    const dc = await kubectl(["delete", "crd", "widgets.example.com"])
    expect(dc.stdout.trim()).toBe('customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted')
    const gone = await kubectl(["get", "widgets"])
    expect(gone.code).not.toBe(0)
    const code = await new Promise<number | null>((resolve) => {
      proc.once("exit", (c) => resolve(c))
      proc.kill("SIGTERM")
    })
    expect(code).toBe(0)
  })
})
