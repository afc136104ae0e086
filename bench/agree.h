/* Agreement across ranks: every phase ends with one, so a failure on one rank ends all ranks
 * together with one clear message, never a hang and never a half result.
 */
#ifndef FEEDBENCH_AGREE_H
#define FEEDBENCH_AGREE_H

#include <mpi.h>
#include <stdint.h>

struct run;

/* Collective over run->comm. Every rank passes its result; returns 0 when all succeeded, else
 * the code of the lowest failing rank (a rank that failed on its own before one that only
 * stopped because a peer failed), whose message is copied into every rank's run->err. When
 * only some ranks failed the message is prefixed with "rank N: ". */
int agree(struct run *run, int rc);

/* MPI_Allreduce on run->comm that keeps kicking the watchdog while it waits, so a rank that
 * finished its share early is not taken for a hung one while slower peers catch up. */
int agree_allreduce(struct run *run, const void *in, void *out, int count, MPI_Datatype type,
		    MPI_Op op);

/* Tells the other ranks, without blocking, that this rank failed (they stop at their next
 * step instead of finishing the epoch). Safe to call more than once. */
void agree_notify_failure(struct run *run);
/* True once another rank has notified a failure (main thread only; cheap: MPI_Iprobe). */
int agree_peer_failed(struct run *run);
/* Receives pending failure notices so MPI_Finalize finds no unmatched messages. */
void agree_drain(struct run *run);

/* Watchdog: a thread that ends the job with MPI_Abort when run->progress_ns has not moved for
 * `seconds` (a peer died inside a collective). 0 disables it. */
int watchdog_start(struct run *run, double seconds);
void watchdog_stop(struct run *run);
/* Marks progress (cheap; call at each step and phase); _at with a clock reading in hand. */
void watchdog_kick(struct run *run);
void watchdog_kick_at(struct run *run, uint64_t now_ns);

#endif
