/** The storage conformance suite on our own server (in-process, LMDB-free memory backend). */
import { afterAll, beforeAll, describe } from "vitest"
import { startInProcess, type InProcessServer } from "../../../server/support/in-process.js"
import { makeBackend } from "../conformance/backend.js"
import { runStorageConformance } from "../conformance/index.js"

describe("storage conformance: etcd3 store on etcd-effect", () => {
  let server: InProcessServer
  let backend: Awaited<ReturnType<typeof makeBackend>>
  beforeAll(async () => {
    server = await startInProcess()
    backend = await makeBackend("etcd-effect", [server.endpoint])
  })
  afterAll(async () => {
    await backend?.close()
    await server?.close()
  })
  runStorageConformance(() => backend)
})
