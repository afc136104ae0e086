/* Stopping on SIGINT and SIGTERM (stop.h). */
#include "stop.h"

#include <string.h>

volatile sig_atomic_t feedbench_stop;

/* Any thread may take the signal while reader threads poll the flag: an atomic store
 * (lock-free, so async-signal-safe) pairs with their atomic loads. */
static void on_signal(int sig)
{
	__atomic_store_n(&feedbench_stop, sig, __ATOMIC_RELAXED);
}

void stop_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
