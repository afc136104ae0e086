/* Helpers of tests/perf/limits.sh (a benchmark, not a test):
 *
 *   pread_loop pread BS PASSES FILE...   reads every file front to back in BS-byte preads,
 *                                        PASSES times: the floor for any reader of the same
 *                                        files. Prints "<bytes> <reads> <seconds> <cpu s>".
 *   pread_loop time OUT CMD [ARG...]     runs CMD and writes "<wall s> <user s> <sys s>
 *                                        <maxrss KiB>" of it (and its children) to OUT, so a
 *                                        contender's CPU is measured the same way for all.
 *
 * CLOCK_MONOTONIC for wall time; getrusage for CPU.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

static int loop(size_t bs, int passes, int nfiles, char **files)
{
	char *buf = aligned_alloc(4096, (bs + 4095) / 4096 * 4096);
	unsigned long long bytes = 0, reads = 0;
	struct rusage ru;
	double t0 = now();

	if (!buf)
		return 1;
	for (int p = 0; p < passes; p++) {
		for (int i = 0; i < nfiles; i++) {
			int fd = open(files[i], O_RDONLY);
			ssize_t n;
			off_t off = 0;

			if (fd < 0) {
				perror(files[i]);
				return 1;
			}
			while ((n = pread(fd, buf, bs, off)) > 0) {
				off += n;
				bytes += (unsigned long long)n;
				reads++;
			}
			if (n < 0) {
				perror(files[i]);
				return 1;
			}
			close(fd);
		}
	}
	double secs = now() - t0;
	getrusage(RUSAGE_SELF, &ru);
	printf("%llu %llu %.9f %.6f\n", bytes, reads, secs, tv(ru.ru_utime) + tv(ru.ru_stime));
	free(buf);
	return 0;
}

static int timed(const char *out, char **argv)
{
	double t0 = now();
	pid_t pid = fork();
	int status = 0;
	struct rusage ru;
	FILE *f;

	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 1;
	}
	f = fopen(out, "w");
	if (!f) {
		perror(out);
		return 1;
	}
	fprintf(f, "%.6f %.6f %.6f %ld\n", now() - t0, tv(ru.ru_utime), tv(ru.ru_stime),
		ru.ru_maxrss);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "pread") == 0)
		return loop(strtoul(argv[2], NULL, 10), atoi(argv[3]), argc - 4, argv + 4);
	if (argc >= 4 && strcmp(argv[1], "time") == 0)
		return timed(argv[2], argv + 3);
	fprintf(stderr, "usage: pread_loop pread BS PASSES FILE... | time OUT CMD [ARG...]\n");
	return 2;
}
