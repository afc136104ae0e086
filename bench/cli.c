/* The command line of feedbench. */
#include "cli.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "build_config.h"
#include "compare.h"
#include "config.h"
#include "mlperf.h"
#include "preflight.h"
#include "report.h"
#include "stop.h"
#include "sweep.h"
#include "../formats/format.h"
#include "storage/storage.h"
#include "compute/compute.h"
#include "../workloads/workload.h"

int cli_exit_status(int status)
{
	int sig = __atomic_load_n(&feedbench_stop, __ATOMIC_RELAXED), rank = 0;

	if (!sig)
		return status;
	/* A signal that came as the command was finishing: it still ends as interrupted
	 * (a run folder already under its final name is complete). */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (status == 0 && rank == 0)
		fprintf(stderr, "feedbench: interrupted by signal %d as the command finished\n",
			sig);
	return 128 + sig;
}

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: feedbench COMMAND [ARGS]\n"
	       "\n"
	       "Emulates deep-learning training reads over MPI and measures what the storage "
	       "delivers.\n"
	       "\n"
	       "commands:\n"
	       "  run CONFIG [--set section.key=value]... [--output DIR] [--quiet]\n"
	       "                   generate the dataset when needed, train, write a run folder\n"
	       "  generate CONFIG [--set ...]   generate (or check) the dataset only\n"
	       "  validate CONFIG [--set ...]   check the config and print the effective config\n"
	       "  sweep CONFIG [--set ...] [--output DIR] [--resume DIR] [--dry-run]\n"
	       "                   run every point of the [sweep] section\n"
	       "  search CONFIG [--set ...] [--output DIR] [--quiet]\n"
	       "                   largest number of accelerators (ranks) keeping AU >= threshold\n"
	       "  plot RESULT_FOLDER            re-render the plots of a run or sweep folder\n"
	       "  compare BASELINE CURRENT [--baseline NAME] [--metric LIST] [--tolerance PCT]\n"
	       "          [--junit FILE] [--markdown FILE] [--json FILE] ...\n"
	       "                   regression gate: exit 0 no regression, 1 regression,\n"
	       "                   3 incomparable, 4 inconclusive (see feedbench compare --help)\n"
	       "  baseline save RESULT... --name NAME [--force] | baseline list\n"
	       "                   keep runs or a sweep as a named baseline for compare\n"
	       "  history FOLDER [--metric M] [--changes]\n"
	       "                   every run below FOLDER by time, with a trend plot; --changes:\n"
	       "                   change points per metric (E-divisive means)\n"
	       "  import-dlio FILE.yaml [-o OUT.ini]\n"
	       "                   a DLIO workload YAML as a feedbench config (docs/dlio.md)\n"
	       "  import-trace TRACE... [-o OUT.ini]\n"
	       "                   a config reproducing a traced job's I/O (docs/trace.md)\n"
	       "  mlperf datasize|run|check ...\n"
	       "                   size, run (warm-up + 5) and check an MLPerf Storage v3.0\n"
	       "                   training submission (docs/mlperf.md)\n"
	       "  keys             every config key (Markdown)\n"
	       "  list             plug-ins built and not built\n"
	       "  help [COMMAND], COMMAND --help   a command's own help\n"
	       "  --help, --version\n"
	       "\n"
	       "Run under MPI: mpiexec -n 2 feedbench run configs/quickstart.ini\n"
	       "Exit status: 0 success, 1 the run failed (compare: a regression), 2 usage or\n"
	       "config error, 3 compare, baseline, history: incomparable results, 4 compare:\n"
	       "inconclusive (--inconclusive pass|fail), 130/143 interrupted (SIGINT/TERM).\n");
}

/* The commands; `help` is each one's `feedbench CMD --help` (NULL: the command prints its own). */
static const struct cli_cmd {
	const char *name;
	enum cli_command cmd;
	const char *help;
} cli_cmds[] = {
    {"run", CLI_RUN,
     "usage: feedbench run CONFIG [--set section.key=value]... [--output DIR] [--quiet]\n"
     "                    [--strict] [--dry-run [--ranks-per-host N]]\n"
     "\n"
     "Generates the dataset when needed (see [dataset] generate), trains for the configured\n"
     "epochs and repetitions, and writes a run folder (summary.json, CSVs, report, plots)\n"
     "under --output DIR or [output] dir. A config with a [sweep] section runs as a sweep.\n"
     "\n"
     "  --set, -s section.key=value   override one key (repeatable; see feedbench keys)\n"
     "  --output, -o DIR              parent folder of the run folder\n"
     "  --quiet, -q                   no table on stdout (the files are written)\n"
     "  --strict                      MLPerf Storage rules are errors, not warnings: a\n"
     "                                dataset under 5 x RAM without direct I/O or eviction\n"
     "                                (exit 2 before reading), too few steps per epoch for a\n"
     "                                steady state, an AU threshold not the workload's own\n"
     "                                (exit 1 after the run; the results are written)\n"
     "  --dry-run, -n                 make validate's checks, then print the plan (checkpoint:\n"
     "                                the whole geometry's bytes and files per rank and per\n"
     "                                host, memory per rank, totals); touches no file\n"
     "  --ranks-per-host N            the plan's hosts: N consecutive ranks each (default 8)\n"
     "\n"
     "Run under MPI, one rank per emulated accelerator:\n"
     "  mpiexec -n 2 feedbench run configs/quickstart.ini\n"
     "Exit status: 0 success, 1 the run failed, 2 usage or config error, 130/143\n"
     "interrupted.\n"},
    {"generate", CLI_GENERATE,
     "usage: feedbench generate CONFIG [--set section.key=value]...\n"
     "\n"
     "Writes the dataset the config describes (or checks the one that is there against its\n"
     "manifest) and stops before training. Runs under MPI: ranks write files in parallel.\n"
     "Exit status: 0 success, 1 the generation failed, 2 usage or config error.\n"},
    {"validate", CLI_VALIDATE,
     "usage: feedbench validate CONFIG [--set section.key=value]...\n"
     "\n"
     "Checks the config (unknown keys, units, ranges, impossible combinations for the rank\n"
     "count it runs with, the steps left to measure, every point of a [sweep]) and the data\n"
     "folder (a dataset to read under generate = never, a folder the run can write), makes\n"
     "every check the run makes before it starts, and prints the effective config, every key,\n"
     "as INI. Touches no file.\n"
     "Exit status: 0 valid, 2 invalid (the message names the file and line).\n"},
    {"sweep", CLI_SWEEP, NULL},
    {"search", CLI_SEARCH,
     "usage: feedbench search CONFIG [--set section.key=value]... [--output DIR] [--quiet]\n"
     "\n"
     "How many accelerators can this storage feed? Launched with the largest rank count P,\n"
     "it runs the training workload on the first n ranks (the others wait) and finds the\n"
     "largest n whose mean AU over [output] repetitions is >= [train] au_threshold: n = P\n"
     "first, then bisection over [1, P] (AU is assumed to fall as n grows). One emulated\n"
     "accelerator per rank. Writes <output>/<name>-search-<stamp>/ with one run folder per\n"
     "trial, search_results.json and report.md (AU and bandwidth per tried count, the\n"
     "answer and its noise margin: AU stddev / distance to the threshold).\n"
     "\n"
     "  mpiexec -n 8 feedbench search configs/workloads/unet3d.ini\n"
     "Exit status: 0 success (also when the answer is 0), 1 a trial failed, 2 usage or\n"
     "config error.\n"},
    {"plot", CLI_PLOT, NULL},
    {"compare", CLI_COMPARE, NULL},
    {"baseline", CLI_BASELINE, NULL},
    {"history", CLI_HISTORY, NULL},
    {"import-dlio", CLI_IMPORT_DLIO, NULL},
    {"import-trace", CLI_IMPORT_TRACE, NULL},
    {"mlperf", CLI_MLPERF, NULL},
    {"keys", CLI_KEYS,
     "usage: feedbench keys\n"
     "\n"
     "Prints every config key as Markdown: section, type, default, range or choices, help.\n"},
    {"list", CLI_LIST,
     "usage: feedbench list\n"
     "\n"
     "Prints the formats, storage back-ends and accelerators built into this binary, and why a\n"
     "plug-in was not built.\n"},
    {"help", CLI_HELP,
     "usage: feedbench help [COMMAND]\n"
     "\n"
     "Prints the list of commands, or one command's help (same as feedbench COMMAND --help).\n"},
    {"version", CLI_VERSION, "usage: feedbench version\n\nPrints the version of feedbench.\n"},
    {"--help", CLI_HELP, NULL},
    {"-h", CLI_HELP, NULL},
    {"--version", CLI_VERSION, NULL},
};

#define CLI_NCMDS (sizeof(cli_cmds) / sizeof(cli_cmds[0]))

static const struct cli_cmd *cli_find(const char *name)
{
	for (size_t i = 0; i < CLI_NCMDS; i++)
		if (strcmp(name, cli_cmds[i].name) == 0)
			return &cli_cmds[i];
	return NULL;
}

/* The command closest to a mistyped one ("rnu" -> "run"), or NULL when none is close. */
static const char *cli_suggest(const char *name)
{
	const char *best = NULL;
	size_t best_d = 99, len = strlen(name);

	for (size_t i = 0; i < CLI_NCMDS; i++) {
		size_t d = cfg_edit_distance(name, cli_cmds[i].name);

		if (cli_cmds[i].name[0] != '-' && d < best_d) {
			best_d = d;
			best = cli_cmds[i].name;
		}
	}
	/* A prefix of a command ("gen", "val") is a near miss too. */
	for (size_t i = 0; best_d > 0 && i < CLI_NCMDS; i++)
		if (len >= 2 && strncmp(cli_cmds[i].name, name, len) == 0)
			return cli_cmds[i].name;
	return best_d <= (len <= 2 ? 1u : 2u) ? best : NULL;
}

static bool is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static bool is_dry_run_opt(const char *a)
{
	return strcmp(a, "--dry-run") == 0 || strcmp(a, "-n") == 0 ||
	       strcmp(a, "--ranks-per-host") == 0;
}

/* run's --dry-run and --ranks-per-host N (argv[*i]). */
static int cli_dry_run_opt(struct cli *c, int argc, char **argv, int *i)
{
	char *end;
	long v;

	if (strcmp(argv[*i], "--ranks-per-host") != 0) {
		c->opts.dry_run = true;
		return 0;
	}
	if (*i + 1 >= argc) {
		fprintf(stderr, "feedbench: --ranks-per-host needs a count\n");
		return -FB_EUSAGE;
	}
	v = strtol(argv[++*i], &end, 10);
	if (end == argv[*i] || *end || v < 1 || v > 1048576) {
		fprintf(stderr, "feedbench: --ranks-per-host '%s' is not a count of 1 or more\n",
			argv[*i]);
		return -FB_EUSAGE;
	}
	c->opts.ranks_per_host = (int)v;
	return 0;
}

/* The options of run, generate, validate and search (argv[2...]). */
static int cli_parse_opts(struct cli *c, int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "--set") == 0 || strcmp(a, "-s") == 0) && i + 1 < argc) {
			if (c->opts.nsets == RUNNER_MAX_SETS) {
				fprintf(stderr, "feedbench: too many --set options\n");
				return -FB_EUSAGE;
			}
			c->opts.sets[c->opts.nsets++] = argv[++i];
		} else if (strncmp(a, "--set=", 6) == 0) {
			if (c->opts.nsets == RUNNER_MAX_SETS)
				return -FB_EUSAGE;
			c->opts.sets[c->opts.nsets++] = a + 6;
		} else if ((strcmp(a, "--output") == 0 || strcmp(a, "-o") == 0) && i + 1 < argc) {
			c->opts.output_dir = argv[++i];
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			c->opts.quiet = true;
		} else if (strcmp(a, "--strict") == 0) {
			c->opts.strict = true;
		} else if (c->cmd == CLI_RUN && is_dry_run_opt(a)) {
			if (cli_dry_run_opt(c, argc, argv, &i) < 0)
				return -FB_EUSAGE;
		} else if (a[0] == '-') {
			fprintf(stderr,
				"feedbench: unknown or incomplete option '%s' (see feedbench "
				"--help)\n",
				a);
			return -FB_EUSAGE;
		} else if (!c->opts.config_path) {
			c->opts.config_path = a;
		} else {
			fprintf(stderr, "feedbench: unexpected argument '%s'\n", a);
			return -FB_EUSAGE;
		}
	}
	if (!c->opts.config_path) {
		fprintf(stderr, "feedbench: %s needs a CONFIG file (see feedbench --help)\n",
			argv[1]);
		return -FB_EUSAGE;
	}
	c->opts.generate_only = c->cmd == CLI_GENERATE;
	return 0;
}

int cli_parse(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *found;

	memset(c, 0, sizeof(*c));
	if (argc < 2) {
		usage(stderr);
		return -FB_EUSAGE;
	}
	found = cli_find(argv[1]);
	if (!found) {
		const char *s = cli_suggest(argv[1]);

		if (s)
			fprintf(stderr,
				"feedbench: unknown command '%s' (did you mean '%s'? see feedbench "
				"--help)\n",
				argv[1], s);
		else
			fprintf(stderr, "feedbench: unknown command '%s' (see feedbench --help)\n",
				argv[1]);
		return -FB_EUSAGE;
	}
	c->cmd = found->cmd;
	/* `feedbench CMD --help` and `feedbench help CMD`: the command's help, exit 0. Commands
	 * with their own parser (sweep, compare, ...) print theirs. */
	if (found->help) {
		for (int i = 2; i < argc; i++)
			if (is_help(argv[i])) {
				c->cmd = CLI_HELP;
				c->help = found->help;
				return 0;
			}
	}
	if (c->cmd == CLI_HELP && argc > 2) {
		const struct cli_cmd *topic = cli_find(argv[2]);

		if (!topic || topic->name[0] == '-') {
			fprintf(stderr,
				"feedbench: help: unknown command '%s' (see feedbench --help)\n",
				argv[2]);
			return -FB_EUSAGE;
		}
		if (!topic->help) { /* its own parser prints its help */
			c->cmd = topic->cmd;
			c->argc = 2;
			c->argv = argv + 1;
			argv[2] = "--help";
			return 0;
		}
		c->help = topic->help;
		return 0;
	}
	c->argc = argc - 1;
	c->argv = argv + 1;
	if (c->cmd != CLI_RUN && c->cmd != CLI_GENERATE && c->cmd != CLI_VALIDATE &&
	    c->cmd != CLI_SEARCH)
		return 0;
	return cli_parse_opts(c, argc, argv);
}

bool cli_launched(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && atoi(v) > 1)
			return true;
	}
	return false;
}

/* "run a.ini --set x=1", shortened to fit. */
static void cli_join(int argc, char **argv, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 1; i < argc && used < len; i++) {
		int n = snprintf(out + used, len - used, "%s%s", i > 1 ? " " : "", argv[i]);
		used += n > 0 ? (size_t)n : 0;
	}
}

int cli_check_same_command(int argc, char **argv)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a over the version and every argument */
	uint64_t mine[2], all[2], h0;
	int rank, size, differs, first;
	char cmd[512], other[512];

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size == 1)
		return 0;
	for (const char *p = FEEDBENCH_VERSION;; p++) {
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
		if (!*p)
			break;
	}
	for (int i = 1; i < argc; i++)
		for (const char *p = argv[i];; p++) {
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
			if (!*p)
				break;
		}
	/* One reduction tells whether all agree: max of h and max of ~h (= ~min of h). */
	mine[0] = h;
	mine[1] = ~h;
	MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (all[0] == h && all[1] == ~h)
		return 0;
	h0 = h;
	MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	differs = h != h0 ? rank : size;
	MPI_Allreduce(&differs, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	cli_join(argc, argv, cmd, sizeof(cmd));
	if (rank == first)
		MPI_Send(cmd, (int)sizeof(cmd), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Recv(other, (int)sizeof(other), MPI_CHAR, first, 0, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		other[sizeof(other) - 1] = '\0';
		fprintf(stderr,
			"feedbench: error: the ranks were started with different commands (an "
			"MPMD launch, or a config or --set that differs per rank): rank 0 runs "
			"'feedbench %s', rank %d runs 'feedbench %s'; every rank must run the same "
			"command\n",
			cmd, first, other);
		fflush(stderr);
	}
	return fb_exit_status(-FB_EUSAGE);
}

bool cli_needs_mpi(const struct cli *c)
{
	return c->cmd == CLI_RUN || c->cmd == CLI_GENERATE || c->cmd == CLI_VALIDATE ||
	       c->cmd == CLI_SWEEP || c->cmd == CLI_SEARCH ||
	       (c->cmd == CLI_MLPERF && mlperf_needs_mpi(c->argc, c->argv));
}

static const char *caps_modes(unsigned caps)
{
	return (caps & FORMAT_CAP_SHARED) ? "per_rank, shared" : "per_rank";
}

/* The width of the name column of `feedbench list`: the longest plug-in name of any kind, so
 * every section's columns line up. */
static int list_name_width(void)
{
	size_t w = 0;

	for (size_t i = 0; workload_registry[i]; i++)
		w = strlen(workload_registry[i]->name) > w ? strlen(workload_registry[i]->name) : w;
	for (size_t i = 0; format_registry[i]; i++)
		w = strlen(format_registry[i]->name) > w ? strlen(format_registry[i]->name) : w;
	for (size_t i = 0; storage_registry[i]; i++)
		w = strlen(storage_registry[i]->name) > w ? strlen(storage_registry[i]->name) : w;
	for (size_t i = 0; compute_registry[i].name; i++)
		w = strlen(compute_registry[i].name) > w ? strlen(compute_registry[i].name) : w;
	return (int)w;
}

/* One row: name, status ("built" or "not built"), then the details, in aligned columns. */
static void list_row(int width, const char *name, const char *status, const char *detail)
{
	if (detail[0])
		printf("  %-*s  %-9s %s\n", width, name, status, detail);
	else
		printf("  %-*s  %s\n", width, name, status);
}

static void list_plugins(void)
{
	int w = list_name_width();
	char d[256];

	printf("workloads ([workload] type):\n");
	for (size_t i = 0; workload_registry[i]; i++)
		list_row(w, workload_registry[i]->name, "built", workload_registry[i]->help);
	printf("formats:\n");
	for (size_t i = 0; format_registry[i]; i++) {
		const struct format_ops *f = format_registry[i];
		if (f->not_built) {
			snprintf(d, sizeof(d), "(%s)", f->not_built);
			list_row(w, f->name, "not built", d);
			continue;
		}
		snprintf(d, sizeof(d), "access: %-16s%s%s%s%s", caps_modes(f->caps),
			 (f->caps & FORMAT_CAP_DIRECT) ? "  direct" : "",
			 (f->caps & (FORMAT_CAP_MPIIO | FORMAT_CAP_OWNS_IO)) ? "  mpiio" : "",
			 (f->caps & FORMAT_CAP_PARALLEL_WRITE) ? "  parallel-write" : "",
			 f->probe ? "  existing-files" : "");
		list_row(w, f->name, "built", d);
	}
	printf("storage back-ends:\n");
	for (size_t i = 0; storage_registry[i]; i++) {
		const struct storage_ops *s = storage_registry[i];
		if (s->not_built) {
			snprintf(d, sizeof(d), "(%s)", s->not_built);
			list_row(w, s->name, "not built", d);
			continue;
		}
		snprintf(d, sizeof(d), "%s%s%s", (s->caps & STORAGE_CAP_DIRECT) ? "direct" : "",
			 (s->caps & STORAGE_CAP_DIRECT) && (s->caps & STORAGE_CAP_COLLECTIVE) ? "  "
											      : "",
			 (s->caps & STORAGE_CAP_COLLECTIVE) ? "collective" : "");
		list_row(w, s->name, "built", d);
	}
	printf("accelerators:\n");
	for (size_t i = 0; compute_registry[i].name; i++) {
		const struct compute_entry *c = &compute_registry[i];
		if (c->ops)
			list_row(w, c->name, "built", "");
		else {
			snprintf(d, sizeof(d), "(%s)", c->not_built);
			list_row(w, c->name, "not built", d);
		}
	}
	mlperf_presets_print(stdout, false);
}

static int validate_preflight(const struct config *cfg, struct fb_errbuf *err)
{
	struct sweep_plan plan;
	int nranks, rc;

	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (cfg->sweep.nkeys == 0)
		return run_preflight(cfg, nranks, NULL, err);
	rc = sweep_plan_build(&plan, cfg, nranks, true, err);
	if (rc == 0)
		sweep_plan_free(&plan);
	return rc;
}

/* Rank 0, run --dry-run after the checks: the workload's plan. */
static void dry_run_plan(const struct config *cfg, const struct runner_opts *o)
{
	const struct workload_ops *w = workload_of(cfg);
	int nranks;

	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (w && w->plan)
		w->plan(cfg, nranks, o->ranks_per_host ? o->ranks_per_host : 8, stdout);
	else
		printf("# feedbench run --dry-run: %s: the config is valid; the %s workload has no "
		       "plan to print\n",
		       cfg->workload.name, w ? w->name : "?");
}

/* validate, and run --dry-run (the same checks, then the plan instead of the config). */
static int cli_validate(struct cli *c)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct fb_errbuf err;
	int rank, rc;

	fb_errbuf_init(&err);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	rc = runner_load_config(cfg, &c->opts, MPI_COMM_WORLD, &err);
	/* The checks the run makes before it touches a file (every point of a sweep): rank 0
	 * looks at the data folder, read-only, and every rank exits with its answer. */
	if (rc == 0 && rank == 0)
		rc = validate_preflight(cfg, &err);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		if (rc < 0)
			fprintf(stderr, "feedbench: error: %s\n", err.msg);
		else if (c->opts.dry_run)
			dry_run_plan(cfg, &c->opts);
		else
			cfg_write_ini(cfg, stdout);
	}
	free(cfg);
	return fb_exit_status(rc);
}

static int config_has_sweep(struct cli *c)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct fb_errbuf err;
	int rc, has;

	fb_errbuf_init(&err);
	rc = runner_load_config(cfg, &c->opts, MPI_COMM_WORLD, &err);
	has = rc == 0 && cfg->sweep.nkeys > 0;
	free(cfg);
	return has;
}

int cli_dispatch(struct cli *c)
{
	char dir[4096] = "";
	MPI_Comm world = MPI_COMM_WORLD;

	switch (c->cmd) {
	case CLI_HELP:
		if (c->help)
			fputs(c->help, stdout);
		else
			usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("feedbench %s\n", FEEDBENCH_VERSION);
		return 0;
	case CLI_KEYS:
		cfg_write_keys_markdown(stdout);
		mlperf_presets_print(stdout, true);
		return 0;
	case CLI_LIST:
		list_plugins();
		return 0;
	case CLI_VALIDATE:
		return cli_validate(c);
	case CLI_SWEEP:
		return sweep_main(c->argc, c->argv, &world);
	case CLI_SEARCH:
		return search_main(c);
	case CLI_PLOT:
		return plot_main(c->argc, c->argv);
	case CLI_COMPARE:
		return compare_main(c->argc, c->argv);
	case CLI_BASELINE:
		return baseline_main(c->argc, c->argv);
	case CLI_HISTORY:
		return history_main(c->argc, c->argv);
	case CLI_IMPORT_DLIO:
		return import_dlio_main(c->argc, c->argv);
	case CLI_IMPORT_TRACE:
		return import_trace_main(c->argc, c->argv);
	case CLI_MLPERF:
		return mlperf_main(c->argc, c->argv);
	case CLI_RUN:
		if (config_has_sweep(c))
			return sweep_main(c->argc, c->argv, &world);
		if (c->opts.dry_run)
			return cli_validate(c);
		/* fall through */
	case CLI_GENERATE:
		return fb_exit_status(runner_run(&c->opts, MPI_COMM_WORLD, dir, sizeof(dir)));
	case CLI_NONE:
		break;
	}
	return 2;
}
