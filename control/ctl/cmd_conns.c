/* SPDX-License-Identifier: BSD-3-Clause */
/* conns: the flows the workers track, like `ipvsadm -Lc` or
 * `conntrack -L`. The tables are the workers' own, so each worker copies
 * a page of its live entries in its housekeeping step (list_post /
 * list_poll, dataplane/worker/worker.h) and the reply waits for the pages
 * (a deferred reply). Bounded three ways: at most `limit` flows, at most
 * MLV_CTL_CONNS_TIMEOUT_MS of paging, and a page never holds more flows
 * than the reply still has room for; the reply's "next" cursor goes on
 * where it stopped. A page holds whole conntrack buckets: with room for
 * fewer flows than a bucket may hold, it asks for one bucket's and
 * takes what fits, the cursor then naming how many of that page's flows
 * were listed. */
#include "control/ctl/commands_internal.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/base/addr.h"

#define CONNS_DEFAULT_LIMIT 100u

/* A conns reply waiting for the workers' pages. */
struct conns_wait {
	struct mlv_ctl_state *st;
	char vip[MLV_NAME_MAX];       /* filters; "" = any */
	char backend[MLV_NAME_MAX];
	uint64_t limit;
	uint32_t worker;              /* the page being read: worker, bucket, */
	uint32_t bucket;
	uint32_t skip;                /* and its flows listed already */
	bool posted;
	uint64_t scanned;             /* flows seen, before the filters */
	struct mlv_ctl_text conns;    /* the reply's "conns" */
	bool closed;                  /* conns complete: the reply has it */
};

/* "W:B" or "W:B:K" (worker, bucket, flows of that page listed): where
 * a listing goes on. */
static bool parse_cursor(const char *s, uint32_t *worker, uint32_t *bucket,
			 uint32_t *skip)
{
	unsigned long v[3] = { 0, 0, 0 };
	int i = 0;
	char *end;

	if (!s)
		return false;
	for (;;) {
		if (*s < '0' || *s > '9')
			return false;
		v[i] = strtoul(s, &end, 10);
		if (v[i] > UINT32_MAX)
			return false;
		if (*end == '\0')
			break;
		if (*end != ':' || ++i == 3)
			return false;
		s = end + 1;
	}
	if (i == 0 || v[2] >= MLV_LIST_PAGE_MAX)
		return false;
	*worker = (uint32_t)v[0];
	*bucket = (uint32_t)v[1];
	*skip = (uint32_t)v[2];
	return true;
}

/* "addr:port", or the address alone for a port-less flow. An IPv6
 * entry keeps its key as a fingerprint and only the client address's
 * last 32 bits (dataplane/packet/conntrack.h), shown as the address's
 * last two groups after "*" ("*:0:101" for fd00:99::101); its VIP side
 * is the VIP's own address and port when the flow's VIP is known
 * ("[2001:db8::10]:80"), else "*". */
static void endpoint(char *buf, size_t len, const struct mlv_ct_view *v,
		     const uint8_t addr[4], uint16_t port_be, bool client,
		     const struct mlv_gen_vip *vip)
{
	char a[MLV_IP_STRLEN];

	if (v->family == 6 && client) {
		snprintf(buf, len, "*:%x:%x", addr[0] << 8 | addr[1],
			 addr[2] << 8 | addr[3]);
		return;
	}
	if (v->family == 6) {
		if (!vip || vip->family != 6) {
			snprintf(buf, len, "*");
		} else if (mlv_gen_vip_one_port(vip)) {
			snprintf(buf, len, "[%s]:%u",
				 mlv_ctl_vip_addr(vip, a, sizeof(a)),
				 ntohs(vip->port_be));
		} else {
			snprintf(buf, len, "%s",
				 mlv_ctl_vip_addr(vip, a, sizeof(a)));
		}
		return;
	}
	inet_ntop(AF_INET, addr, a, sizeof(a));
	if (v->ports)
		snprintf(buf, len, "%s:%u", a, ntohs(port_be));
	else
		snprintf(buf, len, "%s", a);
}

/* The VIP an IPv4 flow is addressed to, by its key (for a flow whose
 * backend has left the generation). */
static const struct mlv_gen_vip *vip_by_key(const struct mlv_generation *gen,
					    const struct mlv_ct_view *v)
{
	struct mlv_flow_key k;

	if (!gen || v->family != 4)
		return NULL;
	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = v->proto;
	memcpy(k.src, v->src, 4);
	memcpy(k.dst, v->dst, 4);
	k.sport = v->sport;
	k.dport = v->dport;
	return mlv_gen_find_vip(gen, &k, !v->ports);
}

/* Append e (copied by `worker` at its clock now_ms) if it passes the
 * filters; false on OOM. */
static bool add_conn(struct conns_wait *cw, const struct mlv_ctl_conn_page *pg,
		     const struct mlv_ct_entry *e)
{
	const struct mlv_generation *gen = mlv_ctl_gen(cw->st);
	const struct mlv_gen_backend *b =
		gen ? mlv_gen_find_backend_uid(gen, e->backend_uid) : NULL;
	const struct mlv_gen_vip *v = b ? &gen->vips[b->vip_index] : NULL;
	char client[64], vaddr[64];
	uint32_t left = e->expires_ms - pg->now_ms;
	uint32_t timeout = e->state < MLV_CT__NSTATES ?
			   pg->timeout_ms[e->state] : 0;
	struct mlv_ct_view view;
	json_t *o;

	mlv_ct_entry_view(e, &view);
	if (!v)
		v = vip_by_key(gen, &view);
	if ((cw->vip[0] && (!v || strcmp(v->name, cw->vip) != 0)) ||
	    (cw->backend[0] && (!b || strcmp(b->name, cw->backend) != 0)))
		return true;
	endpoint(client, sizeof(client), &view, view.src, view.sport, true,
		 v);
	endpoint(vaddr, sizeof(vaddr), &view, view.dst, view.dport, false,
		 v);
	o = json_pack("{s:I, s:s, s:i, s:s, s:b, s:s?, s:s, s:s?, s:s, s:I, "
		      "s:I}",
		      "worker", (json_int_t)cw->worker,
		      "protocol", mlv_proto_name(view.proto),
		      "family", (int)view.family,
		      "client", client,
		      "client_complete", view.family == 4,
		      "vip", v ? v->name : NULL, "vip_address", vaddr,
		      "backend", b ? b->name : NULL,
		      "state", mlv_ctl_ct_state_name(e->state),
		      "idle_ms", (json_int_t)(timeout > left ? timeout - left : 0),
		      "expires_in_ms", (json_int_t)left);
	return mlv_ctl_text_add(&cw->conns, o) == 0;
}

/* The reply: the flows so far (the "conns" member, conns_member), and
 * the cursor to go on from (null once every worker's table was read). */
static json_t *conns_finish(struct conns_wait *cw, bool done, const char *why)
{
	char next[32];
	json_t *reply;

	if (mlv_ctl_text_close(&cw->conns))
		return NULL;
	cw->closed = true;

	if (cw->skip)
		snprintf(next, sizeof(next), "%" PRIu32 ":%" PRIu32 ":%" PRIu32,
			 cw->worker, cw->bucket, cw->skip);
	else
		snprintf(next, sizeof(next), "%" PRIu32 ":%" PRIu32, cw->worker,
			 cw->bucket);
	reply = json_pack("{s:b, s:I, s:I, s:s?, s:s?}", "ok", 1,
			  "count", (json_int_t)cw->conns.items,
			  "scanned", (json_int_t)cw->scanned,
			  "next", done ? NULL : next, "partial", why);
	return reply;
}

/* mlv_ctl_deferred.poll: one page at a time, worker after worker. */
static bool conns_poll(void *arg, bool expired, json_t **reply)
{
	struct conns_wait *cw = arg;
	struct mlv_ctl_state *st = cw->st;
	struct mlv_ctl_conn_page pg;
	bool done = false;
	enum mlv_err rc;

	for (;;) {
		uint64_t room = cw->limit - cw->conns.items;
		/* one bucket's page when resuming inside one, or when fewer
		 * flows than a bucket's fit */
		bool one_bucket = cw->skip > 0 || room < MLV_CT_WAYS;
		uint32_t take;

		if (cw->worker >= st->n_workers) {
			*reply = conns_finish(cw, true, NULL);
			return true;
		}
		if (room == 0) {
			*reply = conns_finish(cw, false, NULL);
			return true;
		}
		if (!cw->posted) {
			rc = st->list_post(st->ctx, cw, cw->worker, cw->bucket,
					   one_bucket ? MLV_CT_WAYS :
					   room < MLV_LIST_PAGE_MAX ? (uint32_t)room :
					   MLV_LIST_PAGE_MAX);
			if (rc == MLV_E_BUSY)
				break;
			if (rc != MLV_OK)
				goto failed;
			cw->posted = true;
		}
		rc = st->list_poll(st->ctx, cw, cw->worker, &done, &pg);
		if (rc != MLV_OK)
			goto failed;
		if (!done)
			break;
		cw->posted = false;
		/* the page's flows not listed yet, as many as fit */
		take = pg.n > cw->skip ? pg.n - cw->skip : 0;
		if (take > room)
			take = (uint32_t)room;
		cw->scanned += take;
		for (uint32_t i = cw->skip; i < cw->skip + take; i++)
			if (!add_conn(cw, &pg, &pg.e[i])) {
				*reply = NULL;
				return true;
			}
		if (cw->skip + take < pg.n) {
			cw->skip += take;   /* the rest of this page later */
			continue;
		}
		cw->skip = 0;
		if (pg.next == 0) {
			cw->worker++;
			cw->bucket = 0;
		} else {
			cw->bucket = pg.next;
		}
	}
	if (!expired)
		return false;
	*reply = conns_finish(cw, false, "time is up: go on with the cursor");
	return true;
failed:
	*reply = mlv_ctl_fail("workers: %s", mlv_strerror(rc));
	return true;
}

static void conns_release(void *arg)
{
	struct conns_wait *cw = arg;

	if (cw->posted && cw->st->list_cancel)
		cw->st->list_cancel(cw->st->ctx, cw);
	mlv_ctl_text_free(&cw->conns);
	free(cw);
}

static bool conns_member(void *arg, struct mlv_ctl_member *out)
{
	struct conns_wait *cw = arg;

	if (!cw->closed)
		return false;   /* an error reply */
	*out = (struct mlv_ctl_member){ .key = "conns", .text = cw->conns.buf,
					.len = cw->conns.len };
	return true;
}

json_t *mlv_ctl_cmd_conns(struct mlv_ctl_state *st, const json_t *args)
{
	const char *vip = mlv_ctl_arg_str(args, "vip");
	const char *backend = mlv_ctl_arg_str(args, "backend");
	const char *cursor = mlv_ctl_arg_str(args, "cursor");
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	struct conns_wait *cw;
	uint64_t limit = CONNS_DEFAULT_LIMIT;

	if (!st->defer || !st->list_post || !st->list_poll)
		return mlv_ctl_fail("the workers' flows cannot be listed here");
	if (vip && !mlv_gen_find_vip_named(gen, vip))
		return mlv_ctl_fail("no VIP named \"%s\"", vip);
	mlv_ctl_arg_uint(args, "limit", &limit);
	if (limit == 0)
		return mlv_ctl_fail("limit must be at least 1");
	cw = calloc(1, sizeof(*cw));
	if (!cw)
		return NULL;
	cw->st = st;
	cw->limit = limit;
	snprintf(cw->vip, sizeof(cw->vip), "%s", vip ? vip : "");
	snprintf(cw->backend, sizeof(cw->backend), "%s", backend ? backend : "");
	if (cursor && (!parse_cursor(cursor, &cw->worker, &cw->bucket,
				     &cw->skip) ||
		       cw->worker >= st->n_workers)) {
		free(cw);
		return mlv_ctl_fail("bad cursor \"%s\": a \"next\" of an "
				    "earlier conns reply is WORKER:BUCKET or "
				    "WORKER:BUCKET:LISTED", cursor);
	}
	*st->defer = (struct mlv_ctl_deferred){
		.poll = conns_poll, .member = conns_member,
		.release = conns_release, .arg = cw,
		.timeout_ms = MLV_CTL_CONNS_TIMEOUT_MS,
	};
	return NULL;
}
