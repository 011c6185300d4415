/**
 * kubectl (the machine's) with Events and Leases: `create -f` of a core/v1 Event, an
 * events.k8s.io/v1 Event and a Lease; `get events -A` and `-o wide` (the Event printer's
 * columns), `events` (kubectl's own listing, `--for` a Lease through its field selector),
 * `get events.events.k8s.io -o yaml` (the mapped fields), `get leases -A` (HOLDER) and
 * `-o yaml` (MicroTime with six digits), `api-resources` with the short name ev.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { hasKubectl, kubectlMinor, runKubectl } from "./clients.js"
import { onApiServer } from "./support.js"

const objects = `
apiVersion: v1
kind: Event
metadata:
  name: cm-created
  namespace: default
involvedObject: {kind: ConfigMap, name: demo, namespace: default, apiVersion: v1}
reason: Created
message: ConfigMap demo created
source: {component: demo-controller}
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:30:00Z"
count: 4
type: Normal
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: synced
  namespace: kube-system
eventTime: "2026-01-01T00:00:00.123456Z"
reportingController: example.com/ctrl
reportingInstance: ctrl-0
action: Reconcile
reason: Synced
regarding: {kind: Lease, apiVersion: coordination.k8s.io/v1, name: lock, namespace: kube-system}
note: synced the lock
type: Warning
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: lock
  namespace: kube-system
spec:
  holderIdentity: ctrl-0
  leaseDurationSeconds: 15
  renewTime: "2026-01-01T00:00:01.654321Z"
`

const columns = (line: string) => line.trim().split(/\s{2,}/)

describe.skipIf(!hasKubectl && process.env["CI"] === undefined)("kubectl: Events and Leases", () => {
  const server = onApiServer()
  let home = ""
  const kubectl = (args: ReadonlyArray<string>, input?: string) => runKubectl(server().url, home, args, input)

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "kubectl-home-"))
    const r = await kubectl(["create", "-f", "-"], objects)
    expect(r.stderr).toBe("")
    expect(r.stdout.trim().split("\n")).toEqual([
      "event/cm-created created",
      "event.events.k8s.io/synced created",
      "lease.coordination.k8s.io/lock created"
    ])
  })

  it("get events -A and -o wide: the Event printer's columns", async () => {
    const r = await kubectl(["get", "events", "-A"])
    const lines = r.stdout.trim().split("\n")
    expect(columns(lines[0]!)).toEqual(["NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
    expect(columns(lines[1]!)).toEqual([
      "default",
      expect.stringMatching(/^\d+d/),
      "Normal",
      "Created",
      "configmap/demo",
      "ConfigMap demo created"
    ])
    expect(columns(lines[2]!)).toEqual([
      "kube-system",
      expect.stringMatching(/^\d+d/),
      "Warning",
      "Synced",
      "lease/lock",
      "synced the lock"
    ])
    const wide = (await kubectl(["get", "events", "-A", "-o", "wide"])).stdout.trim().split("\n")
    expect(columns(wide[0]!)).toEqual([
      "NAMESPACE",
      "LAST SEEN",
      "TYPE",
      "REASON",
      "OBJECT",
      "SUBOBJECT",
      "SOURCE",
      "MESSAGE",
      "FIRST SEEN",
      "COUNT",
      "NAME"
    ])
    expect(columns(wide[2]!).slice(-5)).toEqual([
      "example.com/ctrl, ctrl-0",
      "synced the lock",
      expect.stringMatching(/^\d+d/),
      "1",
      "synced"
    ])
  })

  // `kubectl events` is a command since kubectl 1.28 (Debian bookworm's kubectl is 1.20)
  it.skipIf(kubectlMinor() < 28)("kubectl events, and --for a Lease", async () => {
    const all = await kubectl(["events", "-A"])
    expect(all.stdout).toContain("(x4 over ")
    const forLease = await kubectl(["events", "-n", "kube-system", "--for", "lease/lock"])
    const lines = forLease.stdout.trim().split("\n")
    expect(lines).toHaveLength(2)
    expect(columns(lines[1]!).slice(1)).toEqual(["Warning", "Synced", "Lease/lock", "synced the lock"])
  })

  it("get events.events.k8s.io -o yaml shows the events.k8s.io/v1 fields of the core/v1 Event", async () => {
    const r = await kubectl(["get", "events.events.k8s.io", "-n", "default", "cm-created", "-o", "yaml"])
    expect(r.stdout).toContain("apiVersion: events.k8s.io/v1")
    expect(r.stdout).toContain("note: ConfigMap demo created")
    expect(r.stdout).toContain("deprecatedCount: 4")
    expect(r.stdout).toMatch(/deprecatedSource:\n\s+component: demo-controller/)
  })

  it("get leases -A and -o yaml; api-resources", async () => {
    const t = (await kubectl(["get", "leases", "-A"])).stdout.trim().split("\n")
    expect(columns(t[0]!)).toEqual(["NAMESPACE", "NAME", "HOLDER", "AGE"])
    expect(columns(t[1]!).slice(0, 3)).toEqual(["kube-system", "lock", "ctrl-0"])
    const y = (await kubectl(["get", "leases", "-A", "-o", "yaml"])).stdout
    expect(y).toContain('renewTime: "2026-01-01T00:00:01.654321Z"')
    expect(y).toContain("leaseDurationSeconds: 15")
    const res = (await kubectl(["api-resources"])).stdout.split("\n").map(columns)
    expect(res).toContainEqual(["events", "ev", "v1", "true", "Event"])
    expect(res).toContainEqual(["events", "ev", "events.k8s.io/v1", "true", "Event"])
    expect(res).toContainEqual(["leases", "coordination.k8s.io/v1", "true", "Lease"])
  })
})
