/* Training's collective mode: the trainer reads each batch itself, every rank in the same order
 * (train_pool.h; the collective read itself is collective.c's). */
#include "train_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../bench/agree.h"
#include "../bench/cpus.h"
#include "../bench/progress.h"
#include "../bench/run.h"
#include "../formats/format.h"
#include "../bench/timer.h"
#include "../formats/sample.h"

/* ---- collective reads: the trainer reads each batch itself ---------------------------- */

bool collective_mode(const struct run *run)
{
	/* A format that does its own I/O (HDF5) says collective through its own key. */
	if (run->format->caps & FORMAT_CAP_OWNS_IO)
		return run->format->read_collective &&
		       run->cfg.hdf5.transfer == HDF5_TRANSFER_COLLECTIVE &&
		       run->cfg.dataset.file_access == FILE_ACCESS_SHARED;
	return run->cfg.mpiio.collective;
}

/* Every rank calls this for every step up to the largest step count (count may be 0), and for
 * every file in the same order, so the collective calls match. */
int collective_batch(struct pool *p, struct worker *w, struct slot *slot, uint64_t step)
{
	struct run *run = p->run;
	struct coll_scratch *c = &p->coll;
	uint64_t first = 0, count = 0;
	int rc = 0;

	if (step < p->s->steps)
		sampler_batch(p->s, step, &first, &count);
	slot->bytes = 0;
	/* Which files this step touches on any rank: collective calls only for those, in the
	 * same order everywhere. */
	memset(c->mine, 0, c->words * sizeof(*c->mine));
	for (uint64_t j = 0; j < count; j++) {
		uint64_t index;
		struct ds_file *file =
		    dataset_file_of(&run->ds, sampler_sample(p->s, first + j), &index);
		c->file[j] = file->index;
		c->index[j] = index;
		c->mine[file->index / 64] |= 1ull << (file->index % 64);
	}
	agree_allreduce(run, c->mine, c->all, (int)c->words, MPI_UINT64_T, MPI_BOR);
	for (uint32_t f = 0; f < run->ds.nfiles; f++) {
		if (!(c->all[f / 64] & (1ull << (f % 64))))
			continue;
		struct ds_file *file = dataset_file(&run->ds, f); /* collective: every file held */
		uint64_t n = 0;
		for (uint64_t j = 0; j < count; j++) {
			if (c->file[j] != f)
				continue;
			c->idx[n] = c->index[j];
			c->out[n] = (char *)slot->buf + j * p->sample_cap;
			if (run->cfg.dataset.verify)
				memset(c->out[n], SAMPLE_POISON, file->max_sample);
			n++;
		}
		/* A failed rank still takes part, with nothing to read. */
		int crc = run->format->read_collective
			      ? run->format->read_collective(run, file, c->idx, rc ? 0 : n, c->out,
							     p->sample_cap, c->lens, &w->io)
			      : collective_read(run, file, c->idx, rc ? 0 : n, c->out,
						p->sample_cap, c->lens, &w->io);
		if (rc == 0)
			rc = crc;
		for (uint64_t j = 0; j < n && rc == 0; j++) {
			slot->bytes += c->lens[j];
			w->stats.samples++;
			if (run->cfg.dataset.verify)
				rc =
				    pool_verify_sample(run, file, c->idx[j], c->out[j], c->lens[j]);
		}
	}
	return rc;
}
