/* The command line of feedbench. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "build_config.h"
#include "compare.h"
#include "config.h"
#include "report.h"
#include "../formats/format.h"
#include "storage/storage.h"
#include "compute/compute.h"

/* The one mutable global: a signal handler has no other way to reach the run. */
volatile sig_atomic_t feedbench_stop;

static void on_signal(int sig)
{
	(void)sig;
	feedbench_stop = 1;
}

void cli_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	       "  plot RESULT_FOLDER            re-render the plots of a run or sweep folder\n"
	       "  compare BASELINE CURRENT [--baseline NAME] [--metric LIST] [--tolerance PCT]\n"
	       "          [--junit FILE] [--markdown FILE] [--json FILE] ...\n"
	       "                   regression gate: exit 0 no regression, 1 regression,\n"
	       "                   3 incomparable (see feedbench compare --help)\n"
	       "  baseline save RESULT... --name NAME [--force] | baseline list\n"
	       "                   keep runs or a sweep as a named baseline for compare\n"
	       "  history FOLDER [--metric M]   every run below FOLDER by time, with a trend plot\n"
	       "  keys             every config key (Markdown)\n"
	       "  list             plug-ins built and not built\n"
	       "  --help, --version\n"
	       "\n"
	       "Run under MPI: mpiexec -n 4 feedbench run configs/quickstart.ini\n"
	       "Exit status: 0 success, 1 the run failed (compare: a regression), 2 usage or\n"
	       "config error, 3 compare: incomparable results.\n");
}

int cli_parse(struct cli *c, int argc, char **argv)
{
	static const struct {
		const char *name;
		enum cli_command cmd;
	} cmds[] = {
	    {"run", CLI_RUN},	      {"generate", CLI_GENERATE}, {"validate", CLI_VALIDATE},
	    {"keys", CLI_KEYS},	      {"list", CLI_LIST},	  {"sweep", CLI_SWEEP},
	    {"plot", CLI_PLOT},	      {"compare", CLI_COMPARE},	  {"baseline", CLI_BASELINE},
	    {"history", CLI_HISTORY}, {"--help", CLI_HELP},	  {"-h", CLI_HELP},
	    {"help", CLI_HELP},	      {"--version", CLI_VERSION}, {"version", CLI_VERSION}};

	memset(c, 0, sizeof(*c));
	if (argc < 2) {
		usage(stderr);
		return -FB_EUSAGE;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			c->cmd = cmds[i].cmd;
	if (c->cmd == CLI_NONE) {
		fprintf(stderr, "feedbench: unknown command '%s' (see feedbench --help)\n",
			argv[1]);
		return -FB_EUSAGE;
	}
	c->argc = argc - 1;
	c->argv = argv + 1;
	if (c->cmd != CLI_RUN && c->cmd != CLI_GENERATE && c->cmd != CLI_VALIDATE)
		return 0;
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

bool cli_needs_mpi(const struct cli *c)
{
	return c->cmd == CLI_RUN || c->cmd == CLI_GENERATE || c->cmd == CLI_VALIDATE ||
	       c->cmd == CLI_SWEEP;
}

static const char *caps_modes(unsigned caps)
{
	return (caps & FORMAT_CAP_SHARED) ? "per_rank, shared" : "per_rank";
}

static void list_plugins(void)
{
	printf("formats:\n");
	for (size_t i = 0; format_registry[i]; i++) {
		const struct format_ops *f = format_registry[i];
		printf("  %-9s built    access: %-16s%s%s%s%s\n", f->name, caps_modes(f->caps),
		       (f->caps & FORMAT_CAP_DIRECT) ? "  direct" : "",
		       (f->caps & (FORMAT_CAP_MPIIO | FORMAT_CAP_OWNS_IO)) ? "  mpiio" : "",
		       (f->caps & FORMAT_CAP_PARALLEL_WRITE) ? "  parallel-write" : "",
		       f->probe ? "  existing-files" : "");
	}
	printf("storage back-ends:\n");
	for (size_t i = 0; storage_registry[i]; i++) {
		const struct storage_ops *s = storage_registry[i];
		printf("  %-9s built   %s%s\n", s->name,
		       (s->caps & STORAGE_CAP_DIRECT) ? "  direct" : "",
		       (s->caps & STORAGE_CAP_COLLECTIVE) ? "  collective" : "");
	}
	printf("accelerators:\n");
	for (size_t i = 0; compute_registry[i].name; i++)
		printf("  %-9s %s\n", compute_registry[i].name,
		       compute_registry[i].ops ? "built" : "not built");
	for (size_t i = 0; compute_registry[i].name; i++)
		if (!compute_registry[i].ops)
			printf("            (%s: %s)\n", compute_registry[i].name,
			       compute_registry[i].not_built);
}

static int cli_validate(struct cli *c)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct fb_errbuf err;
	int rank, rc;

	fb_errbuf_init(&err);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	rc = runner_load_config(cfg, &c->opts, MPI_COMM_WORLD, &err);
	if (rank == 0) {
		if (rc < 0)
			fprintf(stderr, "feedbench: error: %s\n", err.msg);
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
		usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("feedbench %s\n", FEEDBENCH_VERSION);
		return 0;
	case CLI_KEYS:
		cfg_write_keys_markdown(stdout);
		return 0;
	case CLI_LIST:
		list_plugins();
		return 0;
	case CLI_VALIDATE:
		return cli_validate(c);
	case CLI_SWEEP:
		return sweep_main(c->argc, c->argv, &world);
	case CLI_PLOT:
		return plot_main(c->argc, c->argv);
	case CLI_COMPARE:
		return compare_main(c->argc, c->argv);
	case CLI_BASELINE:
		return baseline_main(c->argc, c->argv);
	case CLI_HISTORY:
		return history_main(c->argc, c->argv);
	case CLI_RUN:
		if (config_has_sweep(c))
			return sweep_main(c->argc, c->argv, &world);
		/* fall through */
	case CLI_GENERATE:
		return fb_exit_status(runner_run(&c->opts, MPI_COMM_WORLD, dir, sizeof(dir)));
	case CLI_NONE:
		break;
	}
	return 2;
}
