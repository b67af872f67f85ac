/* SPDX-License-Identifier: BSD-3-Clause */
/* The commands about Maglev tables: table (contents), lookup (where a
 * new flow goes) and whatif (how much a change would move). */
#include "control/ctl/commands_internal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "control/generation/moves.h"
#include "control/generation/second_chance.h"
#include "control/tables/maglev.h"
#include "control/tables/builder.h"
#include "dataplane/packet/flow_hash.h"

/* ---- table ---- */

/* The slot map in steps: priv the reply without "slots", i the next
 * slot of VIP j (its index in the generation). */
static int slots_step(struct mlv_ctl_steps *s)
{
	const struct mlv_gen_vip *v = &s->gen->vips[s->j];
	uint32_t end = v->table_size - s->i > MLV_CTL_STEP_SLOTS ?
		       s->i + MLV_CTL_STEP_SLOTS : v->table_size;

	for (; s->i < end; s->i++) {
		uint16_t b = v->table[s->i];

		if (mlv_ctl_text_add_int(&s->text, b < v->n_backends ? b : -1))
			return -1;
	}
	return s->i == v->table_size;
}

static json_t *slots_finish(struct mlv_ctl_steps *s)
{
	json_t *reply = s->priv;

	s->priv = NULL;
	return reply;
}

static void slots_release(struct mlv_ctl_steps *s)
{
	json_decref(s->priv);
}

static const struct mlv_ctl_steps_kind slots_dump = {
	.key = "slots", .step = slots_step, .finish = slots_finish,
	.release = slots_release,
};

/* Each slot's backend for a new flow and the hops its packets carry
 * (mlv_gen_sc_hops), as [backend, hop...] indices into "backends"; []
 * for a slot no backend takes. priv and i as slots_step. */
static int hops_step(struct mlv_ctl_steps *s)
{
	const struct mlv_gen_vip *v = &s->gen->vips[s->j];
	uint32_t end = v->table_size - s->i > MLV_CTL_STEP_SLOTS ?
		       s->i + MLV_CTL_STEP_SLOTS : v->table_size;

	for (; s->i < end; s->i++) {
		const struct mlv_gen_backend *b = mlv_gen_new_flow_backend(v, s->i);
		const struct mlv_gen_backend *hops[MLV_SC_MAX_HOPS];
		json_t *row = json_array();
		uint32_t n = b ? mlv_gen_sc_hops(v, s->i, b, hops) : 0;

		if (!row || (b && json_array_append_new(row,
					json_integer(b->index)))) {
			json_decref(row);
			return -1;
		}
		for (uint32_t k = 0; k < n; k++) {
			if (json_array_append_new(row,
						  json_integer(hops[k]->index))) {
				json_decref(row);
				return -1;
			}
		}
		if (mlv_ctl_text_add(&s->text, row))
			return -1;
	}
	return s->i == v->table_size;
}

static const struct mlv_ctl_steps_kind hops_dump = {
	.key = "hops", .step = hops_step, .finish = slots_finish,
	.release = slots_release,
};

/* The VIP's second chance, or JSON null without it: its window, the
 * slots that carry a previous owner and how long they still do. */
static json_t *second_chance_json(const struct mlv_gen_vip *v)
{
	if (!v->second_chance)
		return json_null();
	return json_pack("{s:I, s:I, s:I}",
			 "window_ms", (json_int_t)v->sc_window_ms,
			 "previous_slots",
			 (json_int_t)mlv_gen_sc_previous_slots(v),
			 "window_left_ms", (json_int_t)mlv_gen_sc_window_left_ms(
				 v, mlv_gen_sc_now_ms()));
}

json_t *mlv_ctl_cmd_table(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen;
	const struct mlv_gen_vip *v;
	json_t *reply = NULL, *backends;
	uint32_t *slots;

	v = mlv_ctl_need_vip(st, args, &gen, &reply);
	if (!v)
		return reply;
	slots = mlv_ctl_count_slots(v);
	if (!slots)
		return NULL;
	backends = json_array();
	for (uint32_t i = 0; backends && i < v->n_backends; i++)
		if (json_array_append_new(backends, json_pack("{s:s, s:I, s:f}",
				"name", v->backends[i].name,
				"slots", (json_int_t)slots[i],
				"share", (double)slots[i] / v->table_size))) {
			json_decref(backends);
			backends = NULL;
		}
	if (mlv_ctl_arg_flag(args, "hops") && !v->second_chance) {
		free(slots);
		json_decref(backends);
		return mlv_ctl_fail("VIP \"%s\" has no second_chance: its packets carry no hops",
				    v->name);
	}
	if (mlv_ctl_arg_flag(args, "hops") && mlv_ctl_arg_flag(args, "dump")) {
		free(slots);
		json_decref(backends);
		return mlv_ctl_fail("hops lists each slot's backend too: ask for hops or dump, not both");
	}
	reply = json_pack("{s:b, s:s, s:I, s:s, s:f, s:I, s:o, s:o, s:I, s:o}", "ok", 1,
			  "vip", v->name, "generation", (json_int_t)gen->number,
			  "table", mlv_table_kind_name(v->table_kind),
			  "max_load", v->max_load,
			  "table_size", (json_int_t)v->table_size,
			  "fingerprint", mlv_ctl_fingerprint(v->fingerprint),
			  "backends", backends,
			  "unassigned", (json_int_t)slots[v->n_backends],
			  "second_chance", second_chance_json(v));
	free(slots);
	if (reply && mlv_ctl_arg_flag(args, "hops"))
		return mlv_ctl_run_steps(st, &hops_dump, reply,
					 (uint32_t)(v - gen->vips));
	if (!reply || !mlv_ctl_arg_flag(args, "dump"))
		return reply;
	/* the map holds indices into "backends", -1 for no backend */
	return mlv_ctl_run_steps(st, &slots_dump, reply,
				 (uint32_t)(v - gen->vips));
}

/* ---- lookup ---- */

/* A lookup waiting for the workers (a deferred reply). */
struct lookup_wait {
	struct mlv_ctl_state *st;
	json_t *reply;           /* everything but "tracked" */
	struct mlv_flow_key key;
	uint32_t hash;
	bool posted;             /* ticket is outstanding */
	uint64_t ticket;
};

/* What the workers said, the backend named through the current
 * generation: a uid it no longer has (a backend removed since) is null. */
static json_t *tracked_json(const struct mlv_ctl_state *st,
			    const struct mlv_ctl_tracked *t)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	const struct mlv_gen_backend *b;

	if (!t->found)
		return json_false();
	b = gen ? mlv_gen_find_backend_uid(gen, t->backend_uid) : NULL;
	return json_pack("{s:I, s:s?, s:s, s:I}",
			 "worker", (json_int_t)t->worker,
			 "backend", b ? b->name : NULL,
			 "state", mlv_ctl_ct_state_name(t->state),
			 "expires_in_ms", (json_int_t)t->expires_in_ms);
}

/* Complete the reply with tracked (stolen; NULL: out of memory) and,
 * if error is not NULL, "tracked_error". */
static json_t *lookup_finish(struct lookup_wait *lw, json_t *tracked,
			     const char *error)
{
	json_t *reply = lw->reply;

	lw->reply = NULL;
	if (!tracked || json_object_set_new(reply, "tracked", tracked) ||
	    (error && json_object_set_new(reply, "tracked_error",
					  json_string(error)))) {
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/* mlv_ctl_deferred.poll: post the question once the workers' mailboxes
 * are free, then wait for every answer or the deadline. */
static bool lookup_poll(void *arg, bool expired, json_t **reply)
{
	struct lookup_wait *lw = arg;
	struct mlv_ctl_state *st = lw->st;
	struct mlv_ctl_tracked t = { 0 };
	bool done = false;
	enum mlv_err rc;

	if (!lw->posted) {
		rc = st->track_post(st->ctx, &lw->key, lw->hash, &lw->ticket);
		if (rc == MLV_OK)
			lw->posted = true;
		else if (rc != MLV_E_BUSY)
			goto failed;
	}
	if (lw->posted) {
		rc = st->track_poll(st->ctx, lw->ticket, &done, &t);
		if (rc != MLV_OK)
			goto failed;
		if (done) {
			lw->posted = false;
			*reply = lookup_finish(lw, tracked_json(st, &t), NULL);
			return true;
		}
	}
	if (!expired)
		return false;
	*reply = lookup_finish(lw, json_null(), "workers did not answer");
	return true;
failed:
	*reply = lookup_finish(lw, json_null(), mlv_strerror(rc));
	return true;
}

/* mlv_ctl_deferred.release */
static void lookup_release(void *arg)
{
	struct lookup_wait *lw = arg;

	if (lw->posted && lw->st->track_cancel)
		lw->st->track_cancel(lw->st->ctx, lw->ticket);
	json_decref(lw->reply);
	free(lw);
}

/* Defer the reply until the workers say whether they track key; without
 * the means to ask, reply at once with "tracked": null. */
static json_t *lookup_tracked(struct mlv_ctl_state *st, json_t *reply,
			      const struct mlv_flow_key *key, uint32_t hash)
{
	struct lookup_wait *lw;

	if (!reply)
		return NULL;
	if (!st->defer || !st->track_post || !st->track_poll) {
		if (json_object_set_new(reply, "tracked", json_null())) {
			json_decref(reply);
			return NULL;
		}
		return reply;
	}
	lw = calloc(1, sizeof(*lw));
	if (!lw) {
		json_decref(reply);
		return NULL;
	}
	*lw = (struct lookup_wait){ .st = st, .reply = reply, .key = *key,
				    .hash = hash };
	*st->defer = (struct mlv_ctl_deferred){
		.poll = lookup_poll, .release = lookup_release, .arg = lw,
		.timeout_ms = MLV_CTL_TRACK_TIMEOUT_MS,
	};
	return NULL;
}

json_t *mlv_ctl_cmd_lookup(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen;
	const struct mlv_gen_vip *v, *taker;
	const struct mlv_gen_backend *b = NULL;
	const char *src = mlv_ctl_arg_str(args, "src");
	struct mlv_flow_key key;
	struct mlv_ip ip;
	json_t *reply = NULL;
	char src_text[MLV_IP_STRLEN], be_text[MLV_IP_STRLEN];
	uint64_t sport = 0, dport;
	uint32_t hash, slot;

	v = mlv_ctl_need_vip(st, args, &gen, &reply);
	if (!v)
		return reply;
	if (!mlv_ip_parse(src, &ip))
		return mlv_ctl_fail("\"%s\" is not an IPv4 or IPv6 address", src);
	if (ip.family != v->family)
		return mlv_ctl_fail("VIP \"%s\" is IPv%u; %s is not", v->name,
				    v->family, src);
	mlv_ctl_arg_uint(args, "sport", &sport);
	dport = ntohs(v->port_be);
	mlv_ctl_arg_uint(args, "dport", &dport);
	if (dport < ntohs(v->port_be) || dport > v->port_last)
		return mlv_ctl_fail("VIP \"%s\" does not take port %u",
				    v->name, (unsigned)dport);

	/* The key exactly as the parser builds it for a packet from
	 * src:sport to the VIP (dataplane/packet/flow_key.h): IPv4 in bytes 0..3,
	 * the rest zero; ports in network byte order. */
	memset(&key, 0, sizeof(key));
	memcpy(key.src, ip.bytes, sizeof(key.src));
	memcpy(key.dst, v->address, sizeof(key.dst));
	key.sport = htons((uint16_t)sport);
	key.dport = htons((uint16_t)dport);
	key.proto = v->protocol;
	key.family = v->family;
	/* a port of a range or `any` VIP that a more specific VIP on the
	 * address takes is that VIP's: say so rather than answer for v */
	taker = mlv_gen_find_vip(gen, &key, false);
	if (taker != v)
		return mlv_ctl_fail("port %u goes to VIP \"%s\", not \"%s\"",
				    (unsigned)dport, taker ? taker->name : "?",
				    v->name);
	hash = mlv_flow_hash(&key);
	/* the slot from the VIP's hash fields; conntrack keeps the whole
	 * key's hash (lookup_tracked) */
	slot = mlv_gen_slot_hash(v, &key, false, hash) % v->table_size;
	if (v->table[slot] < v->n_backends)
		b = &v->backends[v->table[slot]];
	return lookup_tracked(st, json_pack(
			 "{s:b, s:s, s:s, s:I, s:I, s:I, s:s?, s:s?}",
			 "ok", 1, "vip", v->name,
			 "src", mlv_ip_format(&ip, src_text, sizeof(src_text)),
			 "sport", (json_int_t)sport,
			 "hash", (json_int_t)hash, "slot", (json_int_t)slot,
			 "backend", b ? b->name : NULL,
			 "address", b ? mlv_ip_format(&b->address, be_text,
						      sizeof(be_text)) : NULL),
			 &key, hash);
}

/* ---- whatif ---- */

/* The VIP's backends (effective weights) with `name` removed, or added
 * with `weight`, sorted by name as the generation builder sorts them.
 * from_old[j] is the index in vip->backends of new backend j, or ADDED
 * for the added one. */
#define ADDED UINT32_MAX
static uint32_t changed_set(const struct mlv_gen_vip *v, bool add,
			    const char *name, uint32_t weight,
			    struct mlv_table_backend *out, uint32_t *from_old)
{
	uint32_t n = 0;
	bool placed = !add;

	for (uint32_t i = 0; i < v->n_backends; i++) {
		const struct mlv_gen_backend *b = &v->backends[i];

		if (!placed && strcmp(name, b->name) < 0) {
			out[n] = (struct mlv_table_backend){ name, weight, false };
			from_old[n++] = ADDED;
			placed = true;
		}
		if (!add && strcmp(name, b->name) == 0)
			continue;
		out[n] = (struct mlv_table_backend){ b->name, b->weight,
						     b->no_second };
		from_old[n++] = (uint16_t)i;
	}
	if (!placed) {
		out[n] = (struct mlv_table_backend){ name, weight, false };
		from_old[n++] = ADDED;
	}
	return n;
}

/* How many of the VIP's tracked connections the change would move, and
 * how many it would leave at risk. Conntrack pins a tracked flow to its
 * backend while that backend stays usable, so adding a backend moves none
 * (only new flows see the new table) and removing one moves exactly its
 * own flows (they are re-selected). But a pinned flow whose slot changes
 * owner is pinned by this instance only: moved to another instance (a
 * restart without the flows file, a routing change) it goes to the new
 * owner, unless second chance hands it on (mlv_gen_tracked_at_risk, from
 * kept[s]: slot s keeps its owner). Counts are the generation's racy
 * active counts (mlv_gen_backend_tracked); the total is summed from the
 * same reads so the fraction never exceeds 1. */
static json_t *tracked_moves(const struct mlv_generation *gen,
			     const struct mlv_gen_vip *v, bool add,
			     const char *name, const uint8_t *kept)
{
	uint64_t total = 0, moved = 0, risk;
	bool *leaves = calloc((size_t)v->n_backends + 1, sizeof(*leaves));

	if (!leaves)
		return NULL;
	for (uint32_t i = 0; i < v->n_backends; i++) {
		uint64_t a = mlv_gen_backend_tracked(gen, &v->backends[i]);

		total += a;
		leaves[i] = !v->backends[i].usable;
		if (!add && strcmp(v->backends[i].name, name) == 0) {
			moved = a;
			leaves[i] = true;
		}
	}
	risk = mlv_gen_tracked_at_risk(gen, v, kept, leaves);
	free(leaves);
	return json_pack("{s:I, s:I, s:f, s:I, s:b, s:s, s:s}",
			 "connections", (json_int_t)total,
			 "moved", (json_int_t)moved,
			 "fraction_moved", total ? (double)moved / total : 0.0,
			 "at_risk_if_moved", (json_int_t)risk,
			 "second_chance", v->second_chance,
			 "explanation", add ?
			 "tracked connections stay pinned to their backends by "
			 "conntrack; only new flows use the new table" :
			 "the removed backend's tracked connections are "
			 "re-selected; every other tracked connection stays "
			 "pinned by conntrack",
			 "at_risk_explanation", v->second_chance ?
			 "pinned by this instance only; moved to another "
			 "instance they reach their backends through second "
			 "chance's hops" :
			 "pinned by this instance only; moved to another "
			 "instance (a restart without the flows file, a routing "
			 "change) they go to the new owner and reset: the VIP "
			 "has no second chance");
}

json_t *mlv_ctl_cmd_whatif(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen;
	const struct mlv_gen_vip *v;
	const char *action = mlv_ctl_arg_str(args, "action");
	const char *name = mlv_ctl_arg_str(args, "backend");
	bool add = strcmp(action, "add") == 0;
	struct mlv_table_backend *set = NULL;
	struct mlv_table_spec spec;
	uint32_t *from_old = NULL;
	uint16_t *slots = NULL;
	uint8_t *kept = NULL;
	uint64_t weight = 100;     /* the config's default backend weight */
	uint32_t n, moved = 0, own = 0;
	json_t *reply = NULL, *tracked;
	enum mlv_err rc;

	v = mlv_ctl_need_vip(st, args, &gen, &reply);
	if (!v)
		return reply;
	if (add && mlv_gen_find_backend_named(v, name))
		return mlv_ctl_fail("VIP \"%s\" already has a backend \"%s\"",
				    v->name, name);
	if (!add && !mlv_gen_find_backend_named(v, name))
		return mlv_ctl_fail("VIP \"%s\" has no backend \"%s\"", v->name, name);
	if (mlv_ctl_arg_uint(args, "weight", &weight) && !add)
		return mlv_ctl_fail("a weight only goes with add");
	if (add && v->n_backends >= MLV_MAGLEV_MAX_BACKENDS)
		return mlv_ctl_fail("VIP \"%s\" cannot take another backend", v->name);

	set = calloc((size_t)v->n_backends + 1, sizeof(*set));
	from_old = calloc((size_t)v->n_backends + 1, sizeof(*from_old));
	slots = malloc((size_t)v->table_size * sizeof(*slots));
	kept = calloc((size_t)v->table_size + 1, sizeof(*kept));
	if (!set || !from_old || !slots || !kept)
		goto out;
	n = changed_set(v, add, name, (uint32_t)weight, set, from_old);
	/* the VIP's own builder: whatif answers for the table it would get */
	spec = (struct mlv_table_spec){ .kind = v->table_kind,
					.size = v->table_size,
					.vnodes = v->vnodes };
	rc = mlv_table_build(&spec, set, n, slots, NULL, NULL);
	if (rc != MLV_OK) {
		reply = rc == MLV_E_NOMEM ? NULL :
			mlv_ctl_fail("cannot build the table: %s", mlv_strerror(rc));
		goto out;
	}
	for (uint32_t i = 0; i < v->table_size; i++) {
		/* both sides as indices into vip->backends: the old table's
		 * own, the new one's mapped back; an unassigned slot is
		 * MLV_MAGLEV_NO_BACKEND on both, the added backend ADDED */
		uint32_t after = slots[i] == MLV_MAGLEV_NO_BACKEND ?
				 MLV_MAGLEV_NO_BACKEND : from_old[slots[i]];
		uint32_t before = v->table[i];

		if (after != before)
			moved++;
		kept[i] = after == before;
		/* the slots the changed backend owns: before for a removal,
		 * after for an addition; moving just those would be ideal */
		if (add ? after == ADDED
			: (before < v->n_backends &&
			   strcmp(v->backends[before].name, name) == 0))
			own++;
	}
	tracked = tracked_moves(gen, v, add, name, kept);
	if (!tracked)
		goto out;
	reply = json_pack("{s:b, s:s, s:s, s:s, s:s, s:I, s:I, s:f, s:I, s:f, s:o, s:o}",
			  "ok", 1, "vip", v->name, "action", action,
			  "table", mlv_table_kind_name(v->table_kind),
			  "backend", name, "table_size", (json_int_t)v->table_size,
			  "slots_moved", (json_int_t)moved,
			  "fraction_moved", (double)moved / v->table_size,
			  "backend_slots", (json_int_t)own,
			  "minimum_fraction", (double)own / v->table_size,
			  "weight", add ? json_integer((json_int_t)weight) :
			  json_null(),
			  "tracked", tracked);
out:
	free(set);
	free(from_old);
	free(slots);
	free(kept);
	return reply;
}
