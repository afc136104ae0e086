/* The registry of storage back-ends, generated from the one list in registry.h
 * (FEEDBENCH_BACKENDS), as are the enum BACKEND_* and the choices of [storage] backend: a back-end
 * is added there, nowhere else. */
#include "storage.h"
#include "registry.h"

#include "../config.h"

#include <stdio.h>
#include <string.h>

#define BACKEND_DECLARE(name, NAME) extern const struct storage_ops name##_storage;
FEEDBENCH_BACKENDS(BACKEND_DECLARE)
#undef BACKEND_DECLARE

/* In the list's order, which is the enum's: storage_registry[BACKEND_<NAME>] is <name>. */
#define BACKEND_ENTRY(name, NAME) &name##_storage,
const struct storage_ops *const storage_registry[] = {FEEDBENCH_BACKENDS(BACKEND_ENTRY) NULL};
#undef BACKEND_ENTRY

const struct storage_ops *storage_find(const char *name)
{
	for (size_t i = 0; storage_registry[i]; i++)
		if (strcmp(storage_registry[i]->name, name) == 0)
			return storage_registry[i];
	return NULL;
}

const struct storage_ops *storage_effective(const struct storage_ops *ops, const struct config *cfg)
{
	/* A few steps at most: a back-end that wraps itself (or a loop) leads nowhere. */
	for (int depth = 0; ops && ops->wraps; depth++) {
		const char *inner = depth < 8 ? ops->wraps(cfg) : NULL;

		ops = inner ? storage_find(inner) : NULL;
	}
	return ops;
}

bool storage_is_object(const struct config *cfg)
{
	const struct storage_ops *ops = storage_effective(
	    storage_find(cfg_choice_name("storage", "backend", cfg->storage.backend)), cfg);

	return ops && (ops->caps & STORAGE_CAP_OBJECT);
}

void storage_collective_names(char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; storage_registry[i] && at < len; i++) {
		const struct storage_ops *ops = storage_registry[i];

		/* A wrapper (faulty) offers them only through what it wraps: not listed. */
		if (!storage_has_collective(ops) || ops->not_built || ops->wraps)
			continue;
		int n = snprintf(buf + at, len - at, "%s%s", at ? " or " : "", ops->name);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}
