/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Split path into its directory (".", when it has none) and last name. */
static enum mlv_err split(const char *path, char *dir, size_t dir_len,
			  const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash) {
		snprintf(dir, dir_len, ".");
		*name = path;
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= dir_len)
			return MLV_E_INVAL;
		memcpy(dir, path, n);
		dir[n] = '\0';
		*name = slash + 1;
	}
	if (**name == '\0' || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
		return MLV_E_INVAL;
	return MLV_OK;
}

static bool write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* A directory or file maglevd may trust: owned by root or by maglevd's
 * own user, and writable by neither group nor others (so not /tmp, where
 * anyone may have made the file). */
static bool trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

enum mlv_err mlv_file_replace(const char *path, const void *data, size_t len,
			      mode_t mode, char *why, size_t why_len)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *name;
	struct stat st;
	int dfd = -1, fd = -1, err = 0;
	enum mlv_err rc = MLV_E_IO;

	if (!path || split(path, dir, sizeof(dir), &name) != MLV_OK ||
	    strlen(name) > NAME_MAX - 16) {
		snprintf(why, why_len, "%s: not a file path", path ? path : "(null)");
		return MLV_E_INVAL;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) != 0) {
		err = errno;
		snprintf(why, why_len, "%s: %s", dir, strerror(err));
		goto out;
	}
	/* the same rule mlv_file_read applies, so what is saved is read back */
	if (!trusted(&st)) {
		snprintf(why, why_len, "%s: not owned by root (or maglevd's "
			 "user), or writable by others (mode %04o); refused", dir,
			 (unsigned)(st.st_mode & 07777));
		rc = MLV_E_PERM;
		goto out;
	}
	/* O_EXCL: a name someone else made (a link, a file) is never
	 * reused; a left-over of our own is removed and the name retried */
	for (int attempt = 0; fd < 0 && attempt < 2; attempt++) {
		snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST && attempt == 0)
			(void)unlinkat(dfd, tmp, 0);
	}
	if (fd < 0) {
		err = errno;
		snprintf(why, why_len, "%s/%s: %s", dir, tmp, strerror(err));
		goto out;
	}
	if (!write_all(fd, data, len) || fsync(fd) != 0) {
		err = errno;
		snprintf(why, why_len, "%s/%s: %s", dir, tmp, strerror(err));
		goto out_unlink;
	}
	if (close(fd) != 0) {
		fd = -1;
		err = errno;
		snprintf(why, why_len, "%s/%s: %s", dir, tmp, strerror(err));
		goto out_unlink;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) != 0) {
		err = errno;
		snprintf(why, why_len, "%s: %s", path, strerror(err));
		goto out_unlink;
	}
	/* the rename itself reaches the disk with the directory */
	(void)fsync(dfd);
	rc = MLV_OK;
	goto out;
out_unlink:
	(void)unlinkat(dfd, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (rc != MLV_OK && err)
		errno = err;
	return rc;
}

enum mlv_err mlv_file_read(const char *path, size_t max, char **data,
			   size_t *len, char *why, size_t why_len)
{
	char dir[PATH_MAX];
	const char *name;
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int dfd, fd;

	*data = NULL;
	*len = 0;
	if (!path || split(path, dir, sizeof(dir), &name) != MLV_OK) {
		snprintf(why, why_len, "%s: not a file path", path ? path : "(null)");
		return MLV_E_INVAL;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT)
			return MLV_E_NOT_FOUND;
		snprintf(why, why_len, "%s: %s", dir, strerror(errno));
		return MLV_E_IO;
	}
	if (fstat(dfd, &st) != 0) {
		snprintf(why, why_len, "%s: %s", dir, strerror(errno));
		close(dfd);
		return MLV_E_IO;
	}
	if (!trusted(&st)) {
		snprintf(why, why_len, "%s: not owned by root (or maglevd's user), "
			 "or writable by others; refused", dir);
		close(dfd);
		return MLV_E_PERM;
	}
	/* O_NOFOLLOW: never through a link; O_NONBLOCK: a FIFO put in the
	 * file's place must not block the open (refused below); O_NOCTTY: a
	 * terminal never becomes ours */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    O_NOCTTY);
	if (fd < 0) {
		int err = errno;

		close(dfd);
		if (err == ENOENT)
			return MLV_E_NOT_FOUND;
		snprintf(why, why_len, "%s: %s", path, strerror(err));
		return MLV_E_IO;
	}
	close(dfd);
	if (fstat(fd, &st) != 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		close(fd);
		return MLV_E_IO;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max || !trusted(&st)) {
		snprintf(why, why_len, "%s: %s", path, !S_ISREG(st.st_mode) ?
			 "not a regular file" : (size_t)st.st_size > max ?
			 "too large" : "not owned by root (or maglevd's user), "
			 "or writable by others; refused");
		close(fd);
		return S_ISREG(st.st_mode) && (size_t)st.st_size <= max ?
		       MLV_E_PERM : MLV_E_INVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(why, why_len, "%s: out of memory", path);
		close(fd);
		return MLV_E_NOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, why_len, "%s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return MLV_E_IO;
		}
		if (n == 0)
			break;   /* shorter than fstat said: take what is there */
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return MLV_OK;
}
