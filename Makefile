# Thin wrapper: the two commands of the README, and the install step they share.
#   make quickstart   install missing packages, build, run the quickstart on two local ranks
#   make test         install missing packages, build (warnings are errors), run every test,
#                     then the unit, MPI, fault and hostile-input tests again under
#                     address+undefined sanitizers
#   make deps         install missing Debian packages only (the lab's included)
#   make fuzz         every libFuzzer target for FUZZ_SECONDS (default 300) with FUZZ_JOBS
#                     processes each (default 2); findings stay under build-fuzz/fuzz/NAME/
#   make lint         static checks (cppcheck: LINT_CHECKS below); any finding fails it
#   make format       format every C file as .clang-format says (style.clang_format checks it)
#   make lab-up       start the lab (CephFS over rate-limited OSDs + 2 emulated hosts; root)
#   make lab-down     stop it: nothing left running, mounted or configured
#   make lab-deps     install the lab's packages only
#   make dlio-deps    install the Debian packages DLIO needs for tests/perf/dlio_side_by_side.sh
PRESET   ?= ci
BUILD    ?= build
NP       ?= 2
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 300
FUZZ_JOBS    ?= 2

DEB_PACKAGES = build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhdf5-openmpi-dev \
	libprotobuf-c-dev protobuf-c-compiler libinih-dev libisal-dev libjansson-dev \
	libarchive-dev libzip-dev nettle-dev libyaml-dev libcmocka-dev gnuplot-nox python3 python3-venv \
	python3-pip fio strace clang-format cppcheck liburing-dev clang libclang-rt-14-dev libzstd-dev \
	libsnappy-dev zlib1g-dev libblosc-dev \
	libturbojpeg0-dev libspng-dev libcurl4-openssl-dev

# The lab (tests/lab/): a one-machine CephFS and emulated hosts, used by the `lab` tests.
LAB_PACKAGES = ceph-mon ceph-osd ceph-mds ceph-fuse ceph-common attr iproute2 util-linux \
	uuid-runtime procps slurmctld slurmd slurm-client radosgw curl

# DLIO 2.0 beside feedbench (tests/perf/dlio_side_by_side.sh): CPU torch and mpi4py built against
# the system Open MPI; DLIO itself goes into build/dlio-venv with pip. Not part of `make deps`.
DLIO_PACKAGES = python3-torch python3-mpi4py python3-torchvision

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1
export OMPI_MCA_btl_vader_single_copy_mechanism = none

.PHONY: all deps lab-deps dlio-deps lab-up lab-down build quickstart test test-sanitize test-fuzz fuzz clean \
	format format-check lint

all: build

deps: PKGS = $(DEB_PACKAGES) $(LAB_PACKAGES)
lab-deps: PKGS = $(LAB_PACKAGES)
dlio-deps: PKGS = $(DLIO_PACKAGES)
deps lab-deps dlio-deps:
	@missing=$$(for p in $(PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all Debian packages present"; fi

# FEEDBENCH_LAB_ID / FEEDBENCH_LAB_DIR name the lab (default: id "main", /tmp/feedbench-lab-main).
lab-up: lab-deps
	$(SUDO) tests/lab/lab.sh up

lab-down:
	$(SUDO) tests/lab/lab.sh down

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS)

quickstart: build
	mpiexec --oversubscribe -n $(NP) $(BUILD)/feedbench run configs/quickstart.ini

# Every phase runs even when one fails; then tests/skips.py lists every test that was skipped,
# with its reason, and fails `make test` when one was skipped that this machine can run (the
# cases that truly cannot run here, with their conditions: tests/expected_skips.txt).
JUNIT = $(BUILD)/ctest-junit.xml build-debug/ctest-junit.xml build-fuzz/ctest-junit.xml build-tsan/ctest-junit.xml
test: build
	@rm -f $(JUNIT); rc=0; \
	(cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300 \
		--output-junit $(CURDIR)/$(BUILD)/ctest-junit.xml) || rc=1; \
	$(MAKE) --no-print-directory test-sanitize || rc=1; \
	$(MAKE) --no-print-directory test-fuzz || rc=1; \
	$(MAKE) --no-print-directory test-tsan || rc=1; \
	FEEDBENCH=$(CURDIR)/$(BUILD)/feedbench FEEDBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) \
		python3 tests/skips.py $(CURDIR) $(JUNIT) || rc=1; \
	[ $$rc -eq 0 ] && echo "make test: every phase passed" || echo "make test: FAILED (see above)"; \
	exit $$rc

# The same code paths under AddressSanitizer and UndefinedBehaviorSanitizer (the `debug`
# preset): any report fails the test. Leak reports are off: Open MPI's own allocations at exit
# would drown them. The Python venvs (s3.venv) are those of $(BUILD) when they are made there
# (linked by tests/interop/setup_venv.sh, not made twice). The interoperability tests (Python), the sweeps and the compare suite (its
# false-alarm and sensitivity cases time real runs) are not repeated here; the report tests
# (label plot: report.md written by C from damaged summary.json files, about 2 s) are.
test-sanitize: deps
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j $(JOBS)
	cd build-debug && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 FEEDBENCH_VENV_REUSE=$(CURDIR)/$(BUILD) \
		ctest --output-on-failure -j $(JOBS) --timeout 300 -L 'unit|mpi|faults|configs|plot|hostile' -LE 'interop|sweep|gpu|compare' \
		--output-junit $(CURDIR)/build-debug/ctest-junit.xml

# The runs that put threads together under ThreadSanitizer (the `tsan` preset): the reader pool
# and its prefetch ring (4 reader threads, shared files, MPI-IO from reader threads, readers and a
# trainer that reads late batches itself on one CPU), the
# agreement code and the watchdog thread (a flipped byte, an I/O error on one rank, uneven
# ranks), and the async checkpoint's writer thread beside the trainer (a checkpoint written,
# and one whose write fails), and 2 accelerators per rank (their deal checked while the watchdog
# thread runs). Any report fails the run; tests/tsan/tsan.supp lists Open MPI
# internals only. (The SIGINT test is left out: TSan defers signals to its own safe points, which moves the moment
# the run stops.)
TSAN_TESTS = ^(mpi[.](read_threads_4|lazy_wake|raw_shared_2|verify_flipped_byte_collective|uneven_watchdog)|faults[.](eio_read_rank1|matrix_raw_mpiio_2)|checkpoint[.](train_async|train_async_fail)|accelerators_per_rank[.]per_rank)$$
test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target feedbench
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan/tsan.supp" \
		ctest --output-on-failure -j $(JOBS) --timeout 300 -R '$(TSAN_TESTS)' \
		--output-junit $(CURDIR)/build-tsan/ctest-junit.xml

# The libFuzzer targets (tests/fuzz/, the `fuzz` preset: clang with fuzzer, address and
# undefined sanitizers), each run briefly from its seed corpus: a parser regression fails here.
test-fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	cd build-fuzz && ctest --output-on-failure -j $(JOBS) -L fuzz \
		--output-junit $(CURDIR)/build-fuzz/ctest-junit.xml

# Longer fuzzing: every target for FUZZ_SECONDS with FUZZ_JOBS processes; the corpus grows in
# build-fuzz/fuzz/NAME/corpus from one `make fuzz` to the next.
fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	@fail=0; for bin in build-fuzz/fuzz/fuzz_*; do \
		FEEDBENCH_BUILD_DIR=$(CURDIR)/build-fuzz bash tests/fuzz/run_fuzz.sh \
			$${bin##*/fuzz_} $(FUZZ_SECONDS) $(FUZZ_JOBS) || fail=1; \
	done; exit $$fail

# The agreed static checks: cppcheck's `warning` (undefined behaviour, uninitialised and
# out-of-bounds use, format strings, leaks) and `portability` classes over the product's C
# sources; `style` and `performance` are left out (taste, not defects). The few findings that
# are not defects are suppressed by file in tests/lint/cppcheck.supp, with why. About a minute
# on 2 cores.
LINT_CHECKS = warning,portability
lint: deps
	cppcheck -q -j $(JOBS) --std=c11 --enable=$(LINT_CHECKS) --inline-suppr \
		--suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1 \
		-I bench -I formats -I workloads bench formats workloads

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h' '*.cu')

clean:
	rm -rf $(BUILD)
