/**
 * The real clients the apiserver tests drive: kubectl (the machine's) run against a server with an
 * empty home, and @kubernetes/client-node's KubeConfig for a plain-HTTP server.
 */
import * as k8s from "@kubernetes/client-node"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** the machine's kubectl, or $KUBECTL (another version: `KUBECTL=/path/to/kubectl-1.20 npx vitest run …`) */
export const KUBECTL =
  process.env["KUBECTL"] ??
  ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => fs.existsSync(p)) ??
  "/usr/bin/kubectl"
export const hasKubectl = fs.existsSync(KUBECTL)

export interface KubectlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `kubectl --server <server> …` with `home` as its home (no kubeconfig), stdin from `input`. */
export const runKubectl = (
  server: string,
  home: string,
  args: ReadonlyArray<string>,
  input?: string,
  timeoutMs = 30_000
): Promise<KubectlResult> =>
  new Promise((resolve) => {
    const child = execFile(
      KUBECTL,
      ["--server", server, ...args],
      { env: { HOME: home, PATH: process.env["PATH"] ?? "", KUBECONFIG: path.join(home, "none") }, timeout: timeoutMs },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr })
    )
    if (input !== undefined) child.stdin!.end(input)
  })

/** A KubeConfig for `server` (skipTLSVerify: client-node refuses plain HTTP otherwise). */
export const kubeConfig = (server: string): k8s.KubeConfig => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc
}

/** kubectl's client minor version (0 when it cannot tell). */
export const kubectlMinor = (): number => {
  try {
    const out = execFileSync(KUBECTL, ["version", "--client", "-o", "json"], { encoding: "utf8" })
    return Number(JSON.parse(out).clientVersion.minor.replace(/\D/g, ""))
  } catch {
    return 0
  }
}
