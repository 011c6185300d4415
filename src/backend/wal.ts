/**
 * The write-ahead log in front of LMDB (etcd's wal package, reduced to what one member's backend
 * needs): a batch is acknowledged once its record is in the log and the log is fdatasync'ed; LMDB
 * gets the batches later, many per transaction, off the acknowledgement path.
 *
 * Files: <data-dir>/member/wal/<segment index, 16 hex>-<first batch seq, 16 hex>.wal (etcd names
 * its segments <seq>-<raft index>.wal). Records never span segments: a group that does not fit
 * the rest of the current segment starts a new one.
 *
 * Why the log is fast: an fdatasync after overwriting already-allocated, already-synced blocks
 * has no metadata to flush (no size change, no block allocation), only the data pages. So a
 * segment is zero-filled ahead of the writer: when a group runs past the zeroed part, the same
 * write carries zeros up to a new, larger end (64 KiB at first, doubling up to 1 MiB per step),
 * and that one fdatasync also pays for the size change. etcd preallocates 64 MB per segment with
 * fallocate; Node has no fallocate, and writing 64 MiB of zeros up front would cost ~80 ms and
 * 64 MiB of disk writes per open (tests open hundreds of data dirs), so the zeros are written as
 * the log grows instead: one metadata flush per 1 MiB of log.
 *
 * One group in flight at a time (the caller serialises). Its write and fdatasync both run on
 * libuv's threadpool, so the event loop keeps serving while the disk works.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { type DecodedRecord, decodeRecords } from "./wal-record.js"

/** The two system calls on the write path; replaceable so tests can make them fail (fail-stop). */
export interface WalIo {
  readonly writev: (
    fd: number,
    buffers: ReadonlyArray<Buffer>,
    position: number,
    callback: (err: NodeJS.ErrnoException | null, bytesWritten: number) => void
  ) => void
  readonly fdatasync: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => void
}

export const nodeWalIo: WalIo = {
  writev: (fd, buffers, position, callback) => fs.writev(fd, buffers as Array<Buffer>, position, callback),
  fdatasync: (fd, callback) => fs.fdatasync(fd, callback)
}

/** etcd's --unsafe-no-fsync: writes without fdatasync */
export const noFsyncWalIo: WalIo = {
  writev: nodeWalIo.writev,
  fdatasync: (_fd, callback) => callback(null)
}

/** etcd's SegmentSizeBytes. */
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
const GROW_MIN = 64 * 1024
const GROW_MAX = 1024 * 1024
let zeros: Buffer | undefined

const hex16 = (n: number) => n.toString(16).padStart(16, "0")
const SEGMENT_NAME = /^([0-9a-f]{16})-([0-9a-f]{16})\.wal$/

export interface SegmentFile {
  readonly index: number
  readonly firstSeq: number
  readonly path: string
}

/** The segments in `dir`, oldest first; other files are ignored. */
export const listSegments = (dir: string): Array<SegmentFile> => {
  const out: Array<SegmentFile> = []
  for (const name of fs.readdirSync(dir)) {
    const m = SEGMENT_NAME.exec(name)
    if (m !== null)
      out.push({ index: Number.parseInt(m[1]!, 16), firstSeq: Number.parseInt(m[2]!, 16), path: path.join(dir, name) })
  }
  return out.sort((a, b) => a.index - b.index)
}

export class WalCorrupt extends Error {}

/** `buffers` without their first `n` bytes. */
const skipBytes = (buffers: ReadonlyArray<Buffer>, n: number): Array<Buffer> => {
  const out: Array<Buffer> = []
  let left = n
  for (const b of buffers) {
    if (left >= b.length) left -= b.length
    else {
      out.push(left > 0 ? b.subarray(left) : b)
      left = 0
    }
  }
  return out
}

/**
 * Writes all `total` bytes of `buffers` at `position`: a short write (the disk filling up) goes on
 * with the rest, as Go's os.File.Write does, so the call that cannot write reports why (ENOSPC).
 */
const writeAll = (
  io: WalIo,
  fd: number,
  buffers: ReadonlyArray<Buffer>,
  position: number,
  total: number,
  done: (err: Error | null) => void
): void =>
  io.writev(fd, buffers, position, (err, written) => {
    if (err !== null) return done(err)
    if (written >= total) return done(null)
    if (written <= 0) return done(new Error(`short write: 0 of ${total} bytes`))
    writeAll(io, fd, skipBytes(buffers, written), position + written, total - written, done)
  })

export interface WalContents {
  /** the records after `applied`, in order, seq applied+1, applied+2, … */
  readonly records: ReadonlyArray<DecodedRecord>
  readonly segments: ReadonlyArray<SegmentFile>
}

/**
 * Reads the log for recovery. Records up to `applied` (already in LMDB) are skipped, wherever
 * they are: a segment whose deletion did not survive a crash is harmless. Within a segment the
 * log ends at the first record that does not decode (a torn tail). A later segment that goes on
 * with a record past a missing one means acknowledged records were lost: WalCorrupt (etcd fails
 * to start on a CRC mismatch too, rather than serve a store with holes).
 */
export const readWal = (dir: string, applied: number): WalContents => {
  const segments = listSegments(dir)
  const records: Array<DecodedRecord> = []
  let expected = applied + 1
  for (let i = 0; i < segments.length; i++) {
    const next = segments[i + 1]
    // Named after its first seq: a segment followed by one starting at or before applied+1 is wholly applied.
    if (next !== undefined && next.firstSeq <= applied + 1) continue
    const seg = segments[i]!
    for (const r of decodeRecords(fs.readFileSync(seg.path))) {
      if (r.seq <= applied) continue
      if (r.seq !== expected) {
        throw new WalCorrupt(
          `WAL segment ${path.basename(seg.path)} holds batch ${r.seq} but batch ${expected} is missing`
        )
      }
      records.push(r)
      expected++
    }
  }
  return { records, segments }
}

interface OpenSegment {
  readonly path: string
  fd: number | undefined
  /** the last seq written to it, 0 while empty */
  lastSeq: number
}

export interface WalWriterOptions {
  readonly dir: string
  readonly segmentBytes: number
  readonly io: WalIo
  /** index of the first segment this writer creates (above every existing one) */
  readonly nextIndex: number
}

/** Appends groups of records; the caller keeps at most one `append` in flight. */
export class WalWriter {
  private readonly dirFd: number
  private nextIndex: number
  /** segments not yet deleted, oldest first; the last one is being written while its fd is open */
  private readonly segments: Array<OpenSegment> = []
  private current: OpenSegment | undefined
  private pos = 0
  /** bytes of the current segment that are on disk (zeros or records) and synced */
  private allocated = 0
  constructor(private readonly options: WalWriterOptions) {
    this.dirFd = fs.openSync(options.dir, "r")
    this.nextIndex = options.nextIndex
  }

  /**
   * Writes `records` (batches firstSeq..lastSeq, `bytes` in all) at the end of the log with one
   * write and makes them durable with one fdatasync; `done` is called once both returned.
   */
  append(
    records: ReadonlyArray<Buffer>,
    bytes: number,
    firstSeq: number,
    lastSeq: number,
    done: (err?: Error) => void
  ): void {
    const cur = this.current
    if (cur !== undefined && this.pos > 0 && this.pos + bytes > this.options.segmentBytes) {
      // Full: later groups go to a new segment. Nothing is in flight on this fd.
      if (cur.fd !== undefined) fs.close(cur.fd, () => {})
      cur.fd = undefined
      this.current = undefined
    }
    if (this.current !== undefined) return this.write(this.current, records, bytes, lastSeq, false, done)
    const seg: OpenSegment = {
      path: path.join(this.options.dir, `${hex16(this.nextIndex++)}-${hex16(firstSeq)}.wal`),
      fd: undefined,
      lastSeq: 0
    }
    fs.open(seg.path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600, (err, fd) => {
      if (err !== null) return done(err)
      seg.fd = fd
      this.segments.push(seg)
      this.current = seg
      this.pos = 0
      this.allocated = 0
      this.write(seg, records, bytes, lastSeq, true, done)
    })
  }

  private write(
    seg: OpenSegment,
    records: ReadonlyArray<Buffer>,
    bytes: number,
    lastSeq: number,
    created: boolean,
    done: (err?: Error) => void
  ): void {
    const fd = seg.fd!
    const end = this.pos + bytes
    let allocated = this.allocated
    let buffers = records
    let total = bytes
    if (end > allocated) {
      // Zero-fill ahead, in the same write: the next groups overwrite synced blocks.
      const grow = Math.min(GROW_MAX, Math.max(GROW_MIN, allocated))
      allocated = Math.max(end, Math.min(this.options.segmentBytes, allocated + grow))
      if (allocated > end) {
        buffers = [...records, (zeros ??= Buffer.alloc(GROW_MAX)).subarray(0, allocated - end)]
        total = allocated - this.pos
      }
    }
    writeAll(this.options.io, fd, buffers, this.pos, total, (err) => {
      if (err !== null) return this.cutBack(fd, err, done)
      this.options.io.fdatasync(fd, (err2) => {
        if (err2 !== null) return done(err2)
        const finish = () => {
          this.pos = end
          this.allocated = Math.max(this.allocated, allocated)
          seg.lastSeq = lastSeq
          done()
        }
        // A new segment's name must be durable too before anything in it is acknowledged.
        if (created) fs.fsync(this.dirFd, (err3) => (err3 !== null ? done(err3) : finish()))
        else finish()
      })
    })
  }

  /**
   * After a failed write (a full disk): the segment is cut back to the end of the last durable
   * group, so nothing of the failed one can be replayed — its write is refused, not unknown. The
   * log is not written again (fail-stop); `done` gets the write's error either way.
   */
  private cutBack(fd: number, err: Error, done: (err?: Error) => void): void {
    fs.ftruncate(fd, this.pos, (e) => (e !== null ? done(err) : this.options.io.fdatasync(fd, () => done(err))))
  }

  /** Deletes the segments whose every record is at or below `applied` (in LMDB), except the one being written. */
  release(applied: number): void {
    while (this.segments.length > 0) {
      const seg = this.segments[0]!
      if (seg === this.current || seg.lastSeq > applied) return
      this.segments.shift()
      // Not synced: a segment that comes back after a crash holds only applied records, skipped on replay.
      fs.unlink(seg.path, () => {})
    }
  }

  /** Closes the files; with every record applied, the current segment is deleted too (a clean shutdown leaves no log). */
  close(applied: number | undefined): void {
    const cur = this.current
    if (cur?.fd !== undefined) {
      fs.closeSync(cur.fd)
      cur.fd = undefined
    }
    this.current = undefined
    if (applied !== undefined) {
      for (const seg of this.segments) {
        if (seg.lastSeq > applied) break
        try {
          fs.unlinkSync(seg.path)
        } catch {
          // already gone
        }
      }
    }
    fs.closeSync(this.dirFd)
  }
}
