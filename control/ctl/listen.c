/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking the control socket's path (listen_internal.h). */
#include "control/ctl/listen_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/ctl/server.h"

enum mlv_err mlv_ctl_check_mode(uint32_t mode)
{
	if (mode & ~0777u)
		return MLV_E_INVAL;
	if (mode & 0002u)
		return MLV_E_PERM;
	return MLV_OK;
}

/* Create every missing directory above path's last component, 0755. */
static enum mlv_err make_parent_dirs(const char *path, char *err, size_t len)
{
	char dir[MLV_CTL_PATH_MAX + 1];
	struct stat st;
	size_t n;

	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');

	if (!slash || slash == dir)
		return MLV_OK;       /* relative in the cwd, or directly in / */
	*slash = '\0';
	n = strlen(dir);
	/* walk down from the top, creating what is missing */
	for (size_t i = 1; i <= n; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		char saved = dir[i];

		dir[i] = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			snprintf(err, len, "cannot create directory %s: %s", dir,
				 strerror(errno));
			return MLV_E_IO;
		}
		dir[i] = saved;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s is not a directory", dir);
		return MLV_E_IO;
	}
	return MLV_OK;
}

static enum mlv_err take_lock(const char *path, int *lock_fd, char *err,
			      size_t len)
{
	char lock[MLV_CTL_PATH_MAX + 8];
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, len, "cannot open lock file %s: %s", lock,
			 strerror(errno));
		return MLV_E_IO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK) {
			snprintf(err, len, "another maglevd is using %s (it holds %s)",
				 path, lock);
			return MLV_E_BUSY;
		}
		snprintf(err, len, "cannot lock %s: %s", lock, strerror(e));
		return MLV_E_IO;
	}
	*lock_fd = fd;
	return MLV_OK;
}

static void fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, strlen(path));
}

/* A socket file is already at path: connect to it without blocking. A
 * refused connection means nobody listens (its owner died without
 * removing it): remove it. Anything that answers, or whose backlog is
 * full, is a live server: refuse. */
static enum mlv_err clear_stale(const char *path, char *err, size_t len)
{
	struct sockaddr_un sa;
	int fd, rc, e;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, len, "socket: %s", strerror(errno));
		return MLV_E_IO;
	}
	fill_addr(&sa, path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	if (rc == 0 || e == EAGAIN || e == EINPROGRESS) {
		snprintf(err, len, "another process is listening on %s; "
			 "is maglevd already running?", path);
		return MLV_E_BUSY;
	}
	if (e == ENOENT)
		return MLV_OK;       /* gone meanwhile */
	if (e != ECONNREFUSED) {
		snprintf(err, len, "cannot tell whether %s is in use: %s", path,
			 strerror(e));
		return MLV_E_IO;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, len, "cannot remove stale socket %s: %s", path,
			 strerror(errno));
		return MLV_E_IO;
	}
	return MLV_OK;
}

static enum mlv_err check_existing(const char *path, char *err, size_t len)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return MLV_OK;
		snprintf(err, len, "cannot stat %s: %s", path, strerror(errno));
		return MLV_E_IO;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s exists and is not a socket; not replacing it",
			 path);
		return MLV_E_EXISTS;
	}
	return clear_stale(path, err, len);
}

/* Bind, set the mode, then listen: until listen() every connect() is
 * refused, so nobody can connect while the file still has the
 * umask-derived mode bind gave it (fchmod does not apply to sockets). */
static enum mlv_err bind_listen(struct mlv_ctl_listener *l, uint32_t mode,
				uint32_t gid, char *err, size_t len)
{
	struct sockaddr_un sa;
	struct stat st;
	const char *what;
	gid_t saved = getegid();
	int rc, bind_errno;

	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		snprintf(err, len, "socket: %s", strerror(errno));
		return MLV_E_IO;
	}
	fill_addr(&sa, l->path);
	/* The file takes the effective group of its creator: the group is
	 * set by creating it, not by a chown of the path afterwards. */
	if (gid != 0 && setegid((gid_t)gid) != 0) {
		snprintf(err, len, "cannot use group %u for %s: %s", gid,
			 l->path, strerror(errno));
		goto fail_close;
	}
	rc = bind(l->fd, (struct sockaddr *)&sa, sizeof(sa));
	bind_errno = errno;
	if (gid != 0 && setegid(saved) != 0) {
		snprintf(err, len, "cannot restore the group after binding "
			 "%s: %s", l->path, strerror(errno));
		if (rc == 0)
			goto fail_unlink_quiet;
		goto fail_close;
	}
	if (rc != 0) {
		snprintf(err, len, "cannot bind %s: %s", l->path,
			 strerror(bind_errno));
		goto fail_close;
	}
	what = "chmod";
	if (chmod(l->path, mode) != 0)
		goto fail_unlink;
	what = "stat";
	if (lstat(l->path, &st) != 0)
		goto fail_unlink;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	what = "listen";
	if (listen(l->fd, SOMAXCONN) != 0)
		goto fail_unlink;
	return MLV_OK;

fail_unlink:
	snprintf(err, len, "%s %s: %s", what, l->path, strerror(errno));
fail_unlink_quiet:
	unlink(l->path);
fail_close:
	close(l->fd);
	l->fd = -1;
	return MLV_E_IO;
}

enum mlv_err mlv_ctl_listen(const char *path, uint32_t mode, uint32_t gid,
			    struct mlv_ctl_listener *l, char *err,
			    size_t err_len)
{
	enum mlv_err rc;

	l->fd = -1;
	l->lock_fd = -1;
	l->path[0] = '\0';
	if (!path || !path[0] || strlen(path) > MLV_CTL_PATH_MAX) {
		snprintf(err, err_len, "control socket path must be 1 to %zu bytes",
			 MLV_CTL_PATH_MAX);
		return MLV_E_INVAL;
	}
	rc = mlv_ctl_check_mode(mode);
	if (rc != MLV_OK) {
		snprintf(err, err_len, "control socket mode %04o refused: %s",
			 mode, rc == MLV_E_PERM ? "world-writable" :
			 "bits outside 0777");
		return rc;
	}
	snprintf(l->path, sizeof(l->path), "%s", path);
	rc = make_parent_dirs(path, err, err_len);
	if (rc == MLV_OK)
		rc = take_lock(path, &l->lock_fd, err, err_len);
	if (rc == MLV_OK)
		rc = check_existing(path, err, err_len);
	if (rc == MLV_OK)
		rc = bind_listen(l, mode, gid, err, err_len);
	if (rc != MLV_OK && l->lock_fd >= 0) {
		close(l->lock_fd);
		l->lock_fd = -1;
	}
	return rc;
}

void mlv_ctl_unlisten(struct mlv_ctl_listener *l)
{
	struct stat st;

	if (l->fd >= 0) {
		close(l->fd);
		l->fd = -1;
		/* a newer instance may have replaced a file we thought stale
		 * by now: remove only our own */
		if (lstat(l->path, &st) == 0 && st.st_dev == l->dev &&
		    st.st_ino == l->ino)
			unlink(l->path);
	}
	if (l->lock_fd >= 0) {
		close(l->lock_fd);
		l->lock_fd = -1;
	}
}
