/**
 * Property: random sequences of writes — creates, updates and patches of finalizers, deletes with
 * each propagation policy, namespace deletes and /finalize, each possibly with dryRun=All — get
 * the codes a model of the apiserver says, and leave the store (objects, their finalizers and
 * deletion marks, namespaces and their phase) exactly as the model says after every step. The
 * namespace controller waits an hour here, so namespaces change only by these requests.
 */
import { Duration, FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { onApiServer, request } from "./support.js"

type Policy = "Background" | "Orphan" | "Foreground" | undefined
type Op =
  | { readonly op: "createNs"; readonly ns: number }
  | {
      readonly op: "create"
      readonly ns: number
      readonly name: number
      readonly fins: ReadonlyArray<string>
      readonly dry: boolean
    }
  | {
      readonly op: "setFinalizers"
      readonly ns: number
      readonly name: number
      readonly fins: ReadonlyArray<string>
      readonly dry: boolean
      readonly patch: boolean
    }
  | {
      readonly op: "delete"
      readonly ns: number
      readonly name: number
      readonly policy: Policy
      readonly dry: boolean
    }
  | { readonly op: "deleteNs"; readonly ns: number; readonly dry: boolean }
  | { readonly op: "finalizeNs"; readonly ns: number }

const FINS = ["example.com/a", "example.com/b", "orphan", "foregroundDeletion"]
const finsArb = fc.subarray(FINS.slice(0, 2), { minLength: 0 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ op: fc.constant("createNs" as const), ns: fc.nat(1) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("create" as const),
      ns: fc.nat(1),
      name: fc.nat(2),
      fins: finsArb,
      dry: fc.boolean()
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("setFinalizers" as const),
      ns: fc.nat(1),
      name: fc.nat(2),
      fins: finsArb,
      dry: fc.boolean(),
      patch: fc.boolean()
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("delete" as const),
      ns: fc.nat(1),
      name: fc.nat(2),
      policy: fc.constantFrom<Policy>("Background", "Orphan", "Foreground", undefined),
      dry: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("deleteNs" as const), ns: fc.nat(1), dry: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("finalizeNs" as const), ns: fc.nat(1) }) }
)

interface MObj {
  fins: Array<string>
  deleting: boolean
}
interface MNs {
  terminating: boolean
  specFins: Array<string>
}

/** The apiserver as a model: what each request answers and does. */
class Model {
  readonly ns = new Map<string, MNs>()
  readonly objs = new Map<string, MObj>()

  create(ns: string, name: string, fins: ReadonlyArray<string>, dry: boolean): number {
    const n = this.ns.get(ns)
    if (n === undefined) return 404
    if (n.terminating) return 403
    if (this.objs.has(`${ns}/${name}`)) return 409
    if (!dry) this.objs.set(`${ns}/${name}`, { fins: [...fins], deleting: false })
    return 201
  }

  setFinalizers(ns: string, name: string, fins: ReadonlyArray<string>, dry: boolean, patch: boolean): number {
    const o = this.objs.get(`${ns}/${name}`)
    if (o === undefined) return 404
    // a strategic-style merge would add; a merge patch with the whole list replaces (as PUT does)
    void patch
    if (o.deleting && fins.some((f) => !o.fins.includes(f))) return 422
    if (dry) return 200
    if (o.deleting && fins.length === 0) this.objs.delete(`${ns}/${name}`)
    else o.fins = [...fins]
    return 200
  }

  delete(ns: string, name: string, policy: Policy, dry: boolean): number {
    const o = this.objs.get(`${ns}/${name}`)
    if (o === undefined) return 404
    const first = o.fins.find((f) => f === "orphan" || f === "foregroundDeletion")
    const orphan = policy !== undefined ? policy === "Orphan" : first === "orphan"
    const fg = policy !== undefined ? policy === "Foreground" : first === "foregroundDeletion"
    const fins = o.fins.filter((f) => f !== "orphan" && f !== "foregroundDeletion")
    if (orphan) fins.push("orphan")
    if (fg) fins.push("foregroundDeletion")
    if (dry) return 200
    if (fins.length === 0) this.objs.delete(`${ns}/${name}`)
    else {
      o.fins = new Set(fins).size === new Set(o.fins).size && fins.every((f) => o.fins.includes(f)) ? o.fins : fins
      o.deleting = true
    }
    return 200
  }

  deleteNs(ns: string, dry: boolean): number {
    const n = this.ns.get(ns)
    if (n === undefined) return 404
    if (dry) return 200
    if (!n.terminating) n.terminating = true
    else if (n.specFins.length === 0) this.ns.delete(ns)
    return 200
  }

  finalizeNs(ns: string): number {
    const n = this.ns.get(ns)
    if (n === undefined) return 404
    n.specFins = []
    if (n.terminating) this.ns.delete(ns)
    return 200
  }

  createNs(ns: string): number {
    if (this.ns.has(ns)) return 409
    this.ns.set(ns, { terminating: false, specFins: ["kubernetes"] })
    return 201
  }
}

let run = 0

describe("apiserver: write sequences against a model (property)", () => {
  const server = onApiServer({ namespaceDeletionDelay: Duration.hours(1) })
  const url = () => server().url

  it("finalizers, deletion with every propagation policy, namespace termination and dry runs: codes and store as the model says", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 25 }), async (ops) => {
        const r = run++
        const nsName = (i: number) => `model-${process.pid}-${r}-${i}`
        const model = new Model()
        for (const op of ops) {
          const ns = nsName(op.ns)
          const cms = `/api/v1/namespaces/${ns}/configmaps`
          let code: number
          let expected: number
          switch (op.op) {
            case "createNs":
              expected = model.createNs(ns)
              code = (await request(url(), "POST", "/api/v1/namespaces", { metadata: { name: ns } })).status
              break
            case "create":
              expected = model.create(ns, `c${op.name}`, op.fins, op.dry)
              code = (
                await request(url(), "POST", `${cms}${op.dry ? "?dryRun=All" : ""}`, {
                  metadata: { name: `c${op.name}`, ...(op.fins.length > 0 ? { finalizers: op.fins } : {}) }
                })
              ).status
              break
            case "setFinalizers": {
              expected = model.setFinalizers(ns, `c${op.name}`, op.fins, op.dry, op.patch)
              const path = `${cms}/c${op.name}${op.dry ? "?dryRun=All" : ""}`
              if (op.patch) {
                code = (
                  await request(
                    url(),
                    "PATCH",
                    path,
                    { metadata: { finalizers: op.fins.length > 0 ? op.fins : null } },
                    {
                      "content-type": "application/merge-patch+json"
                    }
                  )
                ).status
              } else {
                const cur = await request(url(), "GET", `${cms}/c${op.name}`)
                code =
                  cur.status !== 200
                    ? cur.status
                    : (
                        await request(url(), "PUT", path, {
                          ...cur.body,
                          metadata: { ...cur.body.metadata, finalizers: op.fins }
                        })
                      ).status
              }
              break
            }
            case "delete":
              expected = model.delete(ns, `c${op.name}`, op.policy, op.dry)
              code = (
                await request(url(), "DELETE", `${cms}/c${op.name}`, {
                  ...(op.policy === undefined ? {} : { propagationPolicy: op.policy }),
                  ...(op.dry ? { dryRun: ["All"] } : {})
                })
              ).status
              break
            case "deleteNs":
              expected = model.deleteNs(ns, op.dry)
              code = (await request(url(), "DELETE", `/api/v1/namespaces/${ns}${op.dry ? "?dryRun=All" : ""}`)).status
              break
            case "finalizeNs": {
              expected = model.finalizeNs(ns)
              const cur = await request(url(), "GET", `/api/v1/namespaces/${ns}`)
              code =
                cur.status !== 200
                  ? cur.status
                  : (
                      await request(url(), "PUT", `/api/v1/namespaces/${ns}/finalize`, {
                        ...cur.body,
                        spec: { finalizers: [] }
                      })
                    ).status
              break
            }
          }
          expect([op, code]).toEqual([op, expected])
          // the store after the step (the namespace it touched)
          for (const i of [op.ns]) {
            const n = nsName(i)
            const got = await request(url(), "GET", `/api/v1/namespaces/${n}`)
            const m = model.ns.get(n)
            expect([n, got.status === 200 ? (got.body.status.phase as string) : "absent"]).toEqual([
              n,
              m === undefined ? "absent" : m.terminating ? "Terminating" : "Active"
            ])
            const list = (await request(url(), "GET", `/api/v1/namespaces/${n}/configmaps`)).body.items as Array<any>
            const actual = list.map((o) => [
              o.metadata.name,
              o.metadata.finalizers ?? [],
              o.metadata.deletionTimestamp !== undefined
            ])
            const want = [...model.objs]
              .filter(([k]) => k.startsWith(`${n}/`))
              .map(([k, o]) => [k.slice(n.length + 1), o.fins, o.deleting])
              .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
            expect([op, actual]).toEqual([op, want])
          }
        }
      }),
      { numRuns: 12 }
    )
  }, 300_000)
})
