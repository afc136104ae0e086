/* The one list of accelerator plug-ins: X(name, NAME) per plug-in. From it come the enum
 * ACCEL_<NAME> (config.h, after ACCEL_AUTO), the choices of [train] accelerator ("auto" and these,
 * config_keys.c) and the registry table (registry.c), so they cannot disagree. Each name is a
 * plug-in, bench/compute/<name>.c (or .cu), defining `const struct compute_ops <name>_compute`;
 * one that a build may leave out has FEEDBENCH_HAVE_<NAME> and FEEDBENCH_<NAME>_WHY in
 * build_config.h. */
#ifndef FEEDBENCH_COMPUTE_REGISTRY_H
#define FEEDBENCH_COMPUTE_REGISTRY_H

#define FEEDBENCH_ACCELERATORS(X)                                                                  \
	X(cpu, CPU)                                                                                \
	X(cuda, CUDA)

#endif
