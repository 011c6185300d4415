/**
 * Kubernetes' own kube-apiserver for bench:kube-apiserver: the binary test/go/kubernetes/build.sh
 * builds and caches (k8s.io/kubernetes v1.37.2), started over a store with the flags
 * docs/kube-apiserver.md gives, and an HTTP/2 client of it (TLS, bearer token, as client-go).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http2 from "node:http2"
import * as path from "node:path"
import { cleanEnv, cleanup, projectRoot } from "./compare-servers.js"
import { freePort, sleep } from "./etcd.js"

const TOKEN = "bench-admin-token"

/** Builds (or takes from the cache) kube-apiserver; the build script's progress goes to stderr. */
export const kubeApiServerBinary = (): string => {
  const script = path.join(projectRoot(), "test", "go", "kubernetes", "build.sh")
  let out: string
  try {
    out = execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  } catch (e) {
    throw new Error(`test/go/kubernetes/build.sh failed (Go 1.26 is needed to build kube-apiserver): ${String(e)}`)
  }
  const bin = /^KUBE_APISERVER=(.+)$/m.exec(out)?.[1]
  if (bin === undefined) throw new Error(`build.sh printed no KUBE_APISERVER: ${out}`)
  return bin
}

export interface KubeApiServer {
  readonly pid: number
  readonly client: KubeClient
  readonly stop: () => Promise<void>
}

/** The flags bench:kube-apiserver and bench:startup start kube-apiserver with (`dir` holds sa.key and tokens.csv). */
export const kubeApiServerArgs = (dir: string, port: number, etcd: string): Array<string> => [
  `--etcd-servers=http://${etcd}`,
  "--bind-address=127.0.0.1",
  `--secure-port=${port}`,
  "--advertise-address=127.0.0.1",
  "--endpoint-reconciler-type=none",
  `--cert-dir=${path.join(dir, "certs")}`,
  `--token-auth-file=${path.join(dir, "tokens.csv")}`,
  "--authorization-mode=RBAC",
  "--service-account-issuer=https://kubernetes.default.svc",
  `--service-account-key-file=${path.join(dir, "sa.key")}`,
  `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
  "--service-cluster-ip-range=10.96.0.0/16"
]

/** Writes the service-account key and the token file kubeApiServerArgs names into `dir`. */
export const writeKubeApiServerFiles = (dir: string): void => {
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  fs.writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "pkcs1", format: "pem" }))
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${TOKEN},admin,admin,system:masters\n`)
}

/** Starts kube-apiserver over the store at `etcd` (host:port) and waits for /readyz. */
export const startKubeApiServer = async (
  bin: string,
  root: string,
  etcd: string,
  extraArgs: ReadonlyArray<string> = []
): Promise<KubeApiServer> => {
  const dir = fs.mkdtempSync(path.join(root, "kube-apiserver-"))
  cleanup.dirs.add(dir)
  writeKubeApiServerFiles(dir)
  const port = await freePort()
  const log = fs.openSync(path.join(dir, "kube-apiserver.log"), "a")
  const proc: ChildProcess = spawn(bin, [...kubeApiServerArgs(dir, port, etcd), ...extraArgs], {
    env: cleanEnv(),
    stdio: ["ignore", log, log]
  })
  fs.closeSync(log)
  if (proc.pid !== undefined) cleanup.pids.add(proc.pid)
  const exitedP = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  const client = new KubeClient(`https://127.0.0.1:${port}`)
  const stop = async () => {
    client.close()
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM")
      if (await Promise.race([exitedP.then(() => false), sleep(20_000).then(() => true)])) {
        proc.kill("SIGKILL")
        await exitedP
      }
    }
    if (proc.pid !== undefined) cleanup.pids.delete(proc.pid)
    fs.rmSync(dir, { recursive: true, force: true })
    cleanup.dirs.delete(dir)
  }
  const deadline = Date.now() + 180_000
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      const tail = fs.readFileSync(path.join(dir, "kube-apiserver.log"), "utf8").split("\n").slice(-10).join("\n")
      await stop()
      throw new Error(`kube-apiserver exited during start-up:\n${tail}`)
    }
    const ready = await client.request("GET", "/readyz").catch(() => undefined)
    if (ready?.status === 200) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error("kube-apiserver: no /readyz within 3 minutes")
    }
    await sleep(250)
  }
  return { pid: proc.pid!, client, stop }
}

export interface Response {
  readonly status: number
  readonly body: Buffer
}

/**
 * HTTP/2 to kube-apiserver over a few sessions (at most 100 streams each: its default
 * SETTINGS_MAX_CONCURRENT_STREAMS is 100 for HTTP/2 clients).
 */
export class KubeClient {
  private readonly sessions: Array<{ session: http2.ClientHttp2Session; streams: number }> = []
  constructor(readonly url: string) {}

  private session(): http2.ClientHttp2Session {
    let entry = this.sessions.find((s) => s.streams < 100 && !s.session.closed && !s.session.destroyed)
    if (entry === undefined) {
      const session = http2.connect(this.url, { rejectUnauthorized: false })
      session.on("error", () => {})
      entry = { session, streams: 0 }
      this.sessions.push(entry)
    }
    return entry.session
  }

  private track(session: http2.ClientHttp2Session, delta: number) {
    const entry = this.sessions.find((s) => s.session === session)
    if (entry !== undefined) entry.streams += delta
  }

  /** One request and its whole answer. */
  private open(method: string, path: string, body?: string, accept = "application/json"): Promise<Response> {
    const session = this.session()
    this.track(session, 1)
    return new Promise<Response>((resolve, reject) => {
      const req = session.request({
        ":method": method,
        ":path": path,
        authorization: `Bearer ${TOKEN}`,
        accept,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      })
      const chunks: Array<Buffer> = []
      let status = 0
      req.on("response", (h) => (status = Number(h[":status"])))
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        this.track(session, -1)
        resolve({ status, body: Buffer.concat(chunks) })
      })
      req.on("error", (e) => {
        this.track(session, -1)
        reject(e)
      })
      req.end(body)
    })
  }

  /** A watch (long-running GET): `onData` sees its body; `close` cancels it. */
  watch(
    path: string,
    onData: (chunk: Buffer) => void
  ): { readonly close: () => void; readonly ended: Promise<number> } {
    const session = this.session()
    this.track(session, 1)
    const req = session.request({ ":method": "GET", ":path": path, authorization: `Bearer ${TOKEN}` })
    let status = 0
    req.on("response", (h) => (status = Number(h[":status"])))
    req.on("data", onData)
    const ended = new Promise<number>((resolve) => {
      req.once("close", () => {
        this.track(session, -1)
        resolve(status)
      })
    })
    req.on("error", () => {})
    req.end()
    return { close: () => req.close(http2.constants.NGHTTP2_CANCEL), ended }
  }

  request(method: string, path: string, body?: unknown, accept?: string): Promise<Response> {
    return this.open(method, path, body === undefined ? undefined : JSON.stringify(body), accept)
  }

  close(): void {
    for (const s of this.sessions) s.session.destroy()
    this.sessions.length = 0
  }
}
