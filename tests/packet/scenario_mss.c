/* SPDX-License-Identifier: BSD-3-Clause */
/* mss: MSS clamping (docs/forwarding.md, "MSS clamping"). TCP VIPs with
 * mss_clamp auto (IPv4 and IPv6 over ipip), an explicit N (gue), an N
 * above what fits (l2dsr: lowered to auto's value) and off. SYNs and
 * SYN-ACKs whose MSS option is above the clamp must reach the backend
 * with the clamp in the option and a valid checksum (the checker builds
 * that packet itself, check_mss.c); SYNs below it, SYNs without the
 * option, malformed option lists, non-SYN segments carrying the same
 * bytes and every packet to the VIP with clamping off arrive unchanged. */
#include <stdio.h>

#include "tests/packet/scenario.h"

/* Linux's SYN options: MSS (value at bytes 2-3), SACK permitted,
 * timestamps, NOP, window scale, padded to 20 bytes. */
#define LINUX_OPTS(hi, lo) { 2, 4, hi, lo, 4, 2, 8, 10, 0, 0, 0x12, 0x34, \
			     0, 0, 0, 0, 1, 3, 3, 7 }

/* One frame of a flow of its own to vip: flags and options as given,
 * expected forwarded with the inner MSS mss (0: unchanged). */
static void emit(struct scenario *sc, struct sc_vip *vip, uint32_t client,
		 uint8_t flags, const uint8_t *opts, uint8_t opts_len,
		 bool vary, uint16_t mss, const char *what)
{
	struct sc_flow fl = sc_flow_to_vip(vip, client,
					   (uint16_t)(30000 + client));
	struct mlv_flow_key key = sc_key(&fl, true);
	struct sc_opts o = {
		.tcp_flags = flags, .tcp_opts = opts, .tcp_opts_len = opts_len,
		.payload_len = 8, .df = true,
	};
	struct sc_frame *fr;
	char w[64];

	if (vary) {
		/* other header shapes: a VLAN tag, IPv4 options */
		o.vlan = true;
		o.v4_opt_len = vip->family == 4 ? 8 : 0;
		o.tos = 0xb8;
	}
	fr = sc_emit(sc, &fl, &o);
	snprintf(w, sizeof(w), "%s: %s", vip->name, what);
	sc_expect_forward(fr, sc_vip_index(sc, vip), &key, sc_new_group(sc), w);
	fr->exp.mss = mss;
}

/* The cases for one VIP whose SYNs are clamped to clamp (0: off);
 * big is an MSS above any clamp here, the client's usual offer. */
static void cases(struct scenario *sc, struct sc_vip *vip, uint16_t clamp,
		  uint16_t big, uint32_t client)
{
	const uint8_t hi = (uint8_t)(big >> 8), lo = (uint8_t)big;
	static const uint8_t no_mss[] = { 1, 1, 4, 2, 1, 3, 3, 7 };
	static const uint8_t low[] = LINUX_OPTS(0x03, 0xe8);    /* 1000 */
	static const uint8_t malformed[] = { 2, 4, 0x23, 0x28, 8, 0, 1, 1 };
	const uint8_t syn_opts[] = LINUX_OPTS(hi, lo);
	/* a NOP first: the MSS value at an odd offset of the header */
	const uint8_t odd[] = { 1, 2, 4, hi, lo, 1, 1, 1 };
	const uint8_t plain[] = { 2, 4, hi, lo };
	uint16_t want = clamp;

	/* sc_emit copies the options into the frame */
	emit(sc, vip, client++, PKT_TCP_SYN, syn_opts, sizeof(syn_opts), false,
	     want, "SYN, MSS above the clamp");
	emit(sc, vip, client++, PKT_TCP_SYN, syn_opts, sizeof(syn_opts), true,
	     want, "SYN, MSS above the clamp, VLAN, IP options");
	emit(sc, vip, client++, PKT_TCP_SYN | PKT_TCP_ACK, plain, sizeof(plain),
	     false, want, "SYN-ACK, MSS above the clamp");
	emit(sc, vip, client++, PKT_TCP_SYN, odd, sizeof(odd), false, want,
	     "SYN, MSS at an odd offset");
	emit(sc, vip, client++, PKT_TCP_SYN, low, sizeof(low), false, 0,
	     "SYN, MSS below the clamp");
	emit(sc, vip, client++, PKT_TCP_SYN, no_mss, sizeof(no_mss), false, 0,
	     "SYN without MSS option");
	emit(sc, vip, client++, PKT_TCP_SYN, malformed, sizeof(malformed),
	     false, 0, "SYN, malformed options");
	emit(sc, vip, client++, PKT_TCP_ACK, plain, sizeof(plain), false, 0,
	     "ACK carrying MSS option bytes");
	emit(sc, vip, client++, PKT_TCP_ACK | PKT_TCP_PSH, syn_opts,
	     sizeof(syn_opts), true, 0, "PSH-ACK carrying MSS option bytes");
	emit(sc, vip, client++, 0, NULL, 0, false, 0, "no options, no flags");
}

void sc_def_mss(struct scenario *sc)
{
	struct sc_vip *v4, *v6, *n4, *big6, *off4;
	struct sc_backend *b;

	sc->summary = "MSS clamping: auto (IPv4, IPv6), explicit N, N above "
		      "what fits, off; SYN, SYN-ACK, non-SYN, malformed options";
	v4 = sc_add_vip(sc, "auto4", "192.0.2.10", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v4, "a4-1", "10.99.1.11", 100);
	sc_add_backend(v4, "a4-2", "10.99.1.12", 100);
	v6 = sc_add_vip(sc, "auto6", "2001:db8::10", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v6, "a6-1", "fd00:99:1::11", 100);
	sc_add_backend(v6, "a6-2", "fd00:99:1::12", 100);
	n4 = sc_add_vip(sc, "n1200", "192.0.2.20", 443, 6, SC_FWD_GUE);
	n4->mss_clamp = "1200";
	sc_add_backend(n4, "n-1", "10.99.1.21", 100);
	sc_add_backend(n4, "n-2", "10.99.1.22", 100);
	big6 = sc_add_vip(sc, "n9000", "2001:db8::30", 443, 6, SC_FWD_L2DSR);
	big6->mss_clamp = "9000";
	b = sc_add_backend(big6, "d-1", "fd00:99:1::41", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:41", b->mac);
	b = sc_add_backend(big6, "d-2", "fd00:99:1::42", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:42", b->mac);
	off4 = sc_add_vip(sc, "off4", "192.0.2.40", 80, 6, SC_FWD_IPIP);
	off4->mss_clamp = "off";
	sc_add_backend(off4, "o-1", "10.99.1.51", 100);

	/* The clamps, from docs/forwarding.md's arithmetic: auto is
	 * mtu_room - 40 (IPv4) or - 60 (IPv6); N is min(N, auto). */
	cases(sc, v4, (uint16_t)(sc_mtu_room(sc, v4) - 40), 1460, 0);        /* 1440 */
	cases(sc, v6, (uint16_t)(sc_mtu_room(sc, v6) - 60), 1440, 100);      /* 1400 */
	cases(sc, n4, 1200, 1460, 200);
	cases(sc, big6, (uint16_t)(sc_mtu_room(sc, big6) - 60), 8940, 300);  /* 1440 */
	/* off: the MSS above any clamp goes through */
	emit(sc, off4, 400, PKT_TCP_SYN, (const uint8_t[])LINUX_OPTS(0x05, 0xb4),
	     20, false, 0, "SYN, MSS 1460, clamping off");
	emit(sc, off4, 401, PKT_TCP_SYN | PKT_TCP_ACK,
	     (const uint8_t[]){ 2, 4, 0x23, 0x28 }, 4, false, 0,
	     "SYN-ACK, MSS 9000, clamping off");
}
