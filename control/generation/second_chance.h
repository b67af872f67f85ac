/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's slot history and window (docs/second-chance.md): each
 * second-chance VIP's former slot owners, carried from generation to
 * generation; the window after a table change; the clock it is measured
 * on. */
#ifndef MLV_GENERATION_SECOND_CHANCE_H
#define MLV_GENERATION_SECOND_CHANCE_H

#include <stdint.h>

#include "control/base/error.h"
#include "dataplane/view/view.h"

/* CLOCK_MONOTONIC in milliseconds: the clock of previous_until_ms. Any
 * thread. */
uint64_t mlv_gen_sc_now_ms(void);

/* How many former owners a slot's history keeps (mlv_gen_vip.previous,
 * .earlier): enough for a slot that changes twice while its flows live
 * (two changes in one window, a weight raised and lowered), and the
 * most a packet's MLV_SC_MAX_HOPS hops can name beside the owner. */
#define MLV_GEN_SC_HISTORY 2

/* For every VIP of gen with second_chance whose prev_of[v] (the previous
 * generation's VIP of the same name, a VIP restored from the history
 * file, or NULL) has a table of the same size: each slot's history is
 * prev_of[v]'s owner of the slot, then prev_of[v]'s history of it,
 * mapped by backend name, without the owner now, backends no longer
 * configured and repeats, the first MLV_GEN_SC_HISTORY of them
 * (vip->previous, vip->earlier). A VIP whose table changed opens its
 * window: previous_until_ms = now_ms + second_chance.window; one whose
 * table did not keeps prev_of[v]'s deadline; window_open says whether
 * now_ms is before it. A VIP with no history gets both arrays NULL.
 * gen's tables must be filled.
 * Returns MLV_OK or MLV_E_NOMEM (then some arrays may be set; they go
 * with the generation). Control thread. */
enum mlv_err mlv_gen_sc_build(struct mlv_generation *gen,
			      const struct mlv_gen_vip *const *prev_of,
			      uint64_t now_ms);

/* The earliest previous_until_ms of gen's VIPs whose window is open, or 0
 * when none is: when the daemon rebuilds so that the window closes.
 * Any thread holding gen. */
uint64_t mlv_gen_sc_expiry(const struct mlv_generation *gen);

/* How many of vip's slots have a previous owner (0 without a history): for the control socket and metrics. Any thread holding vip's
 * generation. */
uint32_t mlv_gen_sc_previous_slots(const struct mlv_gen_vip *vip);

/* Milliseconds left of vip's window at now_ms (mlv_gen_sc_now_ms); 0
 * when it is closed. Any thread holding vip's
 * generation. */
uint64_t mlv_gen_sc_window_left_ms(const struct mlv_gen_vip *vip,
				   uint64_t now_ms);

/* Free gen's slot histories (mlv_gen_free). Control thread. */
void mlv_gen_sc_free(struct mlv_generation *gen);

#endif
