/* SPDX-License-Identifier: BSD-3-Clause */
/* Files maglevd (running as root) writes and reads for itself: written
 * whole or not at all, in a directory no one else can write (or a sticky
 * one, where no one else can touch our names), never through a link.
 *
 * mlv_file_replace creates a temporary file next to the target with
 * openat(O_CREAT | O_EXCL | O_NOFOLLOW), writes it (and syncs it when
 * asked), and renames
 * it over the target, so a reader sees the old file or the new one, and a
 * crash leaves at most a stray temporary file. The directory is opened
 * once and checked (a directory, not group- or world-writable unless
 * sticky) and every step is relative to that descriptor, so a path
 * component swapped for a link between the check and the write cannot
 * redirect it.
 *
 * Threads: any; no shared state.
 */
#ifndef MLV_FILE_H
#define MLV_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "control/base/error.h"

/* Open directory dir (not through a link at its last component) and
 * check it: owned by root or maglevd's user, and writable by neither
 * group nor others unless it has the sticky bit (/tmp). create_mode, if
 * not 0, creates it with that mode first when it is missing (its parent
 * must exist). On MLV_OK *dfd is the directory's descriptor (O_CLOEXEC;
 * close it); otherwise MLV_E_NOT_FOUND, MLV_E_PERM (untrusted, or a
 * link) or MLV_E_IO with a sentence in why naming dir and the reason. */
enum mlv_err mlv_dir_open(const char *dir, mode_t create_mode, int *dfd,
			  char *why, size_t why_len);

/* mlv_file_replace's flags. */
enum {
	/* fsync the file and its directory before returning: it must
	 * survive a crash of the host (the state file). Without it the
	 * rename is atomic but may be lost with the page cache (the stats
	 * file, rewritten every second, need not wait for the disk). */
	MLV_FILE_DURABLE = 1u << 0,
};

/* Replace path with len bytes of data (file mode `mode`, e.g. 0600,
 * whatever the umask), through a temporary file beside it under a name
 * no one can guess; flags: MLV_FILE_*. The directory must pass
 * mlv_dir_open's check. Returns MLV_OK, or MLV_E_IO / MLV_E_INVAL /
 * MLV_E_PERM with a sentence in why (the old file, if any, is
 * untouched). */
enum mlv_err mlv_file_replace(const char *path, const void *data, size_t len,
			      mode_t mode, unsigned flags, char *why,
			      size_t why_len);

/* Read path, a regular file of at most max bytes, opened without
 * following a link at its last component, in a directory that, like the
 * file, belongs to root (or this process's user) and that neither group
 * nor others can write: a file someone else could have put there is not
 * trusted. On MLV_OK, *data is a malloc'd buffer of *len bytes plus a NUL
 * (free() it). MLV_E_NOT_FOUND when there is no such file or directory;
 * MLV_E_PERM (untrusted owner or mode), MLV_E_IO, MLV_E_INVAL (not a
 * regular file, too large) or MLV_E_NOMEM with a sentence in why
 * otherwise. */
enum mlv_err mlv_file_read(const char *path, size_t max, char **data,
			   size_t *len, char *why, size_t why_len);

/* Remove path's name from its directory, which must pass mlv_dir_open's
 * check (a link at the name is removed, never followed). MLV_OK,
 * MLV_E_NOT_FOUND when there is no such file, MLV_E_PERM / MLV_E_IO /
 * MLV_E_INVAL with a sentence in why otherwise. */
enum mlv_err mlv_file_remove(const char *path, char *why, size_t why_len);

#endif
