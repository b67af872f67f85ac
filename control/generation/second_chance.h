/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's window (docs/second-chance.md): each second-chance
 * VIP's previous slot owners after a table change, how long a
 * generation keeps them, and the clock they are measured on. */
#ifndef MLV_GENERATION_SECOND_CHANCE_H
#define MLV_GENERATION_SECOND_CHANCE_H

#include <stdint.h>

#include "control/base/error.h"
#include "dataplane/view/view.h"

/* CLOCK_MONOTONIC in milliseconds: the clock of previous_until_ms. Any
 * thread. */
uint64_t mlv_gen_sc_now_ms(void);

/* For every VIP of gen with second_chance whose prev_of[v] (the previous
 * generation's VIP of the same name, or NULL) has a table of the same
 * size: vip->previous[s] is the slot's owner in prev_of[v] when it
 * differs from the owner now, else the owner prev_of[v]->previous names
 * while its window lasts (now_ms before its previous_until_ms), each
 * mapped by backend name (MLV_GEN_NO_HOP when the name is gone or is the
 * owner now). A VIP whose table changed gets previous_until_ms = now_ms +
 * second_chance.window; one whose table did not keeps prev_of[v]'s. A
 * VIP with no such slot gets previous NULL. gen's tables must be filled.
 * Returns MLV_OK or MLV_E_NOMEM (then some arrays may be set; they go
 * with the generation). Control thread. */
enum mlv_err mlv_gen_sc_build(struct mlv_generation *gen,
			      const struct mlv_gen_vip *const *prev_of,
			      uint64_t now_ms);

/* The earliest previous_until_ms of gen's VIPs that have previous owners,
 * or 0 when none has: when the daemon rebuilds so that the window ends.
 * Any thread holding gen. */
uint64_t mlv_gen_sc_expiry(const struct mlv_generation *gen);

/* How many of vip's slots carry a previous owner now (0 without
 * them): for the control socket and metrics. Any thread holding vip's
 * generation. */
uint32_t mlv_gen_sc_previous_slots(const struct mlv_gen_vip *vip);

/* Milliseconds left of vip's window at now_ms (mlv_gen_sc_now_ms); 0
 * when it carries no previous owners. Any thread holding vip's
 * generation. */
uint64_t mlv_gen_sc_window_left_ms(const struct mlv_gen_vip *vip,
				   uint64_t now_ms);

/* Free gen's previous-owner arrays (mlv_gen_free). Control thread. */
void mlv_gen_sc_free(struct mlv_generation *gen);

#endif
