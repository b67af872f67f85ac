/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking the control socket's path (listen_internal.h). */
#define _GNU_SOURCE   /* struct ucred */
#include "control/ctl/listen_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/base/file.h"
#include "control/ctl/server.h"

enum mlv_err mlv_ctl_check_mode(uint32_t mode)
{
	if (mode & ~0777u)
		return MLV_E_INVAL;
	if (mode & 0002u)
		return MLV_E_PERM;
	return MLV_OK;
}

/* Create every missing directory above dir, 0755: they are only the
 * way to it. */
static enum mlv_err make_ancestors(const char *dir, char *err, size_t len)
{
	char buf[MLV_CTL_PATH_MAX + 1];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", dir);
	slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return MLV_OK;
	*slash = '\0';
	for (char *p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(buf, 0755) == 0) {
			/* 0755 whatever the umask (the unit's is 0027): the
			 * socket's group must be able to pass; set through
			 * the directory, not its path */
			int fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				      O_CLOEXEC);

			if (fd < 0 || fchmod(fd, 0755) != 0) {
				snprintf(err, len, "cannot set up directory %s: %s",
					 buf, strerror(errno));
				if (fd >= 0)
					close(fd);
				return MLV_E_IO;
			}
			close(fd);
		} else if (errno != EEXIST) {
			snprintf(err, len, "cannot create directory %s: %s", buf,
				 strerror(errno));
			return MLV_E_IO;
		}
		*p = saved;
		if (!saved)
			return MLV_OK;
	}
}

/* Open the socket's directory, creating it (0750, in the socket's group,
 * set through the descriptor) when it is missing, and check it: a
 * directory anyone else may write, even a sticky one, would let them
 * take the socket's or the lock's name first. Every later step is
 * relative to this descriptor. */
static enum mlv_err open_dir(struct mlv_ctl_listener *l, const char *path,
			     uint32_t gid, char *err, size_t len)
{
	char dir[MLV_CTL_PATH_MAX + 1];
	const char *slash = strrchr(path, '/');
	struct stat st;
	bool created;
	enum mlv_err rc;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(l->name, sizeof(l->name), "%s", slash ? slash + 1 : path);
	if (!l->name[0] || strcmp(l->name, ".") == 0 ||
	    strcmp(l->name, "..") == 0) {
		snprintf(err, len, "control socket %s: not a file name", path);
		return MLV_E_INVAL;
	}
	rc = make_ancestors(dir, err, len);
	if (rc != MLV_OK)
		return rc;
	created = mkdir(dir, 0750) == 0;
	if (!created && errno != EEXIST) {
		snprintf(err, len, "cannot create directory %s: %s", dir,
			 strerror(errno));
		return MLV_E_IO;
	}
	rc = mlv_dir_open(dir, 0, &l->dir_fd, err, len);
	if (rc != MLV_OK)
		return rc == MLV_E_NOT_FOUND ? MLV_E_IO : rc;
	if (created && (fchmod(l->dir_fd, 0750) != 0 ||
			(gid && fchown(l->dir_fd, (uid_t)-1, (gid_t)gid) != 0))) {
		snprintf(err, len, "cannot set up directory %s: %s", dir,
			 strerror(errno));
		return MLV_E_IO;
	}
	if (fstat(l->dir_fd, &st) != 0) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		return MLV_E_IO;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, len, "control socket directory %s is writable by "
			 "others (mode %04o): they could take the socket's name; "
			 "use a directory only root can write, such as "
			 "/run/maglevd", dir, (unsigned)(st.st_mode & 07777));
		return MLV_E_PERM;
	}
	/* bind and connect take a path, never a directory descriptor: this
	 * one leads through the descriptor, so a directory renamed or
	 * swapped above it cannot redirect them */
	if ((size_t)snprintf(l->at, sizeof(l->at), "/proc/self/fd/%d/%s",
			     l->dir_fd, l->name) >= sizeof(l->at)) {
		snprintf(err, len, "control socket name %s is too long (at most "
			 "%zu bytes)", l->name, sizeof(l->at) - 26);
		return MLV_E_INVAL;
	}
	return MLV_OK;
}

static void fill_addr(struct sockaddr_un *sa, const char *at)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, at, strlen(at));
}

/* Whether the process with this pid is exiting (PF_EXITING in the flags,
 * field 9 of /proc/PID/stat): killed, still releasing its memory, its
 * descriptors (lock, listener) not yet closed. */
static bool exiting(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags;
	ssize_t n;
	int fd;

	/* pid 0: a peer in another pid namespace, which we cannot judge */
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)   /* gone already, not merely hidden (ProtectProc) */
		return errno == ENOENT && kill(pid, 0) != 0 && errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');            /* the name may hold spaces */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return (flags & 0x4ul) != 0;      /* PF_EXITING */
}

enum holder { HOLDER_NONE, HOLDER_EXITING, HOLDER_LIVE };

/* Who listens on the socket's name: nobody (refused, or no file), a
 * process that is exiting, or a live one (including one whose backlog
 * is full). */
static enum holder socket_holder(const struct mlv_ctl_listener *l)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	enum holder h = HOLDER_LIVE;
	int fd, rc, e;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HOLDER_LIVE;           /* cannot tell: assume the worst */
	fill_addr(&sa, l->at);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	if (rc != 0 && (e == ECONNREFUSED || e == ENOENT))
		h = HOLDER_NONE;
	else if (rc == 0 &&
		 getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 &&
		 exiting(cred.pid))
		h = HOLDER_EXITING;
	close(fd);
	return h;
}

/* Take "<name>.lock" in the socket's directory. A lock held by a process
 * that is exiting (a kill -9 a moment ago) or that no longer listens is
 * waited for, up to MLV_CTL_LOCK_WAIT_MS; one held by a live listener is
 * refused at once. */
static enum mlv_err take_lock(struct mlv_ctl_listener *l, char *err,
			      size_t len)
{
	char lock[sizeof(l->name) + 8];
	struct timespec pause = { 0, 20 * 1000000L };
	struct stat st;
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", l->name);
	fd = openat(l->dir_fd, lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY, 0600);
	if (fd < 0) {
		snprintf(err, len, "cannot open lock file %s.lock: %s", l->path,
			 strerror(errno));
		return MLV_E_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		snprintf(err, len, "lock file %s.lock is not a file of ours; "
			 "refused", l->path);
		close(fd);
		return MLV_E_PERM;
	}
	for (uint32_t waited = 0; ; waited += 20) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK) {
			snprintf(err, len, "cannot lock %s.lock: %s", l->path,
				 strerror(errno));
			close(fd);
			return MLV_E_IO;
		}
		if (waited >= MLV_CTL_LOCK_WAIT_MS ||
		    socket_holder(l) == HOLDER_LIVE) {
			snprintf(err, len, "another maglevd is using %s (it holds "
				 "%s.lock%s)", l->path, l->path,
				 waited ? " and has not let go of it" : "");
			close(fd);
			return MLV_E_BUSY;
		}
		nanosleep(&pause, NULL);
	}
	l->lock_fd = fd;
	return MLV_OK;
}

/* What is at the socket's name before binding: nothing; a socket nobody
 * listens on any more (its owner died without removing it, or is dying:
 * we hold the lock now), removed; a live server, refused; anything else,
 * never touched. */
static enum mlv_err clear_name(struct mlv_ctl_listener *l, char *err,
			       size_t len)
{
	struct stat st;

	if (fstatat(l->dir_fd, l->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return MLV_OK;
		snprintf(err, len, "cannot stat %s: %s", l->path, strerror(errno));
		return MLV_E_IO;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s exists and is not a socket; not replacing it",
			 l->path);
		return MLV_E_EXISTS;
	}
	if (socket_holder(l) == HOLDER_LIVE) {
		snprintf(err, len, "another process is listening on %s; "
			 "is maglevd already running?", l->path);
		return MLV_E_BUSY;
	}
	if (unlinkat(l->dir_fd, l->name, 0) != 0 && errno != ENOENT) {
		snprintf(err, len, "cannot remove stale socket %s: %s", l->path,
			 strerror(errno));
		return MLV_E_IO;
	}
	return MLV_OK;
}

/* Bind with the mode and group set before the file exists, then listen.
 * The mode: fchmod on the unbound socket, which bind gives the file less
 * the umask, so the umask is lifted to what mode leaves out for the one
 * call (the control thread binds before it starts anything that makes
 * files). The group: the effective group of the creator. Nothing is
 * changed by path afterwards. */
static enum mlv_err bind_listen(struct mlv_ctl_listener *l, uint32_t mode,
				uint32_t gid, char *err, size_t len)
{
	struct sockaddr_un sa;
	struct stat st;
	const char *what;
	gid_t saved = getegid();
	mode_t mask;
	int rc, bind_errno;

	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		snprintf(err, len, "socket: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (fchmod(l->fd, (mode_t)mode) != 0) {
		snprintf(err, len, "cannot set the mode of %s: %s", l->path,
			 strerror(errno));
		goto fail_close;
	}
	fill_addr(&sa, l->at);
	if (gid != 0 && setegid((gid_t)gid) != 0) {
		snprintf(err, len, "cannot use group %u for %s: %s", gid,
			 l->path, strerror(errno));
		goto fail_close;
	}
	mask = umask(~(mode_t)mode & 0777);
	rc = bind(l->fd, (struct sockaddr *)&sa, sizeof(sa));
	bind_errno = errno;
	umask(mask);
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
	what = "stat";
	if (fstatat(l->dir_fd, l->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		goto fail_unlink;
	if ((st.st_mode & 07777) != mode) {
		snprintf(err, len, "%s has mode %04o after bind, not %04o", l->path,
			 (unsigned)(st.st_mode & 07777), mode);
		goto fail_unlink_quiet;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	what = "listen";
	if (listen(l->fd, SOMAXCONN) != 0)
		goto fail_unlink;
	return MLV_OK;

fail_unlink:
	snprintf(err, len, "%s %s: %s", what, l->path, strerror(errno));
fail_unlink_quiet:
	unlinkat(l->dir_fd, l->name, 0);
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
	l->dir_fd = -1;
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
	rc = open_dir(l, path, gid, err, err_len);
	if (rc == MLV_OK)
		rc = take_lock(l, err, err_len);
	if (rc == MLV_OK)
		rc = clear_name(l, err, err_len);
	if (rc == MLV_OK)
		rc = bind_listen(l, mode, gid, err, err_len);
	if (rc != MLV_OK)
		mlv_ctl_unlisten(l);
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
		if (l->dir_fd >= 0 &&
		    fstatat(l->dir_fd, l->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == l->dev && st.st_ino == l->ino)
			unlinkat(l->dir_fd, l->name, 0);
	}
	if (l->lock_fd >= 0) {
		close(l->lock_fd);
		l->lock_fd = -1;
	}
	if (l->dir_fd >= 0) {
		close(l->dir_fd);
		l->dir_fd = -1;
	}
}
