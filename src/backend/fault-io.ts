/**
 * TEST ONLY: a WAL whose write or fdatasync fails after a number of successful calls, with a
 * given errno (the disk faults of issue 41: ENOSPC while writing, EIO from fdatasync). A failing
 * write first really writes half of its bytes, as a disk that fills up mid-write leaves a torn
 * record behind.
 *
 * Tests inject it in-process (LmdbOptions.walIo). The real program takes it only from the
 * environment variable TEST_ONLY_ETCD_EFFECT_WAL_FAULT ("fdatasync:EIO:3": the 4th fdatasync
 * fails with EIO; "writev:ENOSPC:0": the first write), which is not a flag, is not read from
 * ETCD_* and is documented as test-only (docs/operating.md), so it cannot be switched on by a
 * flag or by accident; the server logs a warning when it is on.
 */
import * as fs from "node:fs"
import { nodeWalIo, type WalIo } from "./wal.js"

export const WAL_FAULT_ENV = "TEST_ONLY_ETCD_EFFECT_WAL_FAULT"

export interface WalFault {
  readonly call: "writev" | "fdatasync"
  readonly code: string
  /** successful calls before the failing ones */
  readonly after: number
}

const errnoError = (code: string, call: string): NodeJS.ErrnoException => {
  const e: NodeJS.ErrnoException = new Error(`${code}: injected fault, ${call}`)
  e.code = code
  return e
}

/** The WAL's I/O with `fault` injected: every call of that kind after the first `after` fails. */
export const faultyWalIo = (fault: WalFault, base: WalIo = nodeWalIo): WalIo => {
  let calls = 0
  return {
    writev: (fd, buffers, position, callback) => {
      if (fault.call !== "writev" || calls++ < fault.after) return base.writev(fd, buffers, position, callback)
      // half of the bytes reach the file, then the disk is full
      const all = Buffer.concat(buffers as Array<Buffer>)
      const half = all.subarray(0, Math.floor(all.length / 2))
      fs.write(fd, half, 0, half.length, position, () => callback(errnoError(fault.code, "writev"), half.length))
    },
    fdatasync: (fd, callback) => {
      if (fault.call !== "fdatasync" || calls++ < fault.after) return base.fdatasync(fd, callback)
      callback(errnoError(fault.code, "fdatasync"))
    }
  }
}

/** The fault TEST_ONLY_ETCD_EFFECT_WAL_FAULT names, or undefined (unset, or not of the form call:CODE:after). */
export const walFaultFromEnv = (env: NodeJS.ProcessEnv = process.env): WalFault | undefined => {
  const m = /^(writev|fdatasync):([A-Z]+):(\d+)$/.exec(env[WAL_FAULT_ENV] ?? "")
  return m === null ? undefined : { call: m[1] as WalFault["call"], code: m[2]!, after: Number(m[3]) }
}
