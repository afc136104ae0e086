/* The run folder: the summary head every workload shares, written atomically (results.h). */
#include "results.h"
#include "nodes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "agree.h"
#include "report.h"
#include "run.h"
#include "storage/storage.h"
#include "safefile.h"
#include "timer.h"
#include "trace.h"
#include "../workloads/workload.h"
#include "util.h"
#include "verdict.h"

static json_t *config_json(const struct config *cfg)
{
	json_t *root = json_object();
	char val[CFG_PATH_MAX];

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		json_t *sec = json_object_get(root, k->section);
		if (!sec) {
			sec = json_object();
			json_object_set_new(root, k->section, sec);
		}
		cfg_format_value(cfg, k, val, sizeof(val));
		switch (k->type) {
		case CFG_BOOL:
			json_object_set_new(sec, k->name, json_boolean(strcmp(val, "true") == 0));
			break;
		case CFG_INT:
		case CFG_SIZE:
			if (strcmp(val, "auto") == 0) /* CFG_F_AUTO: resolved at run time */
				json_object_set_new(sec, k->name, json_string(val));
			else
				json_object_set_new(sec, k->name,
						    json_integer(strtoll(val, NULL, 10)));
			break;
		case CFG_DURATION:
		case CFG_DOUBLE:
			json_object_set_new(sec, k->name, json_real(strtod(val, NULL)));
			break;
		default:
			json_object_set_new(sec, k->name, json_string(val));
		}
	}
	json_t *mp = json_object_get(root, "storage.mpiio");
	for (int h = 0; mp && h < cfg->mpiio.nhints; h++)
		json_object_set_new(mp, cfg->mpiio.hints[h].key,
				    json_string(cfg->mpiio.hints[h].value));
	if (cfg->sweep.nkeys) {
		json_t *sw = json_object_get(root, "sweep");
		for (int s = 0; sw && s < cfg->sweep.nkeys; s++)
			json_object_set_new(sw, cfg->sweep.keys[s].key,
					    json_string(cfg->sweep.keys[s].values));
	}
	return root;
}

uint64_t results_host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* The machine rank 0 ran on, for baseline fingerprints (CPU model, memory, kernel). */
static json_t *host_json(void)
{
	struct util_host h;
	json_t *o = json_object();

	util_host_describe(&h);
	json_object_set_new(o, "cpu_model", json_string(h.cpu_model));
	json_object_set_new(o, "cpus", json_integer(h.cpus));
	json_object_set_new(o, "memory_bytes", json_integer((json_int_t)h.memory_bytes));
	json_object_set_new(o, "kernel", json_string(h.kernel));
	return o;
}

/* ---- writing files --------------------------------------------------------------------- */

/* Writes one file of the run folder. dir is the fresh temporary folder (safe_tmpdir) that takes
 * the run's name only once everything in it is on disk, so a file needs no temporary name and
 * rename of its own, and no fsync yet: sync_folder() syncs them all at the end, when one journal
 * commit carries them together (17 fsyncs cost 0.1-0.3 s per run on a busy disk). */
/* The name of the file in the results folder that could not be written or synced, for the
 * message that says so (rank 0 writes the folder alone; reset by write_folder). */
static char failed_name[256];

static int note_failed(const char *name, int rc)
{
	if (rc < 0 && !failed_name[0])
		snprintf(failed_name, sizeof(failed_name), "%s", name);
	return rc;
}

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[4096];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return note_failed(name, -errno);
	rc = safe_write_all(fd, text, strlen(text));
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return note_failed(name, rc);
}

/* Every regular file of the folder, then the folder itself, to disk. 0 or -errno. */
static int sync_folder(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return -errno;
	while (rc == 0 && (e = readdir(d))) {
		int fd =
		    openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue; /* "." and ".." open fine; a name gone or refused holds no data */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) < 0)
			rc = note_failed(e->d_name, -errno);
		close(fd);
	}
	closedir(d);
	return rc ? rc : safe_sync_dir(dir);
}

/* Closes an open_memstream (which only then publishes its buffer) and writes it out. */
int results_write_stream(const char *dir, const char *name, char **buf, FILE *mem)
{
	int rc;

	if (fclose(mem) != 0) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	rc = write_text(dir, name, *buf ? *buf : "");
	free(*buf);
	*buf = NULL;
	return rc;
}

void results_timing_reduce(struct run *run, uint64_t reps0)
{
	uint64_t end = run->first_phase_ns ? run->first_phase_ns : reps0;
	double mine[2] = {timer_ns_to_s(end - run->started_ns), timer_ns_to_s(run->mpi_init_ns)},
	       worst[2] = {0, 0};

	MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	run->startup_s = worst[0];
	run->mpi_init_s = worst[1];
}

void results_reduce_time(struct run *run, uint64_t t0)
{
	double mine = timer_ns_to_s(timer_now_ns() - t0), worst = 0;

	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, run->comm);
	run->reduce_s = worst;
}

/* "timing": the slowest rank's start-up and, where the workload measured it, reduction. */
static json_t *timing_json(const struct run *run)
{
	json_t *t = json_object();

	json_object_set_new(t, "startup_seconds", json_real(run->startup_s));
	json_object_set_new(t, "startup_from",
			    json_string(run->started_at_process ? "process" : "run"));
	json_object_set_new(t, "mpi_init_seconds",
			    run->started_at_process ? json_real(run->mpi_init_s) : json_null());
	if (run->reduce_s >= 0)
		json_object_set_new(t, "reduce_seconds", json_real(run->reduce_s));
	return t;
}

void results_summary_head(struct run *run, const struct results_ctx *ctx, json_t *s)
{
	const struct config *cfg = &run->cfg;
	char hash[65], commit[128], source[32];

	json_object_set_new(s, "schema", json_integer(1));
	json_object_set_new(s, "feedbench_version", json_string(FEEDBENCH_VERSION));
	json_object_set_new(s, "workload", json_string(cfg->workload.name));
	json_object_set_new(s, "workload_type", json_string(run->workload->name));
	json_object_set_new(s, "description", json_string(cfg->workload.description));
	json_object_set_new(s, "run_id", json_string(ctx->run_id));
	if (ctx->interrupted)
		json_object_set_new(s, "interrupted", json_true());
	json_object_set_new(s, "start", json_string(ctx->start_iso));
	json_object_set_new(s, "end", json_string(ctx->end_iso));
	json_object_set_new(s, "hostname", json_string(run->hostname));
	json_object_set_new(s, "host", host_json());
	if (util_git_commit(commit, sizeof(commit), source, sizeof(source)) == 0) {
		json_object_set_new(s, "git_commit", json_string(commit));
		json_object_set_new(s, "git_commit_source", json_string(source));
	} else {
		json_object_set_new(s, "git_commit", json_null());
	}
	json_object_set_new(s, "num_ranks", json_integer(run->nranks));
	json_object_set_new(s, "num_nodes", json_integer(run->nnodes));
	json_object_set_new(s, "num_accelerators",
			    json_integer((json_int_t)run->nranks *
					 (json_int_t)run->cfg.train.accelerators_per_rank));
	json_object_set_new(s, "accelerators_per_rank",
			    json_integer((json_int_t)run->cfg.train.accelerators_per_rank));
	json_object_set_new(s, "timing", timing_json(run));
	json_object_set_new(s, "config", config_json(cfg));
	cfg_hash(cfg, hash);
	json_object_set_new(s, "config_hash", json_string(hash));
	cfg_dataset_hash(cfg, hash);
	json_object_set_new(s, "dataset_hash", json_string(hash));
}

/* The plots, then report.md (which embeds the pictures that were drawn), in the temporary
 * folder: a folder that has its final name is complete, pictures included. A missing gnuplot is
 * a warning (the results stand without pictures); a picture or report.md that cannot be written
 * is a failure of the run, and report.md is written first either way. */
static int write_pictures(const char *tmp, bool plots, char *why, size_t len)
{
	int prc = plots ? plot_render(tmp, why, len) : 0, rc;

	if (prc > 0)
		fprintf(stderr, "feedbench: warning: plots skipped: %s\n", why);
	if ((rc = report_write_run(tmp)) < 0) {
		snprintf(why, len, "cannot write report.md: %s", fb_strerror(rc));
		return rc;
	}
	/* No folder fsync here: sync_folder() runs next and syncs every file and the folder
	 * (the pictures' names included) before the rename, in one journal commit. */
	return prc < 0 ? prc : 0;
}

/* A run whose results could not all be written keeps what it measured: the temporary
 * folder becomes "<final>.unfinished" (or -2 ...) when summary.json is in it. Returns whether
 * it was kept; where goes to kept. */
static bool keep_unfinished(const char *tmp, const char *final_dir, bool have_summary, char *kept,
			    size_t len)
{
	char base[4200];

	snprintf(base, sizeof(base), "%s.unfinished", final_dir);
	if (have_summary)
		sync_folder(tmp); /* best effort: what is kept is kept as far as it goes */
	if (have_summary && safe_rename_unique(tmp, base, kept, len) == 0)
		return true;
	util_remove_tree(tmp);
	return false;
}

/* A fresh temporary folder beside final_dir (its parent made when missing). 0 or the failure,
 * reported. */
static int make_tmp(struct run *run, const char *final_dir, char *tmp, size_t len)
{
	char parent[4096];
	int rc;

	snprintf(parent, sizeof(parent), "%s", final_dir);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), ".");
	if ((rc = util_mkdirs(parent, 0755)) < 0 ||
	    (rc = safe_tmpdir(parent, slash ? slash + 1 : final_dir, tmp, len)) < 0)
		return run_fail(run, rc, "cannot create a results folder in '%s': %s", parent,
				strerror(-rc));
	return 0;
}

/* summary.json, what fill writes, config.ini into tmp. *have_summary: summary.json is there.
 * 0 or -errno. */
static int write_files(struct run *run, const char *tmp, json_t *summary,
		       int (*fill)(const char *tmp, void *arg), void *arg, bool *have_summary)
{
	char *text = json_dumps(summary, JSON_INDENT(2) | JSON_REAL_PRECISION(10)), *buf = NULL;
	size_t len = 0;
	FILE *m;
	int rc = text ? write_text(tmp, "summary.json", text) : -ENOMEM;

	free(text);
	*have_summary = rc == 0;
	if (rc == 0 && fill)
		rc = fill(tmp, arg);
	if (rc == 0)
		rc = trace_place(run, tmp);
	if (rc < 0)
		return rc;
	if (!(m = open_memstream(&buf, &len)))
		return -ENOMEM;
	cfg_write_ini(&run->cfg, m);
	return results_write_stream(tmp, "config.ini", &buf, m);
}

/* Prints the run folder's table.md on stdout (nothing when it has none). */
static void print_table(const char *final_dir)
{
	char path[4200], line[4096];
	FILE *t;

	snprintf(path, sizeof(path), "%s/table.md", final_dir);
	t = fopen(path, "r");
	while (t && fgets(line, sizeof(line), t))
		fputs(line, stdout);
	if (t)
		fclose(t);
	fflush(stdout);
}

/* Rank 0. The folder is a fresh temporary one beside the final name (mkdtemp), every file
 * is written and synced into it, and it takes the final name with a rename that never
 * replaces anything: with unique, "-2", "-3" ... when the name is taken (two runs in one
 * second), else the name taken is a failure. final_dir gets the name taken. */
static int write_folder(struct run *run, json_t *summary, char *final_dir, size_t final_len,
			const struct results_ctx *ctx, int (*fill)(const char *tmp, void *arg),
			void *arg, bool quiet)
{
	bool unique = ctx->unique, plots = ctx->plots, stopped = ctx->interrupted;
	char tmp[4096], want[4096], why[1024] = "", kept[4300];
	bool have_summary = false;
	int rc;

	snprintf(want, sizeof(want), "%s", final_dir);
	if ((rc = make_tmp(run, final_dir, tmp, sizeof(tmp))) < 0)
		return rc;
	failed_name[0] = '\0';
	rc = write_files(run, tmp, summary, fill, arg, &have_summary);
	if (rc < 0)
		snprintf(why, sizeof(why), "%s%s%s", failed_name, failed_name[0] ? ": " : "",
			 fb_strerror(rc));
	if (rc == 0)
		rc = write_pictures(tmp, plots, why, sizeof(why));
	if (rc == 0 && !stopped && run->stop && *run->stop) {
		/* Interrupted while writing: the folder is not a finished run. */
		rc = -FB_EINTR;
		snprintf(why, sizeof(why), "interrupted by a signal");
	}
	if (rc == 0 && (rc = sync_folder(tmp)) < 0)
		snprintf(why, sizeof(why), "%s%s%s", failed_name, failed_name[0] ? ": " : "",
			 fb_strerror(rc));
	if (rc == 0 && stopped) {
		/* What a stopped run measured: kept, never under the final name. */
		if (keep_unfinished(tmp, want, true, kept, sizeof(kept)))
			return run_fail(run, -FB_EINTR,
					"the run was stopped by a signal; the epochs it finished "
					"are kept in '%s' (summary.json: \"interrupted\": true)",
					kept);
		return run_fail(run, -FB_EINTR,
				"the run was stopped by a signal and its finished epochs could "
				"not be kept in '%s.unfinished'",
				want);
	}
	if (rc == 0) {
		rc = unique ? safe_rename_unique(tmp, want, final_dir, final_len)
			    : safe_rename_noreplace(tmp, final_dir);
		if (rc < 0)
			snprintf(why, sizeof(why), "%s", fb_strerror(rc));
	}
	if (rc == 0 && !quiet) /* the table is shown once its results are safely in place */
		print_table(final_dir);
	if (rc < 0) {
		snprintf(final_dir, final_len, "%s", want);
		if (keep_unfinished(tmp, final_dir, have_summary, kept, sizeof(kept)))
			return run_fail(run, rc,
					"cannot write results into '%s': %s; what was measured "
					"is kept in '%s' (summary.json), earlier results are "
					"untouched",
					final_dir, why, kept);
		return run_fail(run, rc,
				"cannot write results into '%s': %s (earlier results are "
				"untouched)",
				final_dir, why);
	}
	return 0;
}

/* Collective: the warnings other ranks raised (a rank's own file system, nominal bytes on
 * that rank) join rank 0's list, each once, prefixed with the rank; rank 0 prints the new
 * ones as run_warn() printed its own. */
void results_gather_warnings(struct run *run)
{
	char *text = json_dumps(run->warnings, JSON_COMPACT);
	int len = text ? (int)strlen(text) + 1 : 0, *lens = NULL, *displs = NULL, total = 0;
	char *all = NULL;

	if (run->rank == 0) {
		lens = calloc((size_t)run->nranks, sizeof(int));
		displs = calloc((size_t)run->nranks, sizeof(int));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, run->comm);
	if (run->rank == 0 && lens && displs) {
		for (int q = 0; q < run->nranks; q++) {
			displs[q] = total;
			total += lens[q];
		}
		all = malloc(total ? (size_t)total : 1);
	}
	MPI_Gatherv(text, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, run->comm);
	for (int q = 1; run->rank == 0 && all && q < run->nranks; q++) {
		json_t *list = lens[q] ? json_loads(all + displs[q], 0, NULL) : NULL;
		json_t *w;
		size_t i;

		json_array_foreach(list, i, w)
		{
			const char *msg = json_string_value(w);
			bool seen = false;
			for (size_t j = 0; msg && j < json_array_size(run->warnings); j++) {
				const char *have =
				    json_string_value(json_array_get(run->warnings, j));
				const char *tail = strstr(have, ": ");
				seen |=
				    strcmp(have, msg) == 0 || (strncmp(have, "rank ", 5) == 0 &&
							       tail && strcmp(tail + 2, msg) == 0);
			}
			if (msg && !seen) {
				char line[1100];
				snprintf(line, sizeof(line), "rank %d: %s", q, msg);
				json_array_append_new(run->warnings, json_string(line));
				if (run->verbose >= 0)
					fprintf(stderr, "feedbench: warning: %s\n", line);
			}
		}
		json_decref(list);
	}
	free(all);
	free(lens);
	free(displs);
	free(text);
}

json_t *results_storage_json(struct run *run)
{
	const struct config *cfg = &run->cfg;
	json_t *st = json_object();

	json_object_set_new(st, "backend", json_string(run->storage->name));
	json_object_set_new(st, "fs_type", json_string(run->fs.type));
	json_object_set_new(st, "mount", json_string(run->fs.mount));
	json_object_set_new(st, "direct", json_boolean(cfg->storage.direct));
	json_object_set_new(
	    st, "page_cache",
	    json_string(cfg_choice_name("storage", "page_cache", cfg->storage.page_cache)));
	json_object_update(st, run->info_storage);
	return st;
}

struct text_files {
	const struct results_file *files;
	int n;
};

static int text_fill(const char *tmp, void *arg)
{
	const struct text_files *t = arg;

	for (int i = 0; i < t->n; i++) {
		int rc = t->files[i].text ? write_text(tmp, t->files[i].name, t->files[i].text)
					  : -ENOMEM;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int results_write_folder(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, const struct results_file *files, int nfiles,
			 bool quiet)
{
	struct text_files t = {files, nfiles};
	int rc = 0;

	results_gather_warnings(run);
	if (run->rank == 0) {
		json_object_set_new(summary, "warnings", json_deep_copy(run->warnings));
		snprintf(run->results_dir, sizeof(run->results_dir), "%s", final_dir);
		rc = write_folder(run, summary, run->results_dir, sizeof(run->results_dir), ctx,
				  text_fill, &t, quiet);
	}
	return agree(run, rc);
}

int results_folder_write(struct run *run, json_t *summary, const struct results_ctx *ctx,
			 const char *final_dir, int (*fill)(const char *tmp, void *arg), void *arg,
			 bool quiet)
{
	snprintf(run->results_dir, sizeof(run->results_dir), "%s", final_dir);
	return write_folder(run, summary, run->results_dir, sizeof(run->results_dir), ctx, fill,
			    arg, quiet);
}
