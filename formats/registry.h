/* The one list of formats: X(name) per format, in the order `feedbench list` and `feedbench keys`
 * show them. From it come the choices of [dataset] format (bench/config_keys.c) and the registry
 * table (registry.c), so they cannot disagree. Each name is a plug-in, formats/<name>.c, defining
 * `const struct format_ops <name>_format`. A format that needs an optional library is still
 * listed: built without it, its ops say `not_built`. */
#ifndef FEEDBENCH_FORMATS_REGISTRY_H
#define FEEDBENCH_FORMATS_REGISTRY_H

#define FEEDBENCH_FORMATS(X)                                                                       \
	X(raw)                                                                                     \
	X(npy)                                                                                     \
	X(npz)                                                                                     \
	X(hdf5)                                                                                    \
	X(tfrecord)                                                                                \
	X(wds)                                                                                     \
	X(parquet)                                                                                 \
	X(zarr)                                                                                    \
	X(jpeg)                                                                                    \
	X(png)                                                                                     \
	X(mds)

#endif
