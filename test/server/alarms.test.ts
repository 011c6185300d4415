/**
 * The alarms record (alarms.ts) read at start-up: what was raised stays raised across a restart,
 * and a record that does not decode is start-up corruption (a RecoveryError naming it, as etcd
 * panics), never read as "no alarms" — that would lift a NOSPACE nobody disarmed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { RecoveryError } from "../../src/mvcc/recovery-error.js"
import { ALARMS_KEY, AlarmType, makeAlarms } from "../../src/server/alarms.js"

describe("alarms at start-up", () => {
  it.effect("a raised NOSPACE is raised again by the next load of the same backend", () =>
    Effect.gen(function* () {
      const { backend } = makeMemoryBackend()
      const first = yield* makeAlarms(backend)
      yield* first.activate("8e9e05c52164694d", AlarmType.NOSPACE)
      const again = yield* makeAlarms(backend)
      expect(again.noSpace()).toBe(true)
      expect(again.list(AlarmType.NONE)).toEqual([{ memberID: "8e9e05c52164694d", alarm: AlarmType.NOSPACE }])
    })
  )

  it.effect("an unreadable record is a RecoveryError, not an empty list", () =>
    Effect.gen(function* () {
      const why = [
        "0.memberID: Expected string, actual 1",
        "Expected property name or '}' in JSON at position 1",
        "Expected ReadonlyArray<{ readonly memberID: string; readonly alarm: Int }>, actual"
      ]
      for (const [i, stored] of ['[{"memberID":1,"alarm":1}]', "{not json", '{"memberID":"1","alarm":1}'].entries()) {
        const { backend } = makeMemoryBackend()
        yield* backend.write([{ bucket: "meta", key: ALARMS_KEY, value: new Uint8Array(Buffer.from(stored)) }])
        const loaded = yield* Effect.either(makeAlarms(backend))
        expect(Either.isLeft(loaded)).toBe(true)
        if (Either.isLeft(loaded)) {
          expect(loaded.left).toBeInstanceOf(RecoveryError)
          expect(loaded.left.reason).toBe("AlarmRecovery")
          expect(loaded.left.message).toMatch(/^the alarms record is unreadable: /)
          // serve prints it as its one line before exiting 1
          expect(loaded.left.message).not.toContain("\n")
          expect(loaded.left.message).toContain(why[i])
        }
      }
    })
  )
})
