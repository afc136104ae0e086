/* Keeping the page cache from answering a measured read ([storage] page_cache), for every
 * workload that reads back what it wrote or what generation left behind: the training reads
 * (each epoch) and the checkpoint restore. Per-file eviction goes through the back-end
 * (io_evict: storage_ops.evict), so every back-end and Darshan see those calls.
 */
#ifndef FEEDBENCH_EVICT_H
#define FEEDBENCH_EVICT_H

#include <stdbool.h>

struct run;

/* page_cache = drop: the first rank of each node (local_rank 0) writes dirty pages back and
 * drops the node's whole page cache (/proc/sys/vm/drop_caches, root); other ranks do nothing.
 * Errors recorded (the message says root is needed and names the file). */
int evict_drop_all(struct run *run);

/* Before an epoch's reads, as [storage] page_cache says. Collective (every rank, whatever it
 * finds: the count is reduced). evict: the first rank of each node evicts every dataset file
 * its node's ranks will read (shared files: all; per-rank files: those of the ranks on the
 * node), once, through the back-end; drop: evict_drop_all; keep: nothing. record: the count of
 * evictions goes into summary.json's storage object (training epochs, not evaluation
 * passes). */
int evict_dataset(struct run *run, bool record);

#endif
