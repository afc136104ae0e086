/* Monotonic time in nanoseconds. Every duration in feedbench comes from here. */
#ifndef FEEDBENCH_TIMER_H
#define FEEDBENCH_TIMER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t timer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time in nanoseconds (user and system): work done, not waited. */
static inline uint64_t timer_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double timer_ns_to_s(uint64_t ns)
{
	return (double)ns / 1e9;
}

#endif
