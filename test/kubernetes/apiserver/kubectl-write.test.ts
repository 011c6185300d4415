/**
 * kubectl 1.32 against `etcd-effect apiserver` started as the built program with no flags but
 * `--port 0`: lists are served from the watch cache (its metrics say so); apply --dry-run=server,
 * diff and delete --dry-run=server change nothing; create secret generic and stringData give
 * base64 data; kubectl's strict validation gets the apiserver's errors and --validate=warn its
 * warnings; delete ns waits until the namespace controller has emptied it; the system namespaces
 * cannot be deleted; wait --for=condition|jsonpath|delete. Also the flags: a bad --etcd-compaction-interval is one line and exit 1.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt, mainJs } from "../../server/support/process.js"
import { hasKubectl, runKubectl } from "./clients.js"

/** `etcd-effect apiserver <args>` until it prints its URL */
const startProgram = (args: ReadonlyArray<string>) =>
  new Promise<{ proc: ChildProcess; url: string; stderr: () => string }>((resolve, reject) => {
    const proc = spawn(process.execPath, [mainJs, "apiserver", ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    proc.stderr!.on("data", (d) => (err += String(d)))
    proc.stdout!.on("data", (d) => {
      out += String(d)
      const m = /serving on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve({ proc, url: m[1]!, stderr: () => err })
    })
    proc.on("exit", (code) => reject(new Error(`apiserver exited ${code}: ${err}`)))
  })

const stop = async (proc: ChildProcess | undefined) => {
  if (proc === undefined || proc.exitCode !== null) return
  const exited = new Promise((r) => proc.once("exit", r))
  proc.kill("SIGTERM")
  await exited
}

/** apiserver_cache_list_total summed over its series */
const cacheLists = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text()
  return text
    .split("\n")
    .filter((l) => l.startsWith("apiserver_cache_list_total{"))
    .reduce((n, l) => n + Number(l.split(" ").pop()), 0)
}

describe.skipIf(!hasKubectl && process.env["CI"] === undefined)("apiserver: kubectl writes", () => {
  let proc: ChildProcess | undefined
  let server = ""
  let home = ""

  const kubectl = (args: ReadonlyArray<string>, input?: string) => runKubectl(server, home, args, input, 60_000)
  const file = (name: string, text: string) => {
    const p = path.join(home, name)
    fs.writeFileSync(p, text)
    return p
  }
  const json = async (args: ReadonlyArray<string>) => JSON.parse((await kubectl([...args, "-o", "json"])).stdout)

  beforeAll(async () => {
    await ensureBuilt()
    home = fs.mkdtempSync(path.join(os.tmpdir(), "kubectl-write-"))
    const started = await startProgram(["--port", "0"])
    proc = started.proc
    server = started.url
  }, 240_000)

  afterAll(async () => {
    await stop(proc)
    fs.rmSync(home, { recursive: true, force: true })
  })

  it("with no flags, lists are served from the watch cache (apiserver_cache_list_total)", async () => {
    const before = await cacheLists(server)
    expect((await kubectl(["get", "configmaps", "-A"])).code).toBe(0)
    expect(await cacheLists(server)).toBeGreaterThan(before)
  })

  it("apply --dry-run=server, diff and delete --dry-run=server change nothing", async () => {
    const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: "${v}"}\n`
    expect((await kubectl(["apply", "-f", file("dry.yaml", cm("1"))])).stdout.trim()).toBe("configmap/dry created")
    const live = await json(["get", "cm", "dry"])
    const dryApply = await kubectl(["apply", "--dry-run=server", "-f", file("dry.yaml", cm("2"))])
    expect(dryApply.stdout.trim()).toBe("configmap/dry configured (server dry run)")
    const diff = await kubectl(["diff", "-f", file("dry.yaml", cm("3"))])
    expect(diff.code).toBe(1)
    expect(diff.stdout).toMatch(/^-  a: "1"$/m)
    expect(diff.stdout).toMatch(/^\+  a: "3"$/m)
    const del = await kubectl(["delete", "cm", "dry", "--dry-run=server"])
    expect(del.stdout.trim()).toBe('configmap "dry" deleted (server dry run)')
    const newOne = await kubectl(["apply", "--dry-run=server", "-f", file("new.yaml", cm("x").replace("dry", "never"))])
    expect(newOne.stdout.trim()).toBe("configmap/never created (server dry run)")
    expect(await json(["get", "cm", "dry"])).toEqual(live)
    expect((await kubectl(["get", "cm", "never"])).code).not.toBe(0)
  })

  it("create secret generic --from-literal (a protobuf body) and stringData in a manifest: base64 data, DATA counted, type Opaque", async () => {
    const c = await kubectl([
      "create",
      "secret",
      "generic",
      "lit",
      "--from-literal=password=hunter2",
      "--from-literal=user=admin"
    ])
    expect(c.stdout.trim()).toBe("secret/lit created")
    expect((await kubectl(["get", "secret", "lit"])).stdout).toMatch(
      /^NAME\s+TYPE\s+DATA\s+AGE\nlit\s+Opaque\s+2\s+\d+s\n$/
    )
    const s = await json(["get", "secret", "lit"])
    expect(s.data).toEqual({ password: "aHVudGVyMg==", user: "YWRtaW4=" })
    await kubectl([
      "apply",
      "-f",
      file("sd.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: sd}\nstringData: {token: abc}\n")
    ])
    const sd = await json(["get", "secret", "sd"])
    expect(sd).toMatchObject({ type: "Opaque", data: { token: "YWJj" } })
    expect(sd.stringData).toBeUndefined()
    expect((await kubectl(["create", "configmap", "cc", "--from-literal=k=v"])).stdout.trim()).toBe(
      "configmap/cc created"
    )
  })

  it("strict validation (kubectl's default) gets the apiserver's errors; --validate=warn its warnings", async () => {
    const unknown = await kubectl([
      "apply",
      "-f",
      file("u.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: u}\nbogus: 1\n")
    ])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr.trim()).toBe(
      'Error from server (BadRequest): error when creating "' +
        path.join(home, "u.yaml") +
        '": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'
    )
    const typed = await kubectl([
      "apply",
      "-f",
      file("t.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\ndata: {a: 1}\n")
    ])
    expect(typed.stderr).toContain(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string'
    )
    const warn = await kubectl(["apply", "--validate=warn", "-f", path.join(home, "u.yaml")])
    expect(warn.code).toBe(0)
    expect(warn.stderr.trim()).toBe('Warning: unknown field "bogus"')
    const name = await kubectl(["create", "configmap", "Bad_Name"])
    expect(name.stderr).toMatch(
      /^error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain /
    )
  })

  it("delete ns waits while the namespace controller empties it; the system namespaces cannot be deleted", async () => {
    await kubectl(["create", "namespace", "gone"])
    await kubectl(["-n", "gone", "create", "configmap", "x", "--from-literal=a=b"])
    const d = await kubectl(["delete", "namespace", "gone"])
    expect(d.stdout.trim()).toBe('namespace "gone" deleted')
    expect((await kubectl(["get", "namespace", "gone"])).stderr.trim()).toBe(
      'Error from server (NotFound): namespaces "gone" not found'
    )
    for (const ns of ["default", "kube-system", "kube-public"]) {
      const r = await kubectl(["delete", "namespace", ns])
      expect(r.code).not.toBe(0)
      expect(r.stderr.trim()).toBe(
        `Error from server (Forbidden): namespaces "${ns}" is forbidden: this namespace may not be deleted`
      )
    }
  }, 60_000)

  it("apply --server-side: creates, conflicts with another manager (exit 1), --force-conflicts, diff, prunes", async () => {
    const cm = (data: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: default\ndata:\n${data}`
    const first = await kubectl(["apply", "--server-side", "-f", file("ssa.yaml", cm('  a: "1"\n  b: "2"\n'))])
    expect(first.stdout.trim()).toBe("configmap/ssa serverside-applied")
    await kubectl(["patch", "configmap", "ssa", "--type", "merge", "-p", '{"data":{"a":"x"}}', "--field-manager=other"])
    const conflict = await kubectl(["apply", "--server-side", "-f", file("ssa.yaml", cm('  a: "3"\n  b: "2"\n'))])
    expect(conflict.code).toBe(1)
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "other" using v1: .data.a')
    expect((await json(["get", "configmap", "ssa"])).data).toEqual({ a: "x", b: "2" })
    const diff = await kubectl(["diff", "--server-side", "--force-conflicts", "-f", file("ssa.yaml", cm('  a: "3"\n'))])
    expect(diff.code).toBe(1)
    expect(diff.stdout).toContain('+  a: "3"')
    expect(diff.stdout).toContain('-  b: "2"')
    expect((await json(["get", "configmap", "ssa"])).data).toEqual({ a: "x", b: "2" })
    const forced = await kubectl([
      "apply",
      "--server-side",
      "--force-conflicts",
      "-f",
      file("ssa.yaml", cm('  a: "3"\n'))
    ])
    expect(forced.code).toBe(0)
    const after = await json(["get", "configmap", "ssa", "--show-managed-fields"])
    // b is no longer applied by kubectl and nobody else owns it: gone; a changed hands
    expect(after.data).toEqual({ a: "3" })
    expect(after.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.fieldsV1])).toEqual([
      ["kubectl", "Apply", { "f:data": { "f:a": {} } }]
    ])
  })

  it("wait --for=condition (a CRD's Established, a custom resource's Ready written through /status), --for=jsonpath and --for=delete", async () => {
    const crd = [
      "apiVersion: apiextensions.k8s.io/v1",
      "kind: CustomResourceDefinition",
      "metadata: {name: gadgets.example.com}",
      "spec:",
      "  group: example.com",
      "  scope: Namespaced",
      "  names: {plural: gadgets, singular: gadget, kind: Gadget}",
      "  versions:",
      "  - name: v1",
      "    served: true",
      "    storage: true",
      "    subresources: {status: {}}",
      "    schema:",
      "      openAPIV3Schema:",
      "        type: object",
      "        properties:",
      "          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}",
      "          status:",
      "            type: object",
      "            properties:",
      "              conditions:",
      "                type: array",
      "                items: {type: object, properties: {type: {type: string}, status: {type: string}}}",
      ""
    ].join("\n")
    expect((await kubectl(["apply", "-f", file("gadgets.yaml", crd)])).code).toBe(0)
    const established = await kubectl([
      "wait",
      "--for=condition=Established",
      "crd/gadgets.example.com",
      "--timeout=60s"
    ])
    expect(established).toMatchObject({
      code: 0,
      stdout: "customresourcedefinition.apiextensions.k8s.io/gadgets.example.com condition met\n"
    })
    const gadget = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\nspec: {a: 1}\n"
    expect((await kubectl(["apply", "-f", file("gadget.yaml", gadget)])).code).toBe(0)
    // not Ready yet: the wait times out whatever the machine's speed
    const early = await kubectl(["wait", "--for=condition=Ready", "gadget/g", "--timeout=1s"])
    expect(early.code).toBe(1)
    expect(early.stderr).toContain("timed out waiting for the condition on gadgets/g")
    const ready = kubectl(["wait", "--for=condition=Ready", "gadget/g", "--timeout=60s"])
    const status = '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}'
    const patched = await kubectl(["patch", "gadget", "g", "--subresource=status", "--type=merge", "-p", status])
    expect(patched.stdout).toBe("gadget.example.com/g patched\n")
    expect(await ready).toMatchObject({ code: 0, stdout: "gadget.example.com/g condition met\n" })
    const group = await kubectl(["wait", "--for=jsonpath={.spec.group}=example.com", "crd/gadgets.example.com"])
    expect(group.code).toBe(0)
    const gone = kubectl(["wait", "--for=delete", "gadget/g", "--timeout=60s"])
    expect((await kubectl(["delete", "gadget", "g"])).code).toBe(0)
    expect((await gone).code).toBe(0)
    expect((await kubectl(["delete", "crd", "gadgets.example.com"])).code).toBe(0)
  })
})

describe("apiserver flags", () => {
  it("a bad --etcd-compaction-interval is one line on stderr and exit 1; --watch-cache=false serves lists from etcd", async () => {
    await ensureBuilt()
    const bad = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [mainJs, "apiserver", "--port", "0", "--etcd-compaction-interval", "5x"], {
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      p.stderr!.on("data", (d) => (stderr += String(d)))
      p.on("exit", (code) => resolve({ code, stderr }))
    })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe(
      'Error: invalid argument "5x" for "--etcd-compaction-interval" flag: time: unknown unit "x" in duration "5x"\n'
    )
    const { proc, url } = await startProgram([
      "--port",
      "0",
      "--watch-cache=false",
      "--etcd-compaction-interval",
      "1m30s"
    ])
    try {
      await fetch(`${url}/api/v1/namespaces/default/configmaps`)
      expect(await cacheLists(url)).toBe(0)
    } finally {
      await stop(proc)
    }
  }, 240_000)
})
