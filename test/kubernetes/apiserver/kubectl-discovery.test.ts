/**
 * What kubectl learns about the server and prints from it, against `etcd-effect apiserver` started
 * as the built program: a CRD's additionalPrinterColumns with JSONPath filters and `[*]` in
 * `kubectl get`, `kubectl get all` through the CRD's categories, `kubectl api-resources` (verbs,
 * short names, categories, scope, kind; subresources in the raw discovery), and `kubectl auth
 * can-i` / `can-i --list` / `whoami` answered as the server authorizes (anonymous, AlwaysAllow).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt, mainJs } from "../../server/support/process.js"
import { hasKubectl, runKubectl } from "./clients.js"

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd], categories: [all, toys]}
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      additionalPrinterColumns:
        - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
        - {name: Ports, type: string, jsonPath: '.spec.ports[*].port'}
        - {name: First, type: integer, jsonPath: '.spec.ports[0].port'}
        - {name: Last, type: string, jsonPath: '.spec.ports[-1:].name'}
        - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

const gadget = `apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1}
spec:
  replicas: 1
  ports: [{name: http, port: 80}, {name: https, port: 443}]
`

/** kubectl's table as cells, cut at the header's column starts (an empty cell stays "") */
const rows = (out: string) => {
  const lines = out.replace(/\n$/, "").split("\n")
  const starts = Array.from(lines[0]!.matchAll(/(?:^|\s{2,})(\S)/g), (m) => m.index + m[0].length - 1)
  return lines.map((l) => starts.map((s, i) => l.slice(s, starts[i + 1]).trim()))
}

describe.skipIf(!hasKubectl && process.env["CI"] === undefined)(
  "apiserver: kubectl discovery",
  { shuffle: false },
  () => {
    let proc: ChildProcess
    let server = ""
    let home = ""
    let stderr = ""
    const kubectl = (args: ReadonlyArray<string>, input?: string) => runKubectl(server, home, args, input)

    beforeAll(async () => {
      await ensureBuilt()
      home = fs.mkdtempSync(path.join(os.tmpdir(), "kubectl-discovery-"))
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
      fs.writeFileSync(path.join(home, "crd.yaml"), crd)
      fs.writeFileSync(path.join(home, "gadget.yaml"), gadget)
      expect((await kubectl(["apply", "-f", path.join(home, "crd.yaml")])).stderr).toBe("")
      await kubectl(["wait", "--for=condition=Established", "crd/gadgets.example.com"])
      expect((await kubectl(["apply", "-f", path.join(home, "gadget.yaml")])).stdout.trim()).toBe(
        "gadget.example.com/g1 created"
      )
    }, 240_000)

    afterAll(async () => {
      if (proc.exitCode === null) {
        proc.kill("SIGKILL")
        await new Promise((r) => proc.once("exit", r))
      }
      fs.rmSync(home, { recursive: true, force: true })
    })

    it("get prints printer columns with filters, [*], indices and slices", async () => {
      const before = await kubectl(["get", "gadgets"])
      expect(rows(before.stdout)[0]).toEqual(["NAME", "READY", "PORTS", "FIRST", "LAST", "AGE"])
      // no status yet: the filter finds nothing, an empty cell; [*] prints its first value, as kube-apiserver does
      expect(rows(before.stdout)[1]!.slice(0, 5)).toEqual(["g1", "", "80", "80", "https"])
      const status = '{"status":{"conditions":[{"type":"Synced","status":"False"},{"type":"Ready","status":"True"}]}}'
      const p = await kubectl(["patch", "gadget", "g1", "--subresource=status", "--type=merge", "-p", status])
      expect(p.stdout.trim()).toBe("gadget.example.com/g1 patched")
      const after = await kubectl(["get", "gd", "g1"])
      expect(rows(after.stdout)[1]!.slice(0, 5)).toEqual(["g1", "True", "80", "80", "https"])
      expect(rows(after.stdout)[1]![5]).toMatch(/^\d+s$/)
    })

    it("get all lists the kinds of the category all", async () => {
      const all = await kubectl(["get", "all"])
      expect(all.stderr).toBe("")
      expect(rows(all.stdout).map((r) => r.slice(0, 2))).toEqual([
        ["NAME", "READY"],
        ["g1", "True"]
      ])
      const toys = await kubectl(["get", "toys", "-o", "name"])
      expect(toys.stdout.trim()).toBe("gadget.example.com/g1")
    })

    it("api-resources lists every resource served, with verbs, short names, categories, scope and kind", async () => {
      const wide = await kubectl(["api-resources", "-o", "wide", "--sort-by=name"])
      expect(wide.stderr).toBe("")
      const table = rows(wide.stdout)
      expect(table[0]).toEqual(["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"])
      const byName = new Map(table.slice(1).map((r) => [`${r[0]} ${r.find((c) => c.includes("v1"))}`, r]))
      expect(byName.get("gadgets example.com/v1")).toEqual([
        "gadgets",
        "gd",
        "example.com/v1",
        "true",
        "Gadget",
        "delete,deletecollection,get,list,patch,create,update,watch",
        "all,toys"
      ])
      expect(byName.get("namespaces v1")).toEqual([
        "namespaces",
        "ns",
        "v1",
        "false",
        "Namespace",
        "create,delete,get,list,patch,update,watch",
        ""
      ])
      expect(byName.get("selfsubjectaccessreviews authorization.k8s.io/v1")).toEqual([
        "selfsubjectaccessreviews",
        "",
        "authorization.k8s.io/v1",
        "false",
        "SelfSubjectAccessReview",
        "create",
        ""
      ])
      expect(
        table
          .slice(1)
          .map((r) => r[0])
          .sort()
      ).toEqual(
        [
          "configmaps",
          "customresourcedefinitions",
          "events",
          "events",
          "gadgets",
          "leases",
          "localsubjectaccessreviews",
          "namespaces",
          "secrets",
          "selfsubjectaccessreviews",
          "selfsubjectreviews",
          "selfsubjectrulesreviews",
          "subjectaccessreviews"
        ].sort()
      )
      const raw = JSON.parse((await kubectl(["get", "--raw", "/apis/example.com/v1"])).stdout)
      expect(
        raw.resources.map((r: { name: string; verbs: Array<string>; kind: string }) => [r.name, r.kind, r.verbs])
      ).toEqual([
        ["gadgets", "Gadget", ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]],
        ["gadgets/status", "Gadget", ["get", "patch", "update"]],
        ["gadgets/scale", "Scale", ["get", "patch", "update"]]
      ])
      // kube-apiserver 1.37.2's for the same CRD
      expect(raw.resources[0].storageVersionHash).toBe("ggWp2HxsL0Q=")
      const core = JSON.parse((await kubectl(["get", "--raw", "/api/v1"])).stdout)
      const cm = core.resources.find((r: { name: string }) => r.name === "configmaps")
      expect(cm.storageVersionHash).toBe("qFsyl6wFWjQ=")
      expect(core.resources.map((r: { name: string }) => r.name)).toContain("namespaces/finalize")
    })

    it("auth can-i, can-i --list and whoami say what the server allows and who the caller is", async () => {
      expect(await kubectl(["auth", "can-i", "create", "gadgets"])).toMatchObject({ code: 0, stdout: "yes\n" })
      expect(await kubectl(["auth", "can-i", "delete", "namespaces/kube-system"])).toMatchObject({
        code: 0,
        stdout: "yes\n"
      })
      expect(await kubectl(["auth", "can-i", "get", "/healthz"])).toMatchObject({ code: 0, stdout: "yes\n" })
      const list = await kubectl(["auth", "can-i", "--list"])
      expect(rows(list.stdout)).toEqual([
        ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"],
        ["*.*", "[]", "[]", "[*]"],
        ["", "[*]", "[]", "[*]"]
      ])
      const who = await kubectl(["auth", "whoami", "-o", "json"])
      expect(JSON.parse(who.stdout).status).toEqual({
        userInfo: { username: "system:anonymous", groups: ["system:unauthenticated"] }
      })
    })

    it("an access review without attributes is the apiserver's 422; another verb is a 405", async () => {
      const bad = await fetch(`${server}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: {} })
      })
      expect(bad.status).toBe(422)
      expect(((await bad.json()) as { message: string }).message).toBe(
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'
      )
      const get = await fetch(`${server}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`)
      expect(get.status).toBe(405)
      const rules = await fetch(`${server}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ spec: {} })
      })
      expect(rules.status).toBe(400)
      expect(((await rules.json()) as { message: string }).message).toBe("no namespace on request")
      const delNs = await fetch(`${server}/api/v1/namespaces`, { method: "DELETE" })
      expect(delNs.status).toBe(405)
    })
  }
)
