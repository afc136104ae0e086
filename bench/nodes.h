/* Per-node figures of a run: ranks grouped by node (the MPI_COMM_TYPE_SHARED split, named by
 * each node's first rank), bytes and bandwidth per node, spread over nodes (bench/nodes.c). */
#ifndef FEEDBENCH_NODES_H
#define FEEDBENCH_NODES_H

#include <jansson.h>

struct node_total {
	int leader;	/* world rank of the node's local rank 0 */
	char host[64];	/* its host name */
	int nranks;	/* ranks on the node */
	int first_rank; /* lowest world rank on the node */
	double bytes;	/* bytes read by its ranks */
	double wall;	/* the longest phase time of its ranks (s) */
	double bw;	/* bytes / 2^20 / wall: the node's bandwidth, IOR-style */
};

/* One rank's share, as results.c gathered it. */
struct node_rank {
	int leader;
	const char *host;
	double bytes, wall;
};

/* Groups n ranks into nodes (in order of their first rank); *out is malloc'ed. Returns the
 * number of nodes, or -ENOMEM. */
int nodes_group(const struct node_rank *r, int n, struct node_total **out);

/* min / mean / max of the nodes' bandwidth. */
void nodes_spread(const struct node_total *nodes, int nn, double *min, double *mean, double *max);

/* summary.json's "nodes": [{node, host, ranks: [..], bytes_read, wall_seconds,
 * bandwidth_MiB_per_second}], given each rank's leader to list the ranks. */
json_t *nodes_json(const struct node_total *nodes, int nn, const struct node_rank *r, int n);

#endif
