/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket's event handling: clients, framing, replies
 * (server.h; taking the path is listen.c). */
#define _GNU_SOURCE   /* accept4, memrchr */
#include "control/ctl/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/ctl/listen_internal.h"

#define EVENTS_PER_CALL   64
#define ACCEPTS_PER_CALL  64
#define IN_INITIAL        4096u
#define IN_KEEP           (16u << 10)
/* How often deferred replies are polled while any is pending. */
#define DEFER_POLL_NS     1000000L

static const char oom_reply[] = "{\"ok\":false,\"error\":\"out of memory\"}\n";
static const char full_reply[] =
	"{\"ok\":false,\"error\":\"too many control clients\"}\n";

struct client {
	int fd;
	uint32_t events;            /* what epoll watches for it now */
	bool dead;                  /* closed; freed at the end of the call */
	bool read_closed;           /* EOF seen, or input abandoned */
	bool close_after_flush;
	bool in_backlog;
	bool deferring;             /* def holds a reply still being made */
	bool heavy_waiting;         /* its next request waits for a slice */
	bool def_heavy;             /* def builds a heavy reply in steps */
	struct mlv_ctl_peer peer;
	struct mlv_ctl_deferred def;
	json_t *def_id;             /* the deferred request's "id", or NULL */
	uint64_t def_deadline_ms;
	char *in;
	size_t in_off;              /* start of unconsumed input */
	size_t in_scan;             /* no newline in [in_off, in_scan) */
	size_t in_len;
	size_t in_cap;
	char *out;
	size_t out_off;             /* sent so far */
	size_t out_len;
	size_t out_cap;
	uint64_t last_progress_ms;
	uint64_t out_since_ms;      /* when the unsent output began */
	TAILQ_ENTRY(client) link;   /* clients or graveyard */
	TAILQ_ENTRY(client) backlog_link;
	TAILQ_ENTRY(client) defer_link;
};

TAILQ_HEAD(client_list, client);

struct mlv_ctl_server {
	struct mlv_ctl_listener lis;
	int epfd;
	int timer_fd;               /* stall checks, armed while clients exist */
	int backlog_fd;             /* eventfd: readable while backlog is non-empty */
	int spare_fd;               /* given up to accept-and-close at EMFILE */
	int defer_fd;               /* timerfd: polls deferred replies */
	bool defer_armed;
	uint32_t timer_period;      /* ms; 0: the stall/idle timer is off */
	bool backlog_signalled;
	mlv_ctl_handler_fn handle;
	void *ctx;
	mlv_ctl_mutates_fn mutates;
	mlv_ctl_heavy_fn heavy;
	uint32_t admin_gid;
	uint32_t max_clients;
	uint32_t line_max;
	uint32_t reply_max;
	uint32_t stall_ms;
	uint32_t idle_ms;
	uint32_t reply_deadline_ms;
	uint64_t out_total_max;
	uint64_t heavy_spent_ns;    /* of MLV_CTL_HEAVY_SLICE_MS, this call */
	struct client_list clients;
	struct client_list backlog;
	struct client_list deferred;    /* oldest first */
	struct client_list graveyard;
	struct mlv_ctl_server_stats st;
};

static void out_release(struct mlv_ctl_server *srv, struct client *c);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000u;
}

/* MLV_CTL_HEAVY_SLICE_MS, as now_ns() counts */
#define HEAVY_SLICE_NS (MLV_CTL_HEAVY_SLICE_MS * 1000000ull)

static bool out_pending(const struct client *c)
{
	return c->out_off < c->out_len;
}

/* ---- timer and backlog ---- */

/* Tick every period_ms (0: stop): a quarter of the timeout the
 * clients now face, so a stall or an idle client is seen within 25 %
 * of it. */
static void arm_timer(struct mlv_ctl_server *srv, uint32_t period)
{
	struct itimerspec its;

	if (period && period < 10)
		period = 10;
	if (period > 15000)
		period = 15000;
	if (period == srv->timer_period)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = period / 1000;
	its.it_value.tv_nsec = (long)(period % 1000) * 1000000L;
	its.it_interval = its.it_value;
	if (timerfd_settime(srv->timer_fd, 0, &its, NULL) == 0)
		srv->timer_period = period;
}

/* Tick every millisecond exactly while a deferred reply is pending: the
 * daemon's loop wakes on mlv_ctl_fd() and the next call polls it. */
static void arm_defer_timer(struct mlv_ctl_server *srv)
{
	bool on = !TAILQ_EMPTY(&srv->deferred);
	struct itimerspec its;

	if (on == srv->defer_armed)
		return;
	memset(&its, 0, sizeof(its));
	if (on) {
		its.it_value.tv_nsec = DEFER_POLL_NS;
		its.it_interval = its.it_value;
	}
	if (timerfd_settime(srv->defer_fd, 0, &its, NULL) == 0)
		srv->defer_armed = on;
}

/* Keep the eventfd readable exactly while the backlog has work, so the
 * daemon's loop calls mlv_ctl_process again. */
static void signal_backlog(struct mlv_ctl_server *srv)
{
	bool want = !TAILQ_EMPTY(&srv->backlog);
	uint64_t v = 1;

	if (want == srv->backlog_signalled)
		return;
	if (want) {
		if (write(srv->backlog_fd, &v, sizeof(v)) == sizeof(v))
			srv->backlog_signalled = true;
	} else {
		if (read(srv->backlog_fd, &v, sizeof(v)) == sizeof(v) ||
		    errno == EAGAIN)
			srv->backlog_signalled = false;
	}
}

/* ---- client life cycle ---- */

/* Forget c's deferred reply (its arg is released). */
static void end_deferral(struct mlv_ctl_server *srv, struct client *c)
{
	if (!c->deferring)
		return;
	TAILQ_REMOVE(&srv->deferred, c, defer_link);
	c->deferring = false;
	if (c->def.release)
		c->def.release(c->def.arg);
	memset(&c->def, 0, sizeof(c->def));
	json_decref(c->def_id);
	c->def_id = NULL;
}

static void drop(struct mlv_ctl_server *srv, struct client *c)
{
	if (c->dead)
		return;
	end_deferral(srv, c);
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	if (c->in_backlog) {
		TAILQ_REMOVE(&srv->backlog, c, backlog_link);
		c->in_backlog = false;
	}
	TAILQ_REMOVE(&srv->clients, c, link);
	TAILQ_INSERT_TAIL(&srv->graveyard, c, link);
	srv->st.clients--;
}

/* Free the clients dropped during this call: only now, because the
 * epoll batch may still name them. */
static void bury(struct mlv_ctl_server *srv)
{
	struct client *c;

	while ((c = TAILQ_FIRST(&srv->graveyard))) {
		TAILQ_REMOVE(&srv->graveyard, c, link);
		free(c->in);
		out_release(srv, c);
		free(c);
	}
}

static void set_events(struct mlv_ctl_server *srv, struct client *c,
		       uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (c->dead || c->events == events)
		return;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
		srv->st.disconnects++;
		drop(srv, c);
		return;
	}
	c->events = events;
}

static bool has_line(const struct client *c)
{
	return c->in &&
	       memchr(c->in + c->in_scan, '\n', c->in_len - c->in_scan) != NULL;
}

/* Waiting on the peer: unsent output, or half a request. */
static bool waiting(const struct client *c)
{
	return out_pending(c) ||
	       (!c->in_backlog && !c->read_closed && c->in_len > c->in_off);
}

/* Nothing in flight: no request queued or half read, no reply unsent
 * or deferred. */
static bool idle(const struct client *c)
{
	return !waiting(c) && !c->deferring && !c->in_backlog;
}

/* Decide what to wait for next, or close the client if it is done. */
static void settle(struct mlv_ctl_server *srv, struct client *c)
{
	if (c->dead)
		return;
	if (out_pending(c)) {
		set_events(srv, c, EPOLLOUT);
		return;
	}
	if (c->deferring) {
		/* nothing to read or write until the reply is made (a
		 * hang-up still arrives: client_event drops the client) */
		set_events(srv, c, 0);
		return;
	}
	if (c->close_after_flush || (c->read_closed && !has_line(c))) {
		drop(srv, c);
		return;
	}
	/* while requests are queued, read nothing more: input is bounded by
	 * line_max and level-triggered EPOLLIN must not spin */
	set_events(srv, c, c->read_closed || c->in_backlog ? 0 : EPOLLIN);
}

/* ---- output ---- */

enum reserve { RESERVE_OK, RESERVE_TOO_LARGE, RESERVE_OVER_BUDGET,
	       RESERVE_NOMEM };

/* Close the client, other than c, whose unread reply is the oldest:
 * a read-level one if any, else (only when c is an admin) an admin.
 * Returns false if there is none. The oldest is the reader that has had
 * the longest to take its reply; the newest request is the one most
 * likely to be read now. */
static bool shed_oldest(struct mlv_ctl_server *srv, struct client *c)
{
	struct client *o, *victim = NULL;

	TAILQ_FOREACH(o, &srv->clients, link) {
		if (o == c || !out_pending(o) || (o->peer.admin && !c->peer.admin))
			continue;
		if (!victim || (victim->peer.admin && !o->peer.admin) ||
		    (victim->peer.admin == o->peer.admin &&
		     o->out_since_ms < victim->out_since_ms))
			victim = o;
	}
	if (!victim)
		return false;
	srv->st.shed++;
	drop(srv, victim);
	out_release(srv, victim);
	return true;
}

/* Room for extra more bytes, never beyond limit in total, nor beyond
 * out_total_max for the buffers of every client together: older unread
 * replies are shed for it (shed_oldest) while they hold the room. */
static enum reserve out_reserve(struct mlv_ctl_server *srv, struct client *c,
				size_t extra, size_t limit)
{
	size_t need = c->out_len + extra, cap;
	uint64_t budget = srv->out_total_max, others;
	char *p;

	if (need > limit || need > budget)
		return need > limit ? RESERVE_TOO_LARGE : RESERVE_OVER_BUDGET;
	if (need <= c->out_cap)
		return RESERVE_OK;
	cap = c->out_cap ? c->out_cap : 1024;
	while (cap < need)
		cap *= 2;
	if (cap > limit)
		cap = limit;
	while ((others = srv->st.out_bytes - c->out_cap) + need > budget)
		if (!shed_oldest(srv, c))
			return RESERVE_OVER_BUDGET;
	if (others + cap > budget)
		cap = (size_t)(budget - others);   /* the doubling, clipped */
	p = realloc(c->out, cap);
	if (!p)
		return RESERVE_NOMEM;
	srv->st.out_bytes += cap - c->out_cap;
	c->out = p;
	c->out_cap = cap;
	return RESERVE_OK;
}

/* Give c's output buffer back (its budget with it). */
static void out_release(struct mlv_ctl_server *srv, struct client *c)
{
	srv->st.out_bytes -= c->out_cap;
	free(c->out);
	c->out = NULL;
	c->out_cap = 0;
}

struct dump_ctx {
	struct mlv_ctl_server *srv;
	struct client *c;
	size_t limit;
	enum reserve status;
};

static int dump_cb(const char *buf, size_t size, void *data)
{
	struct dump_ctx *d = data;

	d->status = out_reserve(d->srv, d->c, size, d->limit);
	if (d->status != RESERVE_OK)
		return -1;
	memcpy(d->c->out + d->c->out_len, buf, size);
	d->c->out_len += size;
	return 0;
}

/* Append json + '\n' within limit bytes of output in total; with m,
 * the object json ends with m's member (json's closing brace moves
 * behind it). */
static enum reserve append_json(struct mlv_ctl_server *srv, struct client *c,
				const json_t *json, size_t limit,
				const struct mlv_ctl_member *m)
{
	struct dump_ctx d = { .srv = srv, .c = c, .limit = limit,
			      .status = RESERVE_OK };
	size_t start = c->out_len;

	if (json_dump_callback(json, dump_cb, &d, JSON_COMPACT) != 0) {
		c->out_len = start;
		/* jansson fails the dump by itself only when memory runs out */
		return d.status == RESERVE_OK ? RESERVE_NOMEM : d.status;
	}
	if (m && json_is_object(json)) {
		bool empty = json_object_size(json) == 0;

		c->out_len--;                       /* the closing brace */
		if ((!empty && dump_cb(",", 1, &d)) || dump_cb("\"", 1, &d) ||
		    dump_cb(m->key, strlen(m->key), &d) ||
		    dump_cb("\":", 2, &d) || dump_cb(m->text, m->len, &d) ||
		    dump_cb("}", 1, &d)) {
			c->out_len = start;
			return d.status;
		}
	}
	d.status = out_reserve(srv, c, 1, limit + 1);
	if (d.status != RESERVE_OK) {
		c->out_len = start;
		return d.status;
	}
	c->out[c->out_len++] = '\n';
	return RESERVE_OK;
}

static void queue_oom(struct mlv_ctl_server *srv, struct client *c)
{
	size_t n = sizeof(oom_reply) - 1;

	if (out_reserve(srv, c, n, c->out_len + n) != RESERVE_OK) {
		srv->st.disconnects++;
		drop(srv, c);
		return;
	}
	memcpy(c->out + c->out_len, oom_reply, n);
	c->out_len += n;
}

/* Queue reply + '\n' (reply NULL: out of memory). A reply longer than
 * reply_max, or beyond what the output budget has left, is replaced with
 * an error reply saying so; the buffer it grew is given back. */
static void queue_reply_with(struct mlv_ctl_server *srv, struct client *c,
			     const json_t *reply,
			     const struct mlv_ctl_member *m)
{
	enum reserve r;

	if (!out_pending(c))
		c->out_since_ms = now_ms();
	r = reply ? append_json(srv, c, reply, c->out_len + srv->reply_max,
				m) : RESERVE_NOMEM;
	char msg[200];
	json_t *e;

	if (r == RESERVE_TOO_LARGE || r == RESERVE_OVER_BUDGET) {
		if (!out_pending(c))
			out_release(srv, c);
		if (r == RESERVE_TOO_LARGE) {
			srv->st.reply_too_large++;
			snprintf(msg, sizeof(msg), "reply too large: over %u "
				 "bytes", srv->reply_max);
		} else {
			srv->st.reply_over_budget++;
			snprintf(msg, sizeof(msg), "busy: replies admin clients "
				 "have not read yet hold the control socket's "
				 "output budget (%llu MiB); try again shortly",
				 (unsigned long long)(srv->out_total_max >> 20));
		}
		e = json_pack("{s:b, s:s}", "ok", 0, "error", msg);
		r = e ? append_json(srv, c, e, c->out_len + 4096, NULL) :
			RESERVE_NOMEM;
		json_decref(e);
	}
	if (r != RESERVE_OK)
		queue_oom(srv, c);
}

static void queue_reply(struct mlv_ctl_server *srv, struct client *c,
			const json_t *reply)
{
	queue_reply_with(srv, c, reply, NULL);
}

static void error_reply(struct mlv_ctl_server *srv, struct client *c,
			const char *msg)
{
	json_t *e = json_pack("{s:b, s:s}", "ok", 0, "error", msg);

	queue_reply(srv, c, e);
	json_decref(e);
}

/* Write as much as the socket takes. */
static void flush(struct mlv_ctl_server *srv, struct client *c)
{
	while (!c->dead && out_pending(c)) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			c->out_off += (size_t)n;
			c->last_progress_ms = now_ms();
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		} else {
			srv->st.disconnects++;   /* EPIPE, ECONNRESET */
			drop(srv, c);
			return;
		}
	}
	if (!c->dead) {
		/* an idle client holds none of the budget */
		c->out_off = c->out_len = 0;
		out_release(srv, c);
	}
}

/* ---- requests ---- */

/* Whether the heavy requests' slice of this call is spent. */
static bool slice_spent(const struct mlv_ctl_server *srv)
{
	return srv->heavy_spent_ns >= HEAVY_SLICE_NS;
}

/* Answer one request line. Returns false, leaving the line to be read
 * again, for a heavy request once this call's slice is spent. */
static bool handle_line(struct mlv_ctl_server *srv, struct client *c,
			const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req, *reply, *id;
	uint64_t t0 = 0;
	bool heavy;
	char msg[256];

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return true;            /* blank lines are ignored */
	req = json_loadb(line, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
			 &jerr);
	heavy = srv->heavy && json_is_object(req) && srv->heavy(req);
	if (heavy && slice_spent(srv)) {
		srv->st.heavy_waits++;
		json_decref(req);
		return false;
	}
	srv->st.requests++;
	if (!req) {
		srv->st.bad_requests++;
		snprintf(msg, sizeof(msg), "invalid JSON at column %d: %s",
			 jerr.column, jerr.text);
		error_reply(srv, c, msg);
		return true;
	}
	if (!json_is_object(req)) {
		srv->st.bad_requests++;
		error_reply(srv, c, "a request must be a JSON object");
		json_decref(req);
		return true;
	}
	if (srv->mutates && !c->peer.admin && srv->mutates(req)) {
		const json_t *cmd = json_object_get(req, "command");

		srv->st.refused_level++;
		snprintf(msg, sizeof(msg), "%s changes the daemon and needs the "
			 "admin level: root or a member of control.admin_group "
			 "(this connection is uid %u, read-only)",
			 json_is_string(cmd) ? json_string_value(cmd) :
			 "the command", c->peer.uid);
		reply = json_pack("{s:b, s:s}", "ok", 0, "error", msg);
		id = json_object_get(req, "id");
		goto answer;
	}
	memset(&c->def, 0, sizeof(c->def));
	if (heavy)
		t0 = now_ns();
	reply = srv->handle(req, &c->peer, srv->ctx, &c->def);
	id = json_object_get(req, "id");
	if (!reply && c->def.poll) {
		srv->st.deferred++;
		c->deferring = true;
		c->def_heavy = heavy;
		c->def_id = json_incref(id);
		c->def_deadline_ms = now_ms() + c->def.timeout_ms;
		TAILQ_INSERT_TAIL(&srv->deferred, c, defer_link);
		json_decref(req);
		goto spent;
	}
answer:
	if (reply && id && json_object_set(reply, "id", id) != 0) {
		json_decref(reply);
		reply = NULL;
	}
	queue_reply(srv, c, reply);
	json_decref(reply);
	json_decref(req);
spent:
	if (heavy)
		srv->heavy_spent_ns += now_ns() - t0;
	return true;
}

static void to_backlog(struct mlv_ctl_server *srv, struct client *c)
{
	if (!c->in_backlog) {
		TAILQ_INSERT_TAIL(&srv->backlog, c, backlog_link);
		c->in_backlog = true;
	}
}

/* Answer complete lines, one at a time: the next only once the previous
 * reply has gone out, at most MLV_CTL_LINES_PER_TURN per call. */
static void run_lines(struct mlv_ctl_server *srv, struct client *c)
{
	uint32_t budget = MLV_CTL_LINES_PER_TURN;

	while (c->in && !c->dead && !out_pending(c) && !c->deferring &&
	       !c->close_after_flush) {
		char *start = c->in + c->in_off;
		char *nl = memchr(c->in + c->in_scan, '\n', c->in_len - c->in_scan);

		if (!nl) {
			c->in_scan = c->in_len;
			if (c->in_len - c->in_off > srv->line_max) {
				srv->st.oversized++;
				c->read_closed = true;
				c->close_after_flush = true;
				c->in_off = c->in_scan = c->in_len = 0;
				char msg[96];

				snprintf(msg, sizeof(msg),
					 "request line longer than %u bytes",
					 srv->line_max);
				error_reply(srv, c, msg);
				flush(srv, c);
			}
			break;
		}
		if (budget == 0) {
			to_backlog(srv, c);
			break;
		}
		c->heavy_waiting = !handle_line(srv, c, start,
						(size_t)(nl - start));
		if (c->heavy_waiting) {
			to_backlog(srv, c);
			break;
		}
		budget--;
		if (!c->dead)
			c->in_off = c->in_scan = (size_t)(nl + 1 - c->in);
		if (!c->dead)
			flush(srv, c);
	}
	if (!c->dead && c->in && c->in_off == c->in_len) {
		c->in_off = c->in_scan = c->in_len = 0;
		/* one long request must not pin its buffer (an output
		 * buffer is freed once flushed, for the output budget) */
		if (c->in_cap > IN_KEEP) {
			free(c->in);
			c->in = NULL;
			c->in_cap = 0;
		}
	}
}

/* One recv: level-triggered epoll brings us back for the rest, which
 * keeps one busy client from starving the others. */
static void read_some(struct mlv_ctl_server *srv, struct client *c)
{
	size_t room;
	ssize_t n;

	if (c->in_off) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_scan -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len == c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap * 2 : IN_INITIAL;
		char *p;

		if (cap > (size_t)srv->line_max + 1)
			cap = (size_t)srv->line_max + 1;
		p = realloc(c->in, cap);
		if (!p) {
			srv->st.disconnects++;
			drop(srv, c);
			return;
		}
		c->in = p;
		c->in_cap = cap;
	}
	room = c->in_cap - c->in_len;
	n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
	if (n > 0) {
		c->in_len += (size_t)n;
		c->last_progress_ms = now_ms();
	} else if (n == 0) {
		/* EOF: a trailing line without '\n' is half a request */
		char *last = memrchr(c->in + c->in_off, '\n', c->in_len - c->in_off);
		size_t keep = last ? (size_t)(last + 1 - c->in) : c->in_off;

		if (keep != c->in_len)
			srv->st.half_requests++;
		c->in_len = keep;
		if (c->in_scan > keep)
			c->in_scan = keep;
		c->read_closed = true;
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		srv->st.disconnects++;      /* ECONNRESET and friends */
		drop(srv, c);
	}
}

static void client_event(struct mlv_ctl_server *srv, struct client *c,
			 uint32_t ev)
{
	if (c->dead)
		return;
	/* a peer gone both ways while its reply is being made cannot
	 * take it; epoll reports the hang-up even with no events asked */
	if ((ev & EPOLLERR) || (c->deferring && (ev & EPOLLHUP))) {
		srv->st.disconnects++;
		drop(srv, c);
		return;
	}
	if (out_pending(c) && (ev & (EPOLLOUT | EPOLLHUP)))
		flush(srv, c);
	else if ((c->events & EPOLLIN) && (ev & (EPOLLIN | EPOLLHUP)))
		read_some(srv, c);
	if (c->dead)
		return;
	if (!c->in_backlog)
		run_lines(srv, c);
	settle(srv, c);
}

/* ---- accepting ---- */

/* The peer's level, from its credentials at connect time: admin for uid
 * 0 and for members (primary or supplementary) of admin_gid. A peer whose
 * credentials cannot be read is read-only. */
static void peer_level(struct mlv_ctl_server *srv, struct client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t groups[256];
	socklen_t glen = sizeof(groups);

	c->peer.admin = false;
	c->peer.uid = UINT32_MAX;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return;
	c->peer.uid = cred.uid;
	if (cred.uid == 0 || !srv->mutates) {
		c->peer.admin = true;
		return;
	}
	if (srv->admin_gid == 0)
		return;
	if (cred.gid == (gid_t)srv->admin_gid) {
		c->peer.admin = true;
		return;
	}
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) != 0)
		return;   /* more than 256 groups, or none readable: read-only */
	for (size_t i = 0; i < glen / sizeof(gid_t); i++)
		if (groups[i] == (gid_t)srv->admin_gid)
			c->peer.admin = true;
}

static void accept_clients(struct mlv_ctl_server *srv)
{
	for (int i = 0; i < ACCEPTS_PER_CALL; i++) {
		int fd = accept4(srv->lis.fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if ((errno == EMFILE || errno == ENFILE) &&
			    srv->spare_fd >= 0) {
				/* out of fds: the pending connection would keep
				 * the listener readable forever; take it with the
				 * spare fd and close it */
				close(srv->spare_fd);
				fd = accept(srv->lis.fd, NULL, NULL);
				if (fd >= 0)
					close(fd);
				srv->spare_fd = open("/dev/null",
						     O_RDONLY | O_CLOEXEC);
				srv->st.refused_full++;
			}
			return;
		}
		struct client *c = calloc(1, sizeof(*c));
		struct epoll_event ev = { .events = EPOLLIN };

		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		peer_level(srv, c);
		/* full: only admin peers, in the slots kept for them */
		if (srv->st.clients >= srv->max_clients &&
		    (!c->peer.admin || srv->st.clients >=
		     srv->max_clients + MLV_CTL_ADMIN_RESERVE)) {
			srv->st.refused_full++;
			(void)send(fd, full_reply, sizeof(full_reply) - 1,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			free(c);
			continue;
		}
		c->events = EPOLLIN;
		c->last_progress_ms = now_ms();
		ev.data.ptr = c;
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		TAILQ_INSERT_TAIL(&srv->clients, c, link);
		srv->st.clients++;
		srv->st.accepted++;
	}
}

/* ---- deferred replies ---- */

/* Poll the deferred replies, oldest first; send those that are done
 * and go on with their clients' next requests. Heavy ones (dumps built
 * in steps) share one slice per call, the oldest polled until it is
 * done or the slice is spent: one dump grows at a time. */
static void poll_deferred(struct mlv_ctl_server *srv)
{
	uint64_t expirations, now = now_ms(), spent = 0;
	struct client *c, *next;

	if (read(srv->defer_fd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		return;
	for (c = TAILQ_FIRST(&srv->deferred); c; c = next) {
		struct mlv_ctl_member m, *mp = NULL;
		json_t *reply = NULL;
		uint64_t shed = srv->st.shed;
		bool done;

		next = TAILQ_NEXT(c, defer_link);
		if (c->def_heavy && spent >= HEAVY_SLICE_NS)
			continue;
		do {
			uint64_t t0 = c->def_heavy ? now_ns() : 0;

			done = c->def.poll(c->def.arg,
					   now >= c->def_deadline_ms, &reply);
			if (c->def_heavy)
				spent += now_ns() - t0;
		} while (!done && c->def.progress && c->def_heavy &&
			 spent < HEAVY_SLICE_NS);
		if (!done)
			continue;
		if (reply && c->def_id &&
		    json_object_set(reply, "id", c->def_id) != 0) {
			json_decref(reply);
			reply = NULL;
		}
		if (reply && c->def.member && c->def.member(c->def.arg, &m))
			mp = &m;
		queue_reply_with(srv, c, reply, mp);
		json_decref(reply);
		end_deferral(srv, c);
		if (!c->dead)
			flush(srv, c);
		/* the budget of the call that deferred it is spent: the
		 * client's next lines wait for the backlog turn */
		if (!c->dead && has_line(c))
			to_backlog(srv, c);
		settle(srv, c);
		/* shedding for this reply may have taken next off the list */
		if (srv->st.shed != shed)
			next = TAILQ_FIRST(&srv->deferred);
	}
}

/* ---- stall timer ---- */

static void check_stalls(struct mlv_ctl_server *srv)
{
	uint64_t expirations, now = now_ms();
	struct client *c, *next;

	if (read(srv->timer_fd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		return;
	for (c = TAILQ_FIRST(&srv->clients); c; c = next) {
		next = TAILQ_NEXT(c, link);
		if ((waiting(c) && now - c->last_progress_ms >= srv->stall_ms) ||
		    (out_pending(c) &&
		     now - c->out_since_ms >= srv->reply_deadline_ms)) {
			/* a reader that takes a little now and then would
			 * hold its share of the budget for ever: a reply is
			 * read whole by its deadline, or dropped */
			srv->st.stalled++;
			drop(srv, c);
		} else if (idle(c) &&
			   now - c->last_progress_ms >= srv->idle_ms) {
			srv->st.idle_closed++;
			drop(srv, c);
		}
	}
}

/* ---- public ---- */

static enum mlv_err add_fd(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? MLV_OK : MLV_E_IO;
}

enum mlv_err mlv_ctl_server_create(const struct mlv_ctl_server_params *p,
				   struct mlv_ctl_server **out,
				   char *err, size_t err_len)
{
	struct mlv_ctl_server *srv;
	char dummy[8];
	enum mlv_err rc;

	if (!err) {
		err = dummy;
		err_len = sizeof(dummy);
	}
	if (!p || !out || !p->handle) {
		snprintf(err, err_len, "control server: missing parameters");
		return MLV_E_INVAL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, err_len, "control server: out of memory");
		return MLV_E_NOMEM;
	}
	srv->epfd = srv->timer_fd = srv->backlog_fd = srv->spare_fd = -1;
	srv->defer_fd = -1;
	srv->lis.fd = srv->lis.lock_fd = srv->lis.dir_fd = -1;
	srv->handle = p->handle;
	srv->ctx = p->ctx;
	srv->mutates = p->mutates;
	srv->admin_gid = p->admin_gid;
	srv->max_clients = p->max_clients ? p->max_clients : MLV_CTL_DEFAULT_MAX_CLIENTS;
	srv->line_max = p->line_max ? p->line_max : MLV_CTL_DEFAULT_LINE_MAX;
	srv->reply_max = p->reply_max ? p->reply_max : MLV_CTL_DEFAULT_REPLY_MAX;
	srv->stall_ms = p->stall_timeout_ms ? p->stall_timeout_ms : MLV_CTL_DEFAULT_STALL_MS;
	srv->idle_ms = p->idle_timeout_ms ? p->idle_timeout_ms : MLV_CTL_DEFAULT_IDLE_MS;
	srv->reply_deadline_ms = p->reply_deadline_ms ? p->reply_deadline_ms :
				 MLV_CTL_DEFAULT_REPLY_DEADLINE_MS;
	srv->out_total_max = p->out_total_max ? p->out_total_max :
			     MLV_CTL_DEFAULT_OUT_TOTAL;
	/* a reply never needs more than the whole budget */
	if (srv->reply_max > srv->out_total_max)
		srv->reply_max = (uint32_t)srv->out_total_max;
	srv->heavy = p->heavy;
	TAILQ_INIT(&srv->clients);
	TAILQ_INIT(&srv->backlog);
	TAILQ_INIT(&srv->deferred);
	TAILQ_INIT(&srv->graveyard);

	rc = mlv_ctl_listen(p->path, p->mode, p->socket_gid, &srv->lis, err,
			    err_len);
	if (rc != MLV_OK)
		goto fail;
	rc = MLV_E_IO;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	srv->backlog_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	srv->defer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (srv->epfd < 0 || srv->timer_fd < 0 || srv->backlog_fd < 0 ||
	    srv->defer_fd < 0 || srv->spare_fd < 0) {
		snprintf(err, err_len, "control server: %s", strerror(errno));
		goto fail;
	}
	if (add_fd(srv->epfd, srv->lis.fd, &srv->lis) != MLV_OK ||
	    add_fd(srv->epfd, srv->timer_fd, &srv->timer_fd) != MLV_OK ||
	    add_fd(srv->epfd, srv->backlog_fd, &srv->backlog_fd) != MLV_OK ||
	    add_fd(srv->epfd, srv->defer_fd, &srv->defer_fd) != MLV_OK) {
		snprintf(err, err_len, "control server: epoll_ctl: %s",
			 strerror(errno));
		goto fail;
	}
	*out = srv;
	return MLV_OK;
fail:
	mlv_ctl_server_destroy(srv);
	return rc;
}

int mlv_ctl_fd(const struct mlv_ctl_server *srv)
{
	return srv->epfd;
}

enum mlv_err mlv_ctl_process(struct mlv_ctl_server *srv)
{
	struct epoll_event ev[EVENTS_PER_CALL];
	/* backlog entries queued before this call get a turn after the
	 * events; those queued during it wait for the next call */
	uint32_t turns = 0;
	struct client *c;
	int n;

	/* heavy requests put off before take this call's slice first, in
	 * their order: the events' heavy requests wait behind them */
	srv->heavy_spent_ns = 0;
	TAILQ_FOREACH(c, &srv->backlog, backlog_link) {
		turns++;
		if (c->heavy_waiting)
			srv->heavy_spent_ns = UINT64_MAX;
	}
	n = epoll_wait(srv->epfd, ev, EVENTS_PER_CALL, 0);
	if (n < 0 && errno != EINTR)
		return MLV_E_IO;
	for (int i = 0; i < n; i++) {
		void *tag = ev[i].data.ptr;

		if (tag == &srv->lis)
			accept_clients(srv);
		else if (tag == &srv->timer_fd)
			check_stalls(srv);
		else if (tag == &srv->backlog_fd || tag == &srv->defer_fd)
			;                   /* handled below */
		else
			client_event(srv, tag, ev[i].events);
	}
	if (srv->heavy_spent_ns == UINT64_MAX)
		srv->heavy_spent_ns = 0;
	while (turns-- && (c = TAILQ_FIRST(&srv->backlog))) {
		TAILQ_REMOVE(&srv->backlog, c, backlog_link);
		c->in_backlog = false;
		run_lines(srv, c);
		settle(srv, c);
	}
	/* every call, not only on a tick: the answer may be there already */
	poll_deferred(srv);
	arm_defer_timer(srv);
	signal_backlog(srv);
	/* tick often only while someone may stall; while clients are only
	 * idle (a `maglevctl top` between refreshes), at a quarter of the
	 * idle timeout; with no clients, never */
	uint32_t period = 0;

	TAILQ_FOREACH(c, &srv->clients, link) {
		if (waiting(c)) {
			period = (srv->stall_ms < srv->reply_deadline_ms ?
				  srv->stall_ms : srv->reply_deadline_ms) / 4;
			break;
		}
		period = srv->idle_ms / 4;
	}
	arm_timer(srv, period);
	bury(srv);
	return MLV_OK;
}

void mlv_ctl_server_destroy(struct mlv_ctl_server *srv)
{
	struct client *c;

	if (!srv)
		return;
	while ((c = TAILQ_FIRST(&srv->clients)))
		drop(srv, c);
	bury(srv);
	mlv_ctl_unlisten(&srv->lis);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->timer_fd >= 0)
		close(srv->timer_fd);
	if (srv->backlog_fd >= 0)
		close(srv->backlog_fd);
	if (srv->defer_fd >= 0)
		close(srv->defer_fd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	free(srv);
}

void mlv_ctl_server_get_stats(const struct mlv_ctl_server *srv,
			      struct mlv_ctl_server_stats *out)
{
	const struct client *c;

	*out = srv->st;
	out->pending = 0;
	TAILQ_FOREACH(c, &srv->deferred, defer_link)
		out->pending++;
}
