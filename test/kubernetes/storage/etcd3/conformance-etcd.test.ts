/** The storage conformance suite on Debian's etcd 3.4, the oracle. */
import { afterAll, beforeAll, describe } from "vitest"
import { EtcdProcess, skipEtcd } from "../../../support/etcd.js"
import { makeBackend } from "../conformance/backend.js"
import { runStorageConformance } from "../conformance/index.js"

describe.skipIf(skipEtcd)("storage conformance: etcd3 store on etcd 3.4", () => {
  let etcd: EtcdProcess
  let backend: Awaited<ReturnType<typeof makeBackend>>
  beforeAll(async () => {
    etcd = await EtcdProcess.start()
    backend = await makeBackend("etcd 3.4", [etcd.endpoint])
  })
  afterAll(async () => {
    await backend?.close()
    await etcd?.dispose()
  })
  runStorageConformance(() => backend)
})
