/* Stopping on SIGINT and SIGTERM: the handler sets feedbench_stop (to the signal); the runner,
 * the sweep and the reader loops check it and stop cleanly, and the exit status says which
 * signal came (cli_exit_status). Below the command line, so that every part can read it. */
#ifndef FEEDBENCH_STOP_H
#define FEEDBENCH_STOP_H

#include <signal.h>

/* The one mutable global: a signal handler has no other way to reach the run. 0, or the
 * signal that came. */
extern volatile sig_atomic_t feedbench_stop;

/* Installs the handler of SIGINT and SIGTERM. */
void stop_install_signals(void);

#endif
