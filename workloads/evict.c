/* Page-cache eviction shared by the workloads (evict.h). */
#include "evict.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <mpi.h>

#include "../bench/dsfile.h"
#include "../bench/run.h"
#include "../bench/storage/storage.h"
#include "../bench/util.h"

int evict_drop_all(struct run *run)
{
	char why[192];
	int rc;

	if (run->local_rank != 0)
		return 0;
	rc = util_drop_caches(why, sizeof(why));
	if (rc < 0)
		return run_fail(run, rc,
				"page_cache = drop needs root: %s (use page_cache = evict)", why);
	return 0;
}

/* Whether this rank evicts dataset file i for its node: shared files, the node's first rank
 * all of them; per-rank files, those of the ranks i % P whose node leader this rank is. */
static bool evict_mine(const struct run *run, uint32_t i, bool shared)
{
	int owner = (int)(i % (uint32_t)run->nranks);

	if (run->local_rank != 0)
		return false;
	if (shared)
		return true;
	return run->rank_leaders ? run->rank_leaders[owner] == run->rank : owner == run->rank;
}

int evict_dataset(struct run *run, bool record)
{
	const struct config *cfg = &run->cfg;
	bool shared = cfg->dataset.file_access == FILE_ACCESS_SHARED;
	/* Not measured: eviction is outside the epoch's reads. */
	struct io io = {.run = run};
	unsigned long long calls = 0, total = 0;
	int rc = 0;

	if (cfg->storage.page_cache == PAGE_CACHE_DROP)
		return evict_drop_all(run);
	if (cfg->storage.page_cache != PAGE_CACHE_EVICT)
		return 0;
	/* Once per node, so P ranks on one node do not evict each file P times. */
	for (uint32_t i = 0; rc == 0 && i < run->ds.nfiles; i++) {
		if (!evict_mine(run, i, shared))
			continue;
		char buf[CFG_PATH_MAX + 64];
		const char *fpath = dataset_path(&run->ds, i, buf, sizeof(buf));
		if (!fpath) {
			rc = run_fail(
			    run, -FB_EINTERNAL,
			    "cannot evict dataset file %u: its name is unknown on this rank", i);
			break;
		}
		rc = io_evict(&io, fpath);
		calls++;
	}
	/* every rank gets here (no early return): the count is a collective */
	MPI_Reduce(&calls, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, run->comm);
	if (run->rank == 0 && record) {
		json_object_set_new(run->info_storage, "page_cache_evictions_per_epoch",
				    json_integer((json_int_t)total));
		json_object_set_new(run->info_storage, "page_cache_evicted_by",
				    json_string("the first rank of each node"));
	}
	return rc;
}
