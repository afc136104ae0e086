/* Shared helpers of the libFuzzer targets (see fuzz_common.h). */
#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sanitizer/lsan_interface.h>

#include "run.h"
#include "../../formats/format.h"
#include "storage/storage.h"
#include "../formats/format.h"
#include "../workloads/dataset.h"

#define FUZZ_MAX_READS	256	   /* samples read per input at most */
#define FUZZ_MAX_SAMPLE (1u << 24) /* larger claims are left to the probe alone */
#define FUZZ_MAX_ARGS	32

static char fuzz_root[PATH_MAX];

static void fuzz_die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz harness: %s '%s': %s\n", what, path, strerror(errno));
	abort();
}

static int fuzz_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (ftw->level == 0)
		return 0; /* the root stays */
	if (flag == FTW_DP)
		chmod(path, 0700);
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

void fuzz_clean(void)
{
	if (fuzz_root[0])
		nftw(fuzz_root, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void fuzz_remove_root(void)
{
	fuzz_clean();
	rmdir(fuzz_root);
}

const char *fuzz_dir(void)
{
	const char *base;

	if (fuzz_root[0])
		return fuzz_root;
	base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/feedbench-fuzz.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(fuzz_root))
		fuzz_die("cannot create", fuzz_root);
	atexit(fuzz_remove_root);
	return fuzz_root;
}

const char *fuzz_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s%s%s%s%s", fuzz_dir(), *dir ? "/" : "", dir, *name ? "/" : "", name);
	return buf;
}

void fuzz_write(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	int fd;

	fuzz_path(path, sizeof(path), dir, "");
	for (char *p = path + strlen(fuzz_dir());; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			fuzz_die("cannot create", path);
		*p = c;
		if (!c)
			break;
	}
	fuzz_path(path, sizeof(path), dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		fuzz_die("cannot create", path);
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, (const char *)data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fuzz_die("cannot write", path);
		done += (size_t)n;
	}
	close(fd);
}

void fuzz_copy(const char *file, const char *dir)
{
	const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char path[PATH_MAX];
	char *buf;
	long len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FUZZ_SOURCE_DIR, file);
	f = fopen(path, "rb");
	if (!f)
		fuzz_die("cannot open", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
		fuzz_die("cannot read", path);
	fclose(f);
	fuzz_write(dir, name, buf, (size_t)len);
	free(buf);
}

void fuzz_mpi_init(void)
{
	int inited = 0, provided;

	MPI_Initialized(&inited);
	if (inited)
		return;
	/* Open MPI replaces the handlers of SIGSEGV, SIGBUS, SIGFPE and SIGABRT with its own,
	 * which print to the closed stderr and exit: the sanitizers' and libFuzzer's must stay,
	 * or a crash leaves neither a report nor the input that caused it. */
	setenv("OMPI_MCA_opal_signal", "", 1);
	/* Open MPI keeps what it allocates at start-up until MPI_Finalize, some of it where no
	 * pointer reaches: not ours to report, and the harness never finalizes. */
	__lsan_disable();
	MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
	__lsan_enable();
}

/* FUZZ_VERBOSE=1 says what each input reached (to check that seeds are read whole). */
static void fuzz_say(struct run *run, const char *what, uint64_t n)
{
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s %llu (%s)\n", what, (unsigned long long)n, run->err.msg);
}

/* Every sample of one file, through open/read_sample/close as a reader thread does. */
static void fuzz_read_file(struct run *run, struct ds_file *file)
{
	uint64_t i = 0;

	size_t cap = (size_t)((run->ds.max_sample + 4095) & ~4095ull);
	struct io io = {.run = run};
	struct freader *r = NULL;
	void *buf;

	if (run->ds.max_sample == 0 || run->ds.max_sample > FUZZ_MAX_SAMPLE)
		return;
	if (run->format->index && run->format->index(run, file) < 0)
		return;
	buf = malloc(cap);
	if (buf && run->format->open(&r, run, file, &io) == 0) {
		for (; i < file->nsamples && i < FUZZ_MAX_READS; i++) {
			size_t len = 0;
			if (run->format->read_sample(r, i, buf, cap, &len) < 0)
				break;
			FUZZ_EXPECT(len <= cap,
				    "sample %llu: the reader claimed %zu bytes in a "
				    "%zu-byte buffer",
				    (unsigned long long)i, len, cap);
		}
		run->format->close(r);
	}
	fuzz_say(run, "samples read:", i);
	free(buf);
}

void fuzz_read_dataset(const char *format, const char *dir)
{
	static struct run run;
	char path[PATH_MAX];
	int rc;

	fuzz_mpi_init();
	memset(&run, 0, sizeof(run));
	cfg_defaults(&run.cfg);
	fb_errbuf_init(&run.err);
	snprintf(run.cfg.dataset.data_dir, sizeof(run.cfg.dataset.data_dir), "%s",
		 fuzz_path(path, sizeof(path), dir, ""));
	snprintf(run.cfg.dataset.format, sizeof(run.cfg.dataset.format), "%s", format);
	run.cfg.dataset.generate = GENERATE_NEVER;
	run.cfg.dataset.verify = false;
	run.comm = MPI_COMM_SELF;
	run.notify_comm = MPI_COMM_SELF;
	run.node_comm = MPI_COMM_SELF;
	run.nranks = run.local_size = run.nnodes = 1;
	run.format = format_find(format);
	run.storage = storage_find("posix");
	run.info_storage = json_object();
	run.info_format = json_object();
	run.info_accel = json_object();
	run.warnings = json_array();
	run.verbose = -1;
	if (!run.format || !run.storage)
		abort();
	rc = dataset_discover(&run, &run.ds);
	fuzz_say(&run, "samples found:", run.ds.nsamples);
	if (rc == 0)
		for (uint32_t k = 0; k < run.ds.nheld; k++)
			fuzz_read_file(&run, &run.ds.files[k]);
	dataset_free(&run, &run.ds);
	json_decref(run.info_storage);
	json_decref(run.info_format);
	json_decref(run.info_accel);
	json_decref(run.warnings);
	pthread_mutex_destroy(&run.err.lock);
}

int fuzz_main(int (*fn)(int, char **), ...)
{
	char *argv[FUZZ_MAX_ARGS + 1];
	const char *a;
	int argc = 0, rc;
	va_list ap;

	va_start(ap, fn);
	while ((a = va_arg(ap, const char *)) && argc < FUZZ_MAX_ARGS)
		argv[argc++] = strdup(a);
	va_end(ap);
	argv[argc] = NULL;
	rc = fn(argc, argv);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return rc;
}
