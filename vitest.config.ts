import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // no root include: a project's own include would be added to it (extends merges arrays)
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start servers and child processes; two cores on CI, so keep files in few workers.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      // every test, on the default gRPC transport (the lean one, src/server/transport/)
      { extends: true, test: { name: "lean", include: ["test/**/*.test.ts"] } },
      // the server's and the clients' suites again on grpc-js: ETCD_GRPC_TRANSPORT is honoured by
      // the server config's default (in-process servers) and by `serve` (spawned ones), as etcd
      // honours its ETCD_* variables.
      {
        extends: true,
        test: {
          name: "grpc-js",
          include: ["test/server/**/*.test.ts", "test/client/**/*.test.ts"],
          // the transport's unit tests and the hostile-peer/interop tests (they run each transport themselves)
          exclude: [
            "**/node_modules/**",
            "test/server/transport/**",
            "test/server/h2-hostile.test.ts",
            "test/server/h2-interop.test.ts"
          ],
          env: { ETCD_GRPC_TRANSPORT: "grpc-js" }
        }
      }
    ]
  }
})
