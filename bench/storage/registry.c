/* The only place that knows which storage back-ends exist. One line per back-end. */
#include "storage.h"

#include <string.h>

extern const struct storage_ops posix_storage;
extern const struct storage_ops mpiio_storage;
extern const struct storage_ops null_storage;
extern const struct storage_ops faulty_storage;
extern const struct storage_ops uring_storage;

const struct storage_ops *const storage_registry[] = {
    &posix_storage, &mpiio_storage, &null_storage, &faulty_storage, &uring_storage, NULL,
};

const struct storage_ops *storage_find(const char *name)
{
	for (size_t i = 0; storage_registry[i]; i++)
		if (strcmp(storage_registry[i]->name, name) == 0)
			return storage_registry[i];
	return NULL;
}
