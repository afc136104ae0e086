/* The one list of storage back-ends: X(name, NAME) per back-end, in the order of the choices of
 * [storage] backend. From it come the enum BACKEND_<NAME> (config.h), the choices
 * (config_keys.c) and the registry table (registry.c), so they cannot disagree. Each name is a
 * plug-in, bench/storage/<name>.c, defining `const struct storage_ops <name>_storage`. A back-end
 * that needs an optional library is still listed: built without it, its ops say `not_built`. */
#ifndef FEEDBENCH_STORAGE_REGISTRY_H
#define FEEDBENCH_STORAGE_REGISTRY_H

#define FEEDBENCH_BACKENDS(X)                                                                      \
	X(posix, POSIX)                                                                            \
	X(mpiio, MPIIO)                                                                            \
	X(null, NULL)                                                                              \
	X(faulty, FAULTY)                                                                          \
	X(uring, URING)                                                                            \
	X(s3, S3)

#endif
