/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-packet look-ups of a generation (view.h): the VIP of a flow
 * key, the slot hash, a backend or VIP by uid. */
#include "dataplane/view/view.h"

#include <arpa/inet.h>
#include <string.h>

#include "dataplane/packet/flow_hash.h"

/* The exact table missed: a range holding the port, else `any`. Out of
 * line: a worker comes here on a memo miss for a VIP of more than one
 * port, or for traffic to no VIP. */
__attribute__((noinline)) static const struct mlv_gen_vip *
find_wild(const struct mlv_generation *gen, struct mlv_gen_vip_key *k)
{
	const struct mlv_gen_lookup *l = gen->lookup;
	uint16_t port = ntohs(k->port_be);
	uint32_t v;

	k->port_be = 0;
	v = mlv_gen_port_maps_find(&l->port_maps, k, port);
	return v == MLV_GEN_INDEX_NONE ? NULL : &gen->vips[v];
}

const struct mlv_gen_vip *mlv_gen_find_vip(const struct mlv_generation *gen,
					   const struct mlv_flow_key *key,
					   bool any_port)
{
	const struct mlv_gen_lookup *l = gen->lookup;
	struct mlv_gen_vip_key k = {
		.port_be = any_port ? 0 : key->dport,
		.proto = key->proto,
		.family = key->family,
	};
	uint32_t v;

	memcpy(k.addr, key->dst, sizeof(k.addr));
	v = mlv_gen_vip_index_find(any_port ? &l->any_port : &l->exact, &k);
	if (__builtin_expect(v != MLV_GEN_INDEX_NONE, 1))
		return &gen->vips[v];
	/* no range or `any` VIP in gen: no call (traffic to no VIP) */
	if (any_port || l->port_maps.n_wild == 0)
		return NULL;
	return find_wild(gen, &k);
}

uint32_t mlv_gen_slot_hash(const struct mlv_gen_vip *vip,
			   const struct mlv_flow_key *key, bool fragment,
			   uint32_t full_hash)
{
	struct mlv_flow_key k;

	if (vip->hash_fields == MLV_HASH_5TUPLE)
		return full_hash;
	k = *key;
	mlv_flow_key_fields(&k, (enum mlv_hash_fields)vip->hash_fields,
			    vip->src_mask6, fragment,
			    mlv_gen_vip_one_port(vip) ?
			    vip->port_be : 0);
	return mlv_flow_hash_inline(&k);
}

const struct mlv_gen_vip *mlv_gen_find_echo_vip(const struct mlv_generation *gen,
						const struct mlv_flow_key *key)
{
	struct mlv_flow_key k = *key;
	const struct mlv_gen_vip *v;

	k.proto = IPPROTO_TCP;
	v = mlv_gen_find_vip(gen, &k, true);
	if (v)
		return v;
	k.proto = IPPROTO_UDP;
	return mlv_gen_find_vip(gen, &k, true);
}

const struct mlv_gen_backend *mlv_gen_find_backend(
	const struct mlv_generation *gen, const struct mlv_gen_vip *vip,
	uint32_t uid)
{
	const struct mlv_gen_backend *b = mlv_gen_find_backend_uid(gen, uid);

	/* Backend uids are per (VIP, backend): a hit elsewhere is a miss. */
	if (!b || b < vip->backends || b >= vip->backends + vip->n_backends)
		return NULL;
	return b;
}

const struct mlv_gen_backend *mlv_gen_find_backend_uid(
	const struct mlv_generation *gen, uint32_t uid)
{
	const struct mlv_gen_lookup *l = gen->lookup;
	uint32_t i = mlv_gen_uid_map_find(&l->backend_uids, uid);

	return i == MLV_GEN_INDEX_NONE ? NULL : &gen->all_backends[i];
}

const struct mlv_gen_vip *mlv_gen_find_vip_uid(const struct mlv_generation *gen,
					       uint32_t uid)
{
	const struct mlv_gen_lookup *l = gen->lookup;
	uint32_t i = mlv_gen_uid_map_find(&l->vip_uids, uid);

	return i == MLV_GEN_INDEX_NONE ? NULL : &gen->vips[i];
}
