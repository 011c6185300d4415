import * as grpc from "@grpc/grpc-js"
import { it } from "vitest"
import { EtcdProcess } from "../support/etcd.js"
import { startInProcess } from "./support/in-process.js"

const id = (b: Buffer) => b
const send = (client: grpc.Client, path: string, body: Buffer) => new Promise<string>((resolve) =>
  client.makeUnaryRequest(path, id, id, body, { deadline: Date.now() + 3000 }, (e, r) => resolve(e ? `${e.code} ${e.details}` : `ok ${r?.toString("hex").slice(0, 40)}`)))
const cases: Array<[string, string]> = [
  ["/etcdserverpb.KV/Range", "0000"],
  ["/etcdserverpb.KV/Range", "0d01020304"],
  ["/etcdserverpb.KV/Range", "0a0561"],
  ["/etcdserverpb.KV/Range", "0a01610b"],
  ["/etcdserverpb.KV/Range", "0a016133"],
  ["/etcdserverpb.KV/Range", "0a016134"],
  ["/etcdserverpb.KV/Range", "0a01613c"],
  ["/etcdserverpb.KV/Range", "0a01613e00"],
  ["/etcdserverpb.KV/Range", "0a0161ffffffffffffffffffff01"],
  ["/etcdserverpb.KV/Range", "0affffffffffffffffff01"],
  ["/etcdserverpb.KV/Range", "0a0161a80680"],
  ["/etcdserverpb.KV/Range", "18ffffffffffffffffffff01"],
  ["/etcdserverpb.KV/Range", "1a0161"],
  ["/etcdserverpb.KV/Range", "2001"],
  ["/etcdserverpb.KV/Range", "200a"],
  ["/etcdserverpb.KV/Range", "07"],
  ["/etcdserverpb.KV/Range", "f8ffffffffffffffff01"],
  ["/etcdserverpb.KV/Range", "800100"],
  ["/etcdserverpb.KV/Txn", "0a020800"],
  ["/etcdserverpb.KV/Txn", "0a021000"],
  ["/etcdserverpb.KV/Txn", "0a020d00"],
  ["/etcdserverpb.KV/Txn", "12040a020000"],
  ["/etcdserverpb.Auth/Authenticate", "0a02ffff"],
  ["/etcdserverpb.Auth/Authenticate", "0a02c328"],
  ["/etcdserverpb.Lease/LeaseGrant", "08ffffffffffffffffff01"],
  ["/etcdserverpb.Lease/LeaseGrant", "1000"],
  ["/etcdserverpb.Lease/LeaseGrant", "0a00"],
  ["/etcdserverpb.Maintenance/Status", "0000"],
  ["/etcdserverpb.Maintenance/Status", "0b"],
  ["/etcdserverpb.Maintenance/Status", "0b0c"],
  ["/etcdserverpb.Maintenance/Status", "0b1c"],
  ["/etcdserverpb.Maintenance/Status", "0b08010c"],
  ["/etcdserverpb.Maintenance/Status", "0c"],
  ["/etcdserverpb.Maintenance/Status", "0900000000"],
  ["/etcdserverpb.Maintenance/Status", "0d000000"],
  ["/etcdserverpb.Maintenance/Status", "0a"],
  ["/etcdserverpb.Maintenance/Status", "08"],
  ["/etcdserverpb.Maintenance/Status", "0880"],
]
it("probe", async () => {
  const etcd = await EtcdProcess.start()
  const ours = await startInProcess()
  const a = new grpc.Client(etcd.endpoint, grpc.credentials.createInsecure())
  const b = new grpc.Client(ours.endpoint, grpc.credentials.createInsecure())
  for (const [p, hex] of cases) {
    const body = Buffer.from(hex, "hex")
    const [x, y] = await Promise.all([send(a, p, body), send(b, p, body)])
    console.log(`${p} ${hex}\n   etcd: ${x}\n   ours: ${y}`)
  }
  await etcd.dispose(); await ours.close()
}, 60000)
