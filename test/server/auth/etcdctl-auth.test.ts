/**
 * etcd's auth through Debian's etcdctl 3.4, on our server and on etcd 3.4.23 side by side: users,
 * roles, grants (point, range, --prefix, --from-key), auth enable with the root rules, allowed and
 * denied get/put/del/txn (both branches)/watch/lease/compaction/maintenance as different users,
 * password change, user deletion, auth disable. Every command's stdout, stderr and exit code must
 * be identical once endpoints, lease ids and clientv3's log stamps are masked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, etcdctlAvailable, requireEtcd, skipEtcd } from "../../support/etcd.js"
import { type CtlResult, etcdctl, stopAll } from "../support/etcdctl.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"

const skip = skipEtcd || (!etcdctlAvailable && !requireEtcd)

interface Target {
  readonly name: string
  readonly endpoint: string
  /** lease ids granted so far (hex), by the label the test gave them */
  readonly leases: Map<string, string>
}

const ROOT = ["--user", "root:rootpw"]
const U1 = ["--user", "u1:pw1"]

/**
 * The tests below are the steps of one transcript, run in the order written on one pair of
 * servers: each step starts from the state the steps before it left (the users and roles made,
 * auth enabled, the keys and leases written, the revisions compacted), as an operator's session
 * does. A shuffled run keeps this order (`shuffle: false`); the files around it still move.
 */
describe.skipIf(skip)("auth through etcdctl 3.4: etcd-effect answers as etcd 3.4 does", { shuffle: false }, () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  const targets: Array<Target> = []

  beforeAll(async () => {
    const [e, o] = await Promise.all([
      EtcdProcess.start({ extraArgs: ["--bcrypt-cost", "4"] }),
      startInProcess({ name: "test", bcryptCost: 4 })
    ])
    etcd = e
    ours = o
    targets.push({ name: "etcd", endpoint: etcd.endpoint, leases: new Map() })
    targets.push({ name: "etcd-effect", endpoint: ours.endpoint, leases: new Map() })
  })
  afterAll(async () => {
    await stopAll()
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  const normalise = (t: Target, s: string): string => {
    let out = s.split(t.endpoint).join("<EP>")
    for (const [label, hex] of t.leases) out = out.split(hex).join(`<${label}>`)
    return (
      out
        .replace(/"(cluster_id|member_id)":\d+/g, '"$1":<ID>')
        .replace(/lease [0-9a-f]+ granted/g, "lease <NEW> granted")
        // seconds left depend on when each server was asked
        .replace(/remaining\(\d+s\)/g, "remaining(<S>)")
        .replace(/"ts":"[^"]*"/g, '"ts":<TS>')
        .replace(/endpoint:\/\/client-[0-9a-f-]+\//g, "endpoint://client-<ID>/")
        .replace(/took = [\d.]+[µa-z]+/g, "took = <D>")
    )
  }

  const norm = (t: Target, r: CtlResult) => ({
    code: r.code,
    stdout: normalise(t, r.stdout),
    stderr: normalise(t, r.stderr)
  })

  /** Runs the command on both servers; expects identical normalised results; returns them. */
  const same = async (args: ReadonlyArray<string> | ((t: Target) => ReadonlyArray<string>), stdin?: string) => {
    const results = await Promise.all(
      targets.map(async (t) => norm(t, await etcdctl(t.endpoint, typeof args === "function" ? args(t) : args, stdin)))
    )
    const shown = typeof args === "function" ? args(targets[0]!) : args
    expect(results[1], `etcd-effect vs etcd for: ${shown.join(" ")}`).toEqual(results[0])
    return results[0]!
  }

  /** grants a lease as root on both, remembering its id under `label` */
  const grant = async (label: string) => {
    for (const t of targets) {
      const r = await etcdctl(t.endpoint, [...ROOT, "lease", "grant", "100"])
      const id = /lease ([0-9a-f]+) granted/.exec(r.stdout)?.[1]
      if (id === undefined) throw new Error(`${t.name}: no lease in ${r.stdout} ${r.stderr}`)
      t.leases.set(label, id)
    }
  }

  it("users, roles and permissions while auth is off", async () => {
    expect((await same(["user", "add", "root:rootpw"])).stdout).toBe("User root created\n")
    await same(["user", "add", "root:x"])
    await same(["role", "add", "r1"])
    await same(["role", "add", "r1"])
    await same(["role", "add", ""])
    await same(["role", "grant-permission", "r1", "read", "a", "c"])
    await same(["role", "grant-permission", "r1", "readwrite", "/p/", "--prefix"])
    await same(["role", "grant-permission", "r1", "write", "z", "--from-key"])
    await same(["role", "grant-permission", "r1", "read", "k"])
    // same key and range end: the permission type is replaced
    await same(["role", "grant-permission", "r1", "write", "a", "c"])
    expect((await same(["role", "get", "r1"])).stdout).toContain("[z, <open ended>")
    await same(["role", "revoke-permission", "r1", "q"])
    await same(["role", "revoke-permission", "r1", "a"])
    await same(["role", "revoke-permission", "nope", "q"])
    await same(["user", "add", "u1:pw1"])
    await same(["user", "grant-role", "u1", "r1"])
    await same(["user", "grant-role", "u1", "r1"])
    await same(["user", "grant-role", "u1", "nope"])
    await same(["user", "grant-role", "nope", "r1"])
    await same(["user", "get", "u1"])
    await same(["user", "get", "u1", "--detail"])
    await same(["user", "revoke-role", "u1", "r9"])
    await same(["user", "get", "nope"])
    await same(["user", "add", "nopw", "--no-password"])
    await same(["user", "get", "nopw"])
    await same(["user", "list"])
    await same(["role", "list"])
    await same(["user", "delete", "nope"])
    await same(["role", "delete", "nope"])
    await same(["user", "passwd", "nope", "--interactive=false"], "x\n")
  })

  it("auth enable (etcdctl adds the root role), then nobody without credentials", async () => {
    expect((await same(["auth", "enable"])).stdout).toBe("Authentication Enabled\n")
    await same(["role", "list"])
    await same(["role", "get", "root"])
    await same(["get", "a"])
    await same(["put", "a", "1"])
    await same(["user", "list"])
    await same(["auth", "enable"])
    await same([...ROOT, "auth", "enable"])
    await same([...ROOT, "role", "get", "root"])
    await same(["--user", "u1:bad", "get", "a"])
    await same(["--user", "nobody:bad", "get", "a"])
    await same(["--user", "nopw:", "get", "a"])
  })

  it("a user sees itself and its roles only; admin operations need root", async () => {
    await same([...U1, "user", "get", "u1"])
    await same([...U1, "user", "get", "root"])
    await same([...U1, "role", "get", "r1"])
    await same([...U1, "role", "get", "root"])
    await same([...U1, "user", "list"])
    await same([...U1, "role", "list"])
    await same([...U1, "user", "add", "x:y"])
    await same([...U1, "auth", "disable"])
    await same([...ROOT, "user", "list"])
  })

  it("get, put, del with point, range, prefix and from-key permissions", async () => {
    await same([...U1, "get", "a"])
    await same([...U1, "put", "a", "1"])
    await same([...U1, "put", "b", "1"])
    await same([...U1, "put", "c", "1"])
    await same([...U1, "put", "zzz", "1"])
    await same([...U1, "put", "/p/x", "2"])
    await same([...U1, "get", "/p/", "--prefix"])
    await same([...U1, "get", "/p/x"])
    await same([...U1, "get", "k"])
    await same([...U1, "get", "a", "b"])
    await same([...U1, "get", "a", "--prefix"])
    await same([...U1, "get", "", "--prefix"])
    await same([...U1, "get", "--from-key", "z"])
    await same([...U1, "del", "a", "c"])
    await same([...U1, "del", "a", "d"])
    await same([...U1, "del", "--from-key", "z"])
    await same([...U1, "del", "/p/x"])
    await same([...U1, "del", "/p/", "--prefix", "--prev-kv"])
    await same([...U1, "put", "a", "2", "--prev-kv"])
    await same([...U1, "del", "a", "--prev-kv"])
    await same([...ROOT, "put", "/p/x", "1"])
    await same([...ROOT, "get", "", "--prefix", "--keys-only"])
  })

  it("txn: compares and every op of both branches are checked", async () => {
    await same([...U1, "txn", "--interactive=false"], 'value("/p/x") = "1"\n\nput /p/y 1\n\nput q 1\n\n')
    await same([...U1, "txn", "--interactive=false"], 'value("/p/x") = "1"\n\nput /p/y 1\n\nput /p/z 1\n\n')
    await same([...U1, "txn", "--interactive=false"], 'value("q") = "1"\n\nput /p/y 1\n\nput /p/z 1\n\n')
    await same([...U1, "txn", "--interactive=false"], "\nget k\n\nget q\n\n")
    await same([...U1, "txn", "--interactive=false"], "\ndel /p/y --prev-kv\n\n\n")
    await same([...U1, "txn", "--interactive=false"], "\ndel b --prev-kv\n\n\n")
    await same(
      [...U1, "txn", "--interactive=false", "-w", "json"],
      'version("/p/x") > "0"\n\nget /p/x\nput b 2\n\ndel zz\n\n'
    )
  })

  it("watch create needs read permission", async () => {
    await same([...U1, "watch", "q"])
    await same([...U1, "watch", "a", "c"])
    await same(["watch", "/p/", "--prefix"])
  })

  it("leases: grant for anyone, revoke and attach need write on the attached keys", async () => {
    await same([...U1, "lease", "grant", "100"], undefined)
    await grant("L1")
    await same((t) => [...ROOT, "put", "k", "v", `--lease=${t.leases.get("L1")}`])
    await same((t) => [...ROOT, "put", "/p/l", "v", `--lease=${t.leases.get("L1")}`])
    await same((t) => [...U1, "lease", "revoke", t.leases.get("L1")!])
    await same((t) => [...U1, "put", "/p/m", "v", `--lease=${t.leases.get("L1")}`])
    await same((t) => [...U1, "lease", "timetolive", t.leases.get("L1")!])
    await grant("L2")
    await same((t) => [...ROOT, "put", "/p/l2", "v", `--lease=${t.leases.get("L2")}`])
    await same((t) => [...U1, "lease", "timetolive", t.leases.get("L2")!, "--keys"])
    await same((t) => [...U1, "lease", "revoke", t.leases.get("L2")!])
  })

  it("compaction for any user; defrag, hash and snapshot for root only, with etcd 3.4's raw auth errors", async () => {
    await same([...U1, "compaction", "2"])
    await same(["compaction", "3"])
    await same([...U1, "endpoint", "hashkv"])
    await same([...U1, "defrag"])
    await same(["defrag"])
    await same([...ROOT, "defrag"])
    await same([...U1, "alarm", "list"])
    await same([...U1, "endpoint", "health"], undefined)
  })

  it("password change, permission revoke, user deletion, the root rules, auth disable", async () => {
    await same([...ROOT, "user", "passwd", "u1", "--interactive=false"], "pw2\n")
    await same([...U1, "get", "k"])
    await same(["--user", "u1:pw2", "get", "/p/", "--prefix", "--keys-only"])
    await same([...ROOT, "role", "revoke-permission", "r1", "/p/", "/p0"])
    await same(["--user", "u1:pw2", "get", "/p/", "--prefix", "--keys-only"])
    await same([...ROOT, "user", "delete", "root"])
    await same([...ROOT, "role", "delete", "root"])
    await same([...ROOT, "user", "revoke-role", "root", "root"])
    await same([...ROOT, "role", "delete", "r1"])
    await same(["--user", "u1:pw2", "get", "k"])
    await same([...ROOT, "user", "delete", "u1"])
    await same(["--user", "u1:pw2", "get", "k"])
    expect((await same([...ROOT, "auth", "disable"])).stdout).toBe("Authentication Disabled\n")
    await same(["get", "", "--prefix", "--keys-only"])
    await same(["user", "list"])
    await same(["role", "list"])
    await same([...ROOT, "get", "k"])
    await same(["auth", "disable"])
  })
})
