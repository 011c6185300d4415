/**
 * Ready-made Layers for tests with @effect/vitest: `layer()` gives an in-memory etcd-effect member
 * and an `EtcdClient` on it, `layerApiServer()` an in-process Kubernetes API; both on the live
 * clock while the test itself keeps the TestClock (test-clock.ts says why).
 *
 * @module
 */
export { ApiServer, layerApiServer } from "./test-apiserver.js"
export { layer, type TestEtcdOptions } from "./test-etcd.js"
export { onLiveClock } from "./test-clock.js"
