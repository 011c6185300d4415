/** A Backend over any etcd (ours, etcd 3.4, a cluster) reached at `endpoints`. */
import { compactWith } from "../../../../src/kubernetes/storage/etcd3/compact.js"
import { Etcd3Store } from "../../../../src/kubernetes/storage/etcd3/store.js"
import { afterAll, beforeAll } from "vitest"
import { type InProcessServer, startInProcess } from "../../../server/support/in-process.js"
import { type Backend, clientFor, podAttrs, run } from "./support.js"

let counter = 0

export const makeBackend = async (
  name: string,
  endpoints: ReadonlyArray<string>,
  options: { readonly progressNotify?: boolean } = {}
): Promise<Backend & { readonly close: () => Promise<void> }> => {
  const { client, close } = await clientFor(endpoints)
  const run0 = Date.now().toString(36)
  return {
    name,
    client,
    progressNotify: options.progressNotify === true,
    newStore: (o = {}) => {
      const pathPrefix = `/conformance-${run0}-${counter++}`
      return {
        pathPrefix,
        store: Etcd3Store.makeWith(o.client ?? client, {
          pathPrefix,
          resourcePrefix: "/pods/",
          groupResource: { group: "", resource: "pods" },
          getAttrs: podAttrs,
          typeMeta: { apiVersion: "v1", kind: "Pod" },
          ...(o.transformer === undefined ? {} : { transformer: o.transformer })
        })
      }
    },
    compact: (rev) => run(compactWith(client, rev)),
    close
  }
}

/**
 * Our server in-process for the current describe block, and a Backend over it: registers
 * beforeAll/afterAll and returns a getter (the backend exists once beforeAll has run).
 */
export const onOurServer = (): (() => Backend) => {
  let server: InProcessServer | undefined
  let backend: Awaited<ReturnType<typeof makeBackend>> | undefined
  beforeAll(async () => {
    server = await startInProcess()
    backend = await makeBackend("etcd-effect", [server.endpoint])
  })
  afterAll(async () => {
    await backend?.close()
    await server?.close()
  })
  return () => backend!
}
