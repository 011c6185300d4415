/**
 * The storage conformance suite through the Cacher (the tests of k8s.io/apiserver/pkg/storage/testing
 * that upstream's cacher_test.go runs through the Cacher), on our server and on etcd 3.4.
 */
import { afterAll, beforeAll, describe } from "vitest"
import { startInProcess, type InProcessServer } from "../../server/support/in-process.js"
import { EtcdProcess, skipEtcd } from "../../support/etcd.js"
import { makeCacherBackend } from "../storage/conformance/cacher-backend.js"
import { runStorageConformance } from "../storage/conformance/index.js"

describe("storage conformance through the Cacher: etcd-effect", () => {
  let server: InProcessServer
  let backend: Awaited<ReturnType<typeof makeCacherBackend>>
  beforeAll(async () => {
    server = await startInProcess()
    backend = await makeCacherBackend("cacher on etcd-effect", [server.endpoint])
  })
  afterAll(async () => {
    await backend?.close()
    await server?.close()
  })
  runStorageConformance(() => backend, { cacher: true })
})

describe.skipIf(skipEtcd)("storage conformance through the Cacher: etcd 3.4", () => {
  let etcd: EtcdProcess
  let backend: Awaited<ReturnType<typeof makeCacherBackend>>
  beforeAll(async () => {
    etcd = await EtcdProcess.start()
    backend = await makeCacherBackend("cacher on etcd 3.4", [etcd.endpoint])
  })
  afterAll(async () => {
    await backend?.close()
    await etcd?.dispose()
  })
  runStorageConformance(() => backend, { cacher: true })
})
