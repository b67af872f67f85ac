/* The control thread's event loop: one epoll over a signalfd (SIGHUP,
 * SIGTERM, SIGINT), the stats-file timer and a reclaim timer. It never
 * blocks on anything but epoll_wait, so later additions (control socket,
 * health checks, inotify) join the same loop. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/stats_file.h"

/* How soon to retry reclaiming a replaced generation: workers pass a
 * quiescent state every poll loop (microseconds), or are offline while
 * they sleep, so a few milliseconds is plenty. */
#define RECLAIM_RETRY_MS 2

enum { EV_SIGNAL = 1, EV_STATS, EV_RECLAIM };

struct loop {
	struct mlv_daemon *d;
	int ep;
	int stats_tfd;
	int reclaim_tfd;
	bool reclaim_armed;
	bool stats_failing;      /* log a failing stats file once, not per write */
	bool stop;
};

static int arm_timer(int fd, uint32_t first_ms, uint32_t period_ms)
{
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (long)(first_ms % 1000) * 1000000L },
		.it_interval = { period_ms / 1000, (long)(period_ms % 1000) * 1000000L },
	};

	return timerfd_settime(fd, 0, &its, NULL);
}

static int watch(int ep, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void drain_timer(int fd)
{
	uint64_t expirations;

	/* Non-blocking; EAGAIN just means another event woke us first. */
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		mlv_debug("timer read: %s", strerror(errno));
}

static void write_stats(struct loop *l)
{
	const char *path = l->d->opts->stats_file;
	json_t *doc;

	if (!path)
		return;
	doc = mlv_stats_json(l->d, false);
	if (!doc) {
		mlv_warn("stats file: out of memory building it");
		return;
	}
	if (mlv_stats_file_write(path, doc) != MLV_OK) {
		if (!l->stats_failing)
			mlv_warn("stats file %s: cannot write: %s (further "
				 "failures are not logged)", path,
				 strerror(errno));
		l->stats_failing = true;
	} else if (l->stats_failing) {
		mlv_info("stats file %s: written again", path);
		l->stats_failing = false;
	}
	json_decref(doc);
}

static void on_signals(struct loop *l, int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			mlv_daemon_reload(l->d);
			/* readers polling the stats file see the outcome now */
			write_stats(l);
			break;
		case SIGTERM:
		case SIGINT:
			mlv_info("%s received: stopping", strsignal((int)si.ssi_signo));
			l->stop = true;
			break;
		default:
			break;
		}
	}
}

/* Free what the workers can no longer see; keep a short timer running
 * while generations wait for their grace period. */
static void reclaim(struct loop *l)
{
	bool pending;

	mlv_publish_reclaim(l->d->pub);
	pending = mlv_publish_pending(l->d->pub) > 0;
	if (pending == l->reclaim_armed)
		return;
	if (arm_timer(l->reclaim_tfd, pending ? RECLAIM_RETRY_MS : 0,
		      pending ? RECLAIM_RETRY_MS : 0) == 0)
		l->reclaim_armed = pending;
}

enum mlv_err mlv_daemon_control_loop(struct mlv_daemon *d, int sigfd)
{
	struct loop l = { .d = d, .ep = -1, .stats_tfd = -1, .reclaim_tfd = -1 };
	enum mlv_err err = MLV_OK;

	l.ep = epoll_create1(EPOLL_CLOEXEC);
	l.reclaim_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l.ep < 0 || l.reclaim_tfd < 0 || watch(l.ep, sigfd, EV_SIGNAL) ||
	    watch(l.ep, l.reclaim_tfd, EV_RECLAIM)) {
		mlv_err_log("control loop: %s", strerror(errno));
		err = MLV_E_IO;
		goto out;
	}
	if (d->opts->stats_file) {
		l.stats_tfd = timerfd_create(CLOCK_MONOTONIC,
					     TFD_CLOEXEC | TFD_NONBLOCK);
		if (l.stats_tfd < 0 ||
		    arm_timer(l.stats_tfd, d->opts->stats_interval_ms,
			      d->opts->stats_interval_ms) ||
		    watch(l.ep, l.stats_tfd, EV_STATS)) {
			mlv_err_log("stats timer: %s", strerror(errno));
			err = MLV_E_IO;
			goto out;
		}
		write_stats(&l);
	}

	while (!l.stop) {
		struct epoll_event ev[4];
		int n = epoll_wait(l.ep, ev, 4, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			mlv_err_log("epoll_wait: %s", strerror(errno));
			err = MLV_E_IO;
			break;
		}
		for (int i = 0; i < n; i++) {
			switch (ev[i].data.u32) {
			case EV_SIGNAL:
				on_signals(&l, sigfd);
				break;
			case EV_STATS:
				drain_timer(l.stats_tfd);
				write_stats(&l);
				break;
			case EV_RECLAIM:
				drain_timer(l.reclaim_tfd);
				break;
			}
		}
		reclaim(&l);
	}
out:
	if (l.stats_tfd >= 0)
		close(l.stats_tfd);
	if (l.reclaim_tfd >= 0)
		close(l.reclaim_tfd);
	if (l.ep >= 0)
		close(l.ep);
	return err;
}
