/* The page cache's state measured with mincore(2) (cachestate.h). */
#include "cachestate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <mpi.h>

#include "agree.h"
#include "dsfile.h"
#include "run.h"
#include "safefile.h"
#include "storage/storage.h"

enum { CS_RESIDENT, CS_EXAMINED, CS_BYTES, CS_FILES, CS_SEEN, CS_FAILED, CS_SAMPLED, CS_N };

/* Resident bytes of [off, off + len) of fd, counted page by page. */
static int count_window(int fd, uint64_t off, size_t len, size_t page, double *resident)
{
	size_t npages = (len + page - 1) / page;
	unsigned char *vec = malloc(npages);
	void *map;
	int rc = 0;

	if (!vec)
		return -ENOMEM;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	if (map == MAP_FAILED) {
		free(vec);
		return -errno;
	}
	if (mincore(map, len, vec) != 0) {
		rc = -errno;
	} else {
		for (size_t i = 0; i < npages; i++)
			if (vec[i] & 1) /* the last page may be partial: count only its bytes */
				*resident +=
				    i + 1 < npages ? (double)page : (double)(len - i * page);
	}
	munmap(map, len);
	free(vec);
	return rc;
}

int cachestate_file(const char *path, struct cache_count *c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct stat sb;
	double resident = 0, examined = 0;
	/* safe_open_read: a FIFO or device among the dataset's names is refused, not waited on */
	int rc = 0, fd = safe_open_read(path, 0, false);

	c->files++;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		rc = fd < 0 ? fd : -errno;
		goto out;
	}
	uint64_t size = (uint64_t)sb.st_size;
	c->bytes += (double)size;
	/* small files whole; larger ones in CACHESTATE_WINDOWS evenly spaced page-aligned windows
	 */
	uint64_t win =
	    size <= CACHESTATE_FILE_BYTES ? size : CACHESTATE_FILE_BYTES / CACHESTATE_WINDOWS;
	unsigned nwin = size <= CACHESTATE_FILE_BYTES ? 1 : CACHESTATE_WINDOWS;
	for (unsigned w = 0; rc == 0 && win > 0 && w < nwin; w++) {
		uint64_t off = nwin == 1 ? 0 : (size - win) / (nwin - 1) * w / page * page;
		size_t len = (size_t)(off + win <= size ? win : size - off);
		rc = count_window(fd, off, len, page, &resident);
		examined += (double)len;
	}
	if (nwin > 1)
		c->sampled = 1;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		c->failed++;
		return rc;
	}
	c->files_seen++;
	c->resident += resident;
	c->examined += examined;
	return 0;
}

/* This rank's share: its own files (per_rank), or every file on a node's first rank (shared);
 * at most CACHESTATE_MAX_FILES of them, evenly spaced. */
static void count_rank(struct run *run, double v[CS_N])
{
	const struct dataset *ds = &run->ds;
	bool shared = run->cfg.dataset.file_access == FILE_ACCESS_SHARED;
	struct cache_count c = {0};
	uint32_t n = shared && run->local_rank != 0 ? 0 : ds->nheld;
	uint32_t stride =
	    n > CACHESTATE_MAX_FILES ? (n + CACHESTATE_MAX_FILES - 1) / CACHESTATE_MAX_FILES : 1;

	for (uint32_t k = 0; k < n; k += stride) {
		char buf[CFG_PATH_MAX + 64];
		const char *path =
		    dataset_path(ds, ds->held_first + k * ds->held_step, buf, sizeof(buf));
		if (path)
			cachestate_file(path, &c);
		else
			c.files++, c.failed++;
	}
	if (stride > 1)
		c.sampled = 1;
	double all[CS_N] = {c.resident,	  c.examined, c.bytes,	c.files,
			    c.files_seen, c.failed,   c.sampled};
	memcpy(v, all, sizeof(all));
}

static json_t *count_json(const double *v)
{
	json_t *o = json_object();

	/* nothing examined: no percentage (null), never a 0 that would read as "all evicted" */
	json_object_set_new(o, "resident_percent",
			    v[CS_EXAMINED] > 0 ? json_real(100 * v[CS_RESIDENT] / v[CS_EXAMINED])
					       : json_null());
	json_object_set_new(o, "resident_bytes", json_integer((json_int_t)v[CS_RESIDENT]));
	json_object_set_new(o, "examined_bytes", json_integer((json_int_t)v[CS_EXAMINED]));
	json_object_set_new(o, "files_examined", json_integer((json_int_t)v[CS_SEEN]));
	json_object_set_new(o, "files_failed", json_integer((json_int_t)v[CS_FAILED]));
	json_object_set_new(o, "sampled", json_boolean(v[CS_SAMPLED] > 0));
	return o;
}

/* Rank 0: the nodes' sums (ranks grouped by their node's first rank) and the run's. */
static json_t *record_json(const struct run *run, const double *all, const char *idx_name,
			   int64_t idx, const char *when)
{
	int P = run->nranks;
	double sum[CS_N] = {0};
	json_t *nodes = json_array();

	for (int r = 0; r < P; r++) {
		int leader = run->rank_leaders ? run->rank_leaders[r] : r;
		if (leader != r)
			continue;
		double node[CS_N] = {0};
		for (int q = 0; q < P; q++)
			if ((run->rank_leaders ? run->rank_leaders[q] : q) == leader)
				for (int j = 0; j < CS_N; j++)
					node[j] = j == CS_SAMPLED
						      ? node[j] + (all[q * CS_N + j] > 0)
						      : node[j] + all[q * CS_N + j];
		json_t *o = count_json(node);
		json_object_set_new(
		    o, "host", json_string(run->rank_hosts ? run->rank_hosts[r] : run->hostname));
		json_array_append_new(nodes, o);
		for (int j = 0; j < CS_N; j++)
			sum[j] += node[j];
	}
	json_t *rec = count_json(sum);
	json_object_set_new(rec, idx_name, json_integer((json_int_t)idx));
	json_object_set_new(rec, "when", json_string(when));
	json_object_set_new(rec, "nodes", nodes);
	return rec;
}

/* Collective: every rank's count to rank 0, which appends the record to storage.<key>. Rank 0
 * allocates the receive buffer before the gather and every rank learns whether it could
 * (agree): a failed allocation ends every rank together with rank 0's message, not a gather
 * into nothing that the other ranks wait on. */
static int gather_record(struct run *run, const double *v, const char *key, const char *idx_name,
			 int64_t idx, const char *when)
{
	size_t len = sizeof(double) * CS_N * (size_t)run->nranks;
	double *all = NULL;
	int rc = 0;

	if (run->rank == 0 && !(all = malloc(len)))
		rc = fb_fail(&run->err, -ENOMEM,
			     "page-cache measurement (storage.%s): cannot allocate %zu bytes for "
			     "the counts of %d ranks",
			     key, len, run->nranks);
	if ((rc = agree(run, rc)) < 0) {
		free(all);
		return rc;
	}
	MPI_Gather(v, CS_N, MPI_DOUBLE, all, CS_N, MPI_DOUBLE, 0, run->comm);
	if (!all)
		return 0;
	json_t *arr = json_object_get(run->info_storage, key);
	if (!arr) {
		arr = json_array();
		json_object_set_new(run->info_storage, key, arr);
	}
	json_array_append_new(arr, record_json(run, all, idx_name, idx, when));
	free(all);
	return 0;
}

static bool no_page_cache(const struct run *run)
{
	return run->storage && (run->storage->caps & STORAGE_CAP_OBJECT);
}

int cachestate_record(struct run *run, int64_t epoch, const char *when)
{
	double v[CS_N];

	if (no_page_cache(run))
		return 0; /* objects have no local page cache */
	count_rank(run, v);
	return gather_record(run, v, "page_cache_measured", "epoch", epoch, when);
}

int cachestate_record_path(struct run *run, const char *path, const char *key, int64_t step,
			   const char *when)
{
	struct cache_count c = {0};

	if (no_page_cache(run))
		return 0;
	if (path)
		cachestate_file(path, &c);
	double v[CS_N] = {c.resident,	c.examined, c.bytes,  c.files,
			  c.files_seen, c.failed,   c.sampled};
	return gather_record(run, v, key, "step", step, when);
}

void cachestate_warn(struct run *run)
{
	json_t *arr = json_object_get(run->info_storage, "page_cache_measured"), *rec;
	size_t i, before = 0, cached = 0;
	double max = 0;

	if (run->rank != 0 || run->cfg.storage.direct)
		return;
	json_array_foreach(arr, i, rec)
	{
		json_t *p = json_object_get(rec, "resident_percent");
		if (strcmp(json_string_value(json_object_get(rec, "when")), "before") != 0)
			continue;
		before++;
		if (json_is_number(p) && json_number_value(p) >= 50) {
			cached++;
			max = json_number_value(p) > max ? json_number_value(p) : max;
		}
	}
	if (cached)
		run_warn(run,
			 "the page cache held %.0f %% of the dataset before %zu of %zu epochs "
			 "(measured with mincore, storage.page_cache_measured): those epochs read "
			 "mostly from memory, not from the storage (page_cache = %s)",
			 max, cached, before,
			 run->cfg.storage.page_cache == PAGE_CACHE_KEEP
			     ? "keep; set evict or drop"
			     : "evict or drop did not take");
}
