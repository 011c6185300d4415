/** The storage conformance suite on our own server (in-process, memory backend). */
import { describe } from "vitest"
import { onOurServer } from "../conformance/backend.js"
import { runStorageConformance } from "../conformance/index.js"

describe("storage conformance: etcd3 store on etcd-effect", () => {
  runStorageConformance(onOurServer())
})
