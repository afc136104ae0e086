/* `feedbench run --dry-run` for the checkpoint workload: the whole geometry's plan (bytes and
 * files per rank and per host, the buffers every rank allocates, the totals), computed from the
 * config with the sizing the run uses (checkpoint_store.c), without a file or an MPI call, so a
 * 1024-process geometry is planned from one process.
 *
 * Each line is `key = exact integer (reading aid)`, the key's meaning in docs/checkpoint.md.
 */
#include "checkpoint_store.h"

#include <inttypes.h>
#include <stdio.h>

#include "../bench/config.h"

#define GIB 1073741824.0

/* Smallest and largest of a per-rank or per-host figure, and where each is. */
struct span {
	uint64_t min, max;
	int at_min, at_max;
};

static void span_add(struct span *s, uint64_t v, int at)
{
	if (at == 0 || v < s->min) {
		s->min = v;
		s->at_min = at;
	}
	if (at == 0 || v > s->max) {
		s->max = v;
		s->at_max = at;
	}
}

/* Files rank creates per checkpoint: its shard (dcp, when it has bytes), and rank 0 the
 * .metadata and, layout single, the shared file. */
static uint64_t files_of(const struct config *cfg, uint64_t bytes, int rank)
{
	bool dcp = cfg->checkpoint.layout == CKPT_LAYOUT_DCP;

	return (uint64_t)(dcp && bytes > 0) + (rank == 0 ? 1u + !dcp : 0u);
}

static void span_print(FILE *out, const char *what, const char *where, const struct span *s,
		       bool bytes)
{
	if (bytes)
		fprintf(out,
			"%s_min = %" PRIu64 " (%.1f GiB, %s %d)\n%s_max = %" PRIu64
			" (%.1f GiB, %s %d)\n",
			what, s->min, (double)s->min / GIB, where, s->at_min, what, s->max,
			(double)s->max / GIB, where, s->at_max);
	else
		fprintf(out, "%s_min = %" PRIu64 " (%s %d)\n%s_max = %" PRIu64 " (%s %d)\n", what,
			s->min, where, s->at_min, what, s->max, where, s->at_max);
}

/* Per rank and per host of rph consecutive ranks (mpiexec's default placement by slot). */
static void ckpt_spans(const struct config *cfg, const struct ckpt_plan *p, int g, int rph,
		       FILE *out)
{
	struct span rb = {0}, rf = {0}, hb = {0}, hf = {0};
	uint64_t hbytes = 0, hfiles = 0;
	int writers = 0;

	for (int r = 0; r < g; r++) {
		uint64_t b = ckpt_bytes_of(cfg, p, r), f = files_of(cfg, b, r);
		span_add(&rb, b, r);
		span_add(&rf, f, r);
		writers += b > 0;
		hbytes += b;
		hfiles += f;
		if ((r + 1) % rph == 0 || r + 1 == g) {
			span_add(&hb, hbytes, r / rph);
			span_add(&hf, hfiles, r / rph);
			hbytes = hfiles = 0;
		}
	}
	fprintf(out, "writing_ranks = %d (of %d)\n", writers, g);
	span_print(out, "bytes_per_rank", "rank", &rb, true);
	span_print(out, "files_per_rank", "rank", &rf, false);
	span_print(out, "bytes_per_host", "host", &hb, true);
	span_print(out, "files_per_host", "host", &hf, false);
	/* What ckpt_setup allocates on every rank: the pattern and restore buffers of one transfer
	 * each and every rank's size; async training adds a staging copy of the rank's bytes. */
	uint64_t mem = 2 * cfg->checkpoint.transfer_size + (uint64_t)g * sizeof(uint64_t);
	bool async = checkpoint_in_training(cfg) && cfg->checkpoint.mode == CKPT_MODE_ASYNC;
	fprintf(out,
		"memory_per_rank = %" PRIu64 " (%.1f MiB: 2 buffers of transfer_size %" PRIu64
		" and %d rank sizes of 8 bytes%s)\n",
		mem + (async ? rb.max : 0), (double)(mem + (async ? rb.max : 0)) / MIB,
		cfg->checkpoint.transfer_size, g,
		async ? ", and the async staging copy of the largest rank's bytes" : "");
}

int ckpt_dry_plan(const struct config *cfg, int nranks, int ranks_per_host, FILE *out)
{
	int64_t mp = cfg->checkpoint.tensor_parallelism * cfg->checkpoint.pipeline_parallelism;
	int g = cfg->checkpoint.data_parallelism ? (int)(mp * cfg->checkpoint.data_parallelism)
						 : nranks;
	int rph = ranks_per_host > 0 ? ranks_per_host : 1;
	struct ckpt_plan p;
	int64_t nw, nr;

	ckpt_plan_make(cfg, 0, g, &p);
	if (ckpt_phased(cfg)) {
		nw = cfg->checkpoint.num_write > 0 ? cfg->checkpoint.num_write : 0;
		nr = cfg->checkpoint.num_read > 0 ? cfg->checkpoint.num_read : 0;
	} else {
		nw = cfg->checkpoint.save ? cfg->checkpoint.count : 0;
		nr = cfg->checkpoint.restore ? cfg->checkpoint.count : 0;
	}
	fprintf(out,
		"# feedbench run --dry-run: %s, the plan of the whole geometry (nothing written, "
		"nothing allocated)\n",
		cfg->workload.name);
	fprintf(out,
		"ranks = %d (tensor %d x pipeline %d x data %d, ZeRO %" PRId64 ", %d launched)\n",
		g, p.tp, p.pp, p.dp, cfg->checkpoint.zero_stage, nranks);
	fprintf(out, "hosts = %d (%d ranks per host, rank r on host r / %d)\n", (g + rph - 1) / rph,
		rph, rph);
	fprintf(out,
		"checkpoint_bytes = %" PRIu64 " (%.1f GiB: model %" PRIu64 ", optimizer %" PRIu64
		", gradients %" PRIu64 ")\n",
		p.total, (double)p.total / GIB, p.model, p.optimizer, p.grads);
	fprintf(out, "checkpoints_written = %" PRId64 "\ncheckpoints_read = %" PRId64 "\n", nw, nr);
	ckpt_spans(cfg, &p, g, rph, out);
	fprintf(out, "total_bytes_written = %" PRIu64 " (%.1f GiB)\n", p.total * (uint64_t)nw,
		(double)p.total * (double)nw / GIB);
	fprintf(out, "total_bytes_read = %" PRIu64 " (%.1f GiB)\n", p.total * (uint64_t)nr,
		(double)p.total * (double)nr / GIB);
	return 0;
}
