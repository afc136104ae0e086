/* Per-node figures: what a multi-host run's table and summary.json say per node. A node's
 * bandwidth is its ranks' bytes over the longest of their phase times, as the run's own is
 * all bytes over the longest phase (IOR's rule), so on nodes that run together the per-node
 * figures add up to about the total.
 */
#include "nodes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MIB (1024.0 * 1024.0)

int nodes_group(const struct node_rank *r, int n, struct node_total **out)
{
	struct node_total *nodes = calloc((size_t)(n > 0 ? n : 1), sizeof(*nodes));
	int nn = 0;

	if (!nodes)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int k;

		for (k = 0; k < nn && nodes[k].leader != r[i].leader; k++)
			;
		if (k == nn) {
			nodes[nn].leader = r[i].leader;
			nodes[nn].first_rank = i;
			snprintf(nodes[nn].host, sizeof(nodes[nn].host), "%s", r[i].host);
			nn++;
		}
		nodes[k].nranks++;
		nodes[k].bytes += r[i].bytes;
		nodes[k].wall = fmax(nodes[k].wall, r[i].wall);
	}
	for (int k = 0; k < nn; k++)
		nodes[k].bw = nodes[k].wall > 0 ? nodes[k].bytes / MIB / nodes[k].wall : 0;
	*out = nodes;
	return nn;
}

void nodes_spread(const struct node_total *nodes, int nn, double *min, double *mean, double *max)
{
	double sum = 0;

	*min = nn ? INFINITY : 0;
	*max = 0;
	for (int k = 0; k < nn; k++) {
		*min = fmin(*min, nodes[k].bw);
		*max = fmax(*max, nodes[k].bw);
		sum += nodes[k].bw;
	}
	*mean = nn ? sum / nn : 0;
}

json_t *nodes_json(const struct node_total *nodes, int nn, const struct node_rank *r, int n)
{
	json_t *a = json_array();

	for (int k = 0; k < nn; k++) {
		json_t *ranks = json_array();

		for (int i = 0; i < n; i++)
			if (r[i].leader == nodes[k].leader)
				json_array_append_new(ranks, json_integer(i));
		json_array_append_new(a, json_pack("{s:i, s:s, s:o, s:I, s:f, s:f}", "node", k,
						   "host", nodes[k].host, "ranks", ranks,
						   "bytes_read", (json_int_t)nodes[k].bytes,
						   "wall_seconds", nodes[k].wall,
						   "bandwidth_MiB_per_second", nodes[k].bw));
	}
	return a;
}
