/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
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

/* A file maglevd may trust: owned by root or by maglevd's own user, and
 * writable by neither group nor others. */
static bool trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* A directory maglevd may create files in: trusted, or owned as above
 * and sticky (/tmp: others may add names there, but never remove,
 * rename or replace one of ours; files are made O_EXCL under names no
 * one can guess, and read only if trusted themselves). */
static bool trusted_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) &&
	       (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

static void say_untrusted_dir(const char *dir, const struct stat *st,
			      char *why, size_t why_len)
{
	snprintf(why, why_len, "%s: %s (owner uid %u, mode %04o); refused",
		 dir, !S_ISDIR(st->st_mode) ? "not a directory" :
		 "not owned by root (or maglevd's user), or writable by "
		 "others without the sticky bit", (unsigned)st->st_uid,
		 (unsigned)(st->st_mode & 07777));
}

enum mlv_err mlv_dir_open(const char *dir, mode_t create_mode, int *dfd,
			  char *why, size_t why_len)
{
	struct stat st;
	int fd;

	*dfd = -1;
	if (create_mode && mkdir(dir, create_mode) != 0 && errno != EEXIST) {
		snprintf(why, why_len, "cannot create directory %s: %s", dir,
			 strerror(errno));
		return MLV_E_IO;
	}
	/* O_NOFOLLOW: the directory itself is never a link someone put in
	 * its place (those above it are the administrator's) */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		/* O_NOFOLLOW | O_DIRECTORY on a link fails ENOTDIR */
		bool link = (err == ELOOP || err == ENOTDIR) &&
			    lstat(dir, &st) == 0 && S_ISLNK(st.st_mode);

		snprintf(why, why_len, "%s: %s", dir, link ?
			 "a symbolic link, not a directory; refused" :
			 strerror(err));
		return err == ENOENT ? MLV_E_NOT_FOUND :
		       link ? MLV_E_PERM : MLV_E_IO;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, why_len, "%s: %s", dir, strerror(errno));
		close(fd);
		return MLV_E_IO;
	}
	if (!trusted_dir(&st)) {
		say_untrusted_dir(dir, &st, why, why_len);
		close(fd);
		return MLV_E_PERM;
	}
	*dfd = fd;
	return MLV_OK;
}

/* A name for a temporary file beside name that no one can guess. */
static void temp_name(char *tmp, size_t len, const char *name)
{
	struct timespec ts;
	uint64_t r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		    ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
	snprintf(tmp, len, ".%s.%016llx.tmp", name, (unsigned long long)r);
}

enum mlv_err mlv_file_replace(const char *path, const void *data, size_t len,
			      mode_t mode, unsigned flags, char *why,
			      size_t why_len)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *name;
	int dfd = -1, fd = -1, err = 0;
	enum mlv_err rc = MLV_E_IO;

	if (!path || split(path, dir, sizeof(dir), &name) != MLV_OK ||
	    strlen(name) > NAME_MAX - 22) {   /* ".NAME.<16 hex>.tmp" fits */
		snprintf(why, why_len, "%s: not a file path", path ? path : "(null)");
		return MLV_E_INVAL;
	}
	/* the same rule mlv_file_read applies, so what is saved is read back */
	rc = mlv_dir_open(dir, 0, &dfd, why, why_len);
	if (rc != MLV_OK) {
		if (rc == MLV_E_NOT_FOUND)
			rc = MLV_E_IO;
		goto out;
	}
	rc = MLV_E_IO;
	/* O_EXCL under an unguessable name: a name someone else made (a
	 * link, a file) is never opened, let alone followed */
	for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
		temp_name(tmp, sizeof(tmp), name);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	/* the mode as asked, whatever the umask */
	if (fd >= 0 && fchmod(fd, mode) != 0) {
		err = errno;
		snprintf(why, why_len, "%s/%s: %s", dir, tmp, strerror(err));
		goto out_unlink;
	}
	if (fd < 0) {
		err = errno;
		snprintf(why, why_len, "%s/%s: %s", dir, tmp, strerror(err));
		goto out;
	}
	if (!write_all(fd, data, len) ||
	    ((flags & MLV_FILE_DURABLE) && fsync(fd) != 0)) {
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
	if (flags & MLV_FILE_DURABLE)
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
	enum mlv_err err;
	int dfd, fd;

	*data = NULL;
	*len = 0;
	if (!path || split(path, dir, sizeof(dir), &name) != MLV_OK) {
		snprintf(why, why_len, "%s: not a file path", path ? path : "(null)");
		return MLV_E_INVAL;
	}
	err = mlv_dir_open(dir, 0, &dfd, why, why_len);
	if (err != MLV_OK)
		return err;
	/* O_NOFOLLOW: never through a link; O_NONBLOCK: a FIFO put in the
	 * file's place must not block the open (refused below); O_NOCTTY: a
	 * terminal never becomes ours */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    O_NOCTTY);
	if (fd < 0) {
		int e = errno;

		close(dfd);
		if (e == ENOENT)
			return MLV_E_NOT_FOUND;
		snprintf(why, why_len, "%s: %s", path, strerror(e));
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

enum mlv_err mlv_file_remove(const char *path, char *why, size_t why_len)
{
	char dir[PATH_MAX];
	const char *name;
	enum mlv_err rc;
	int dfd = -1;

	if (!path || split(path, dir, sizeof(dir), &name) != MLV_OK) {
		snprintf(why, why_len, "%s: not a file path", path ? path : "(null)");
		return MLV_E_INVAL;
	}
	rc = mlv_dir_open(dir, 0, &dfd, why, why_len);
	if (rc != MLV_OK)
		return rc;
	/* unlinkat removes the name itself, a link never its target */
	if (unlinkat(dfd, name, 0) != 0) {
		rc = errno == ENOENT ? MLV_E_NOT_FOUND : MLV_E_IO;
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
	}
	close(dfd);
	return rc;
}
