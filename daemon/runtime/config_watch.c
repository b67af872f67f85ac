/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* realpath */
#include "daemon/runtime/config_watch.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/base/log.h"

/* A file written or renamed into place; for fragments also one removed
 * or renamed away (a VIP's file deleted is a change of the config, the
 * main file's own removal is not). */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
#define GONE_MASK (IN_DELETE | IN_MOVED_FROM)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Split path into its directory and last component (dirname/basename
 * modify their argument or return static storage; this does neither). */
static bool split(const char *path, char *dir, size_t dir_len, char *name,
		  size_t name_len)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash) {
		n = snprintf(dir, dir_len, ".");
		if (snprintf(name, name_len, "%s", path) >= (int)name_len)
			return false;
	} else {
		n = snprintf(dir, dir_len, "%.*s",
			     slash == path ? 1 : (int)(slash - path), path);
		if (snprintf(name, name_len, "%s", slash + 1) >= (int)name_len)
			return false;
	}
	return n > 0 && (size_t)n < dir_len && name[0];
}

static enum mlv_err add(struct mlv_config_watch *w, const char *path,
			char *err, size_t err_len)
{
	char dir[PATH_MAX];
	int wd;

	if (w->n == MLV_CONFIG_WATCH_MAX_DIRS)
		return MLV_OK;
	if (!split(path, dir, sizeof(dir), w->dirs[w->n].name,
		   sizeof(w->dirs[w->n].name))) {
		snprintf(err, err_len, "config watch: cannot split path %s", path);
		errno = ENAMETOOLONG;
		return MLV_E_IO;
	}
	wd = inotify_add_watch(w->inotify_fd, dir, WATCH_MASK);
	if (wd < 0) {
		snprintf(err, err_len, "config watch: inotify on %s: %s", dir,
			 strerror(errno));
		return MLV_E_IO;
	}
	/* the same directory twice gives the same wd: fine, names differ */
	w->dirs[w->n++].wd = wd;
	return MLV_OK;
}

enum mlv_err mlv_config_watch_open(const char *path, struct mlv_config_watch *w,
				   char *err, size_t err_len)
{
	struct stat st;
	char *target;
	enum mlv_err rc;

	memset(w, 0, sizeof(*w));
	w->timer_fd = -1;
	w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->inotify_fd < 0) {
		snprintf(err, err_len, "config watch: inotify: %s", strerror(errno));
		return MLV_E_IO;
	}
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->timer_fd < 0) {
		snprintf(err, err_len, "config watch: timer: %s", strerror(errno));
		rc = MLV_E_IO;
		goto fail;
	}
	if ((rc = add(w, path, err, err_len)))
		goto fail;
	/* A symlink (e.g. a config management tool's "current" link): edits
	 * of the file it points to happen in the target's directory. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
	    (target = realpath(path, NULL)) != NULL) {
		rc = add(w, target, err, err_len);
		free(target);
		if (rc)
			goto fail;
	}
	w->n_file = w->n;
	return MLV_OK;
fail:
	mlv_config_watch_close(w);
	return rc;
}

void mlv_config_watch_close(struct mlv_config_watch *w)
{
	if (w->inotify_fd >= 0)
		close(w->inotify_fd);
	if (w->timer_fd >= 0)
		close(w->timer_fd);
	w->inotify_fd = -1;
	w->timer_fd = -1;
	w->n = 0;
	w->n_file = 0;
	w->n_includes = 0;
	w->pending = false;
}

static bool matches(const struct mlv_config_watch *w,
		    const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW)
		return true;   /* events were lost: one of them may be ours */
	if (!ev->len)
		return false;
	for (uint32_t i = 0; i < w->n; i++)
		if (w->dirs[i].wd == ev->wd &&
		    (w->dirs[i].pattern || !(ev->mask & GONE_MASK)) &&
		    (w->dirs[i].pattern ?
		     fnmatch(w->dirs[i].name, ev->name, FNM_PERIOD) == 0 :
		     strcmp(w->dirs[i].name, ev->name) == 0))
			return true;
	return false;
}

static bool same_includes(const struct mlv_config_watch *w,
			  char *const *includes, uint32_t n)
{
	if (n != w->n_includes)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(w->includes[i], includes[i]) != 0)
			return false;
	return true;
}

static bool wd_in_use(const struct mlv_config_watch *w, int wd)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->dirs[i].wd == wd)
			return true;
	return false;
}

void mlv_config_watch_includes(struct mlv_config_watch *w, const char *path,
			       char *const *includes, uint32_t n)
{
	int old[MLV_CONFIG_WATCH_MAX_DIRS];
	uint32_t n_old = 0;

	if (w->inotify_fd < 0 || same_includes(w, includes, n))
		return;
	for (uint32_t i = w->n_file; i < w->n; i++)
		old[n_old++] = w->dirs[i].wd;
	w->n = w->n_file;
	w->n_includes = 0;
	for (uint32_t i = 0; i < n && i < MLV_CONFIG_MAX_INCLUDES; i++) {
		char full[PATH_MAX], dir[PATH_MAX];
		int wd;

		snprintf(w->includes[w->n_includes++], sizeof(w->includes[0]),
			 "%s", includes[i]);
		if (!mlv_config_include_path(path, includes[i], full,
					     sizeof(full)) ||
		    w->n == MLV_CONFIG_WATCH_MAX_DIRS ||
		    !split(full, dir, sizeof(dir), w->dirs[w->n].name,
			   sizeof(w->dirs[w->n].name))) {
			mlv_warn("config watch: include '%s': cannot watch it",
				 includes[i]);
			continue;
		}
		if (mlv_config_is_glob(dir)) {
			mlv_warn("config watch: include '%s': a glob in the "
				 "directory part is not watched (SIGHUP or "
				 "maglevctl reload reads it)", includes[i]);
			continue;
		}
		wd = inotify_add_watch(w->inotify_fd, dir, WATCH_MASK);
		if (wd < 0) {
			mlv_warn("config watch: include '%s': inotify on %s: %s "
				 "(SIGHUP or maglevctl reload reads it)",
				 includes[i], dir, strerror(errno));
			continue;
		}
		w->dirs[w->n].wd = wd;
		w->dirs[w->n++].pattern = true;
	}
	for (uint32_t i = 0; i < n_old; i++)
		if (!wd_in_use(w, old[i]))
			inotify_rm_watch(w->inotify_fd, old[i]);
}

static void arm(struct mlv_config_watch *w)
{
	uint64_t now = now_ms(), due;
	struct itimerspec its = { 0 };

	if (!w->pending) {
		w->pending = true;
		w->first_ms = now;
	}
	/* trailing debounce, but never later than MAX_DELAY after the first */
	due = now + MLV_CONFIG_WATCH_DEBOUNCE_MS;
	if (due > w->first_ms + MLV_CONFIG_WATCH_MAX_DELAY_MS)
		due = w->first_ms + MLV_CONFIG_WATCH_MAX_DELAY_MS;
	if (due <= now)
		due = now + 1;
	its.it_value.tv_sec = (time_t)((due - now) / 1000);
	its.it_value.tv_nsec = (long)((due - now) % 1000) * 1000000L;
	if (timerfd_settime(w->timer_fd, 0, &its, NULL) != 0)
		mlv_warn("config watch: cannot arm the timer: %s", strerror(errno));
}

bool mlv_config_watch_on_inotify(struct mlv_config_watch *w)
{
	/* aligned as the kernel's struct requires */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool seen = false;
	ssize_t n;

	while ((n = read(w->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			/* IN_IGNORED also follows our own inotify_rm_watch
			 * of a directory no include names any more */
			if ((ev->mask & IN_IGNORED) && wd_in_use(w, ev->wd))
				mlv_warn("config watch: a watched directory went "
					 "away; file changes are no longer "
					 "seen (SIGHUP still reloads)");
			if (matches(w, ev))
				seen = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		mlv_warn("config watch: read: %s", strerror(errno));
	if (seen) {
		w->changes++;
		arm(w);
	}
	return seen;
}

bool mlv_config_watch_on_timer(struct mlv_config_watch *w)
{
	uint64_t expirations;

	if (read(w->timer_fd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		mlv_debug("config watch: timer read: %s", strerror(errno));
	if (!w->pending)
		return false;
	w->pending = false;
	return true;
}
