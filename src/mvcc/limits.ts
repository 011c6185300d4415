/**
 * etcd's request limits and batch sizes, in a module of their own (no imports) so that the
 * command line can show them as flag defaults without loading the store.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 1572864
/** etcd's default --max-txn-ops. */
export const DEFAULT_MAX_TXN_OPS = 128
/** etcd's default compaction batch limit: revisions removed per batch of a physical compaction. */
export const DEFAULT_COMPACTION_BATCH_LIMIT = 1000
