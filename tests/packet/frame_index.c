/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/frame_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static const uint8_t *ip_of(const struct frame_index *ix, uint32_t i)
{
	if (ix->expect_ip && ix->expect_ip[i])
		return ix->expect_ip[i];
	return ix->sc->frames[i].data + ix->sc->frames[i].l3_off;
}

int frame_index_build(struct frame_index *ix, const struct scenario *sc)
{
	uint32_t cap = 16;

	while (cap < 2 * sc->n_frames + 16)
		cap *= 2;
	ix->sc = sc;
	ix->mask = cap - 1;
	ix->slot = calloc(cap, sizeof(*ix->slot));
	if (!ix->slot) {
		fprintf(stderr, "frame index: out of memory\n");
		return -1;
	}
	for (uint32_t i = 0; i < sc->n_frames; i++) {
		const struct sc_frame *fr = &sc->frames[i];
		uint32_t s;

		if (fr->l3_len == 0)
			continue;
		s = (uint32_t)fnv1a(ip_of(ix, i), fr->l3_len) & ix->mask;
		while (ix->slot[s]) {
			uint32_t o = ix->slot[s] - 1;

			if (sc->frames[o].l3_len == fr->l3_len &&
			    memcmp(ip_of(ix, o), ip_of(ix, i), fr->l3_len) == 0) {
				fprintf(stderr, "frame index: input frames %u and %u "
					"carry the same IP packet\n", o, i);
				frame_index_free(ix);
				return -1;
			}
			s = (s + 1) & ix->mask;
		}
		ix->slot[s] = i + 1;
	}
	return 0;
}

void frame_index_free(struct frame_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
}

int64_t frame_index_find(const struct frame_index *ix, const uint8_t *ip,
			 uint32_t len)
{
	uint32_t s = (uint32_t)fnv1a(ip, len) & ix->mask;

	while (ix->slot[s]) {
		uint32_t o = ix->slot[s] - 1;

		if (ix->sc->frames[o].l3_len == len &&
		    memcmp(ip_of(ix, o), ip, len) == 0)
			return o;
		s = (s + 1) & ix->mask;
	}
	return -1;
}
