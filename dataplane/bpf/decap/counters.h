/* SPDX-License-Identifier: BSD-3-Clause */
/* What the decapsulator did with each frame: one per-CPU counter per
 * outcome. The first MLV_DECAP_CTR__OUTCOMES counters, decap_ipip to
 * aborted, are exclusive: every frame is counted exactly once among them
 * (redirected included: a frame sent on is not decapsulated), so they
 * sum to the frames seen. The others count some of those frames again,
 * at most once each: the syn_* / synack_* counters are SYN-ACK MSS
 * clamping's (dataplane/bpf/decap/synack.h): syn_recorded counts
 * decapsulated SYNs, the synack_* ones count the SYN-ACKs leaving through
 * the tc egress program, one each; the sc_* counters are second chance's
 * (dataplane/bpf/decap/redirect.h): why a decapsulated GUE frame with a
 * second-chance block was not sent on, or why one sent on (redirected)
 * was more than a segment of a connection held elsewhere; sc_carried
 * counts every such frame that passed the checks (decapsulated or sent
 * on), so that a backend shows it receives hops before any of them is
 * needed. X-macro shared by the BPF
 * program (indices) and tools/bin/maglev-decap (names for `status`). */
#ifndef MLV_BPF_DECAP_COUNTERS_H
#define MLV_BPF_DECAP_COUNTERS_H

/* X(enum suffix, name, meaning) */
#define MLV_DECAP_COUNTERS(X)                                              \
	X(DECAP_IPIP, "decap_ipip",                                        \
	  "IPIP (4in4, 6in4, 4in6, 6in6) to a local address: decapsulated") \
	X(DECAP_GUE, "decap_gue",                                          \
	  "GUE variant 0 on a configured port to a local address: decapsulated") \
	X(REDIRECTED, "redirected",                                        \
	  "second chance: TCP of a flow not here, sent on to its next hop (by the stack while its neighbour resolves)") \
	X(PASS_NOT_IP, "pass_not_ip",                                      \
	  "not IPv4/IPv6 (ARP, VLAN-tagged, ...): untouched to the kernel") \
	X(PASS_NOT_TUNNEL, "pass_not_tunnel",                              \
	  "IP but neither IPIP nor UDP to a GUE port: untouched")          \
	X(PASS_NOT_LOCAL, "pass_not_local",                                \
	  "IPIP, UDP or IPv6 with extension headers, not to decap_addrs: untouched") \
	X(PASS_UNKNOWN_SRC, "pass_unknown_src",                            \
	  "a tunnel from an outer source not in decap_sources: untouched") \
	X(PASS_FRAGMENT, "pass_fragment",                                  \
	  "a fragmented outer packet: untouched (left to the kernel)")     \
	X(PASS_UNSUPPORTED, "pass_unsupported",                            \
	  "IPv4 options, IPv6 extension headers, GUE control/extension fields: untouched") \
	X(PASS_MALFORMED, "pass_malformed",                                \
	  "truncated, bad length or checksum, inner version mismatch: untouched") \
	X(DROP_ECN, "drop_ecn",                                            \
	  "outer CE over a not-ECT inner packet: dropped (RFC 6040 4.2)")  \
	X(ABORTED, "aborted",                                              \
	  "moving the frame start failed after every check passed (not expected)") \
	X(SYN_RECORDED, "syn_recorded",                                    \
	  "decapsulated TCP SYN: its flow and the MSS that fits recorded")  \
	X(SYNACK_CLAMPED, "synack_clamped",                                \
	  "SYN-ACK of a recorded flow: MSS option lowered to the recorded MSS") \
	X(SYNACK_FITS, "synack_fits",                                      \
	  "SYN-ACK of a recorded flow: MSS option at or below it, or none") \
	X(SYNACK_UNKNOWN, "synack_unknown",                                \
	  "SYN-ACK of a flow no decapsulated SYN started: untouched")       \
	X(SYNACK_MALFORMED, "synack_malformed",                            \
	  "SYN-ACK of a recorded flow with options that do not parse: untouched") \
	X(SC_ARRIVED, "sc_arrived",                                        \
	  "second chance: sent on by another backend and held here (or not TCP): decapsulated") \
	X(SC_EXHAUSTED, "sc_exhausted",                                    \
	  "second chance: sent on by another backend, not here, no later hop: decapsulated") \
	X(SC_NO_LISTENER, "sc_no_listener",                                \
	  "second chance: a SYN with no listener here, sent on to a hop")  \
	X(SC_DRAINED, "sc_drained",                                        \
	  "second chance: a SYN sent on to a hop because this host drains") \
	X(SC_ICMP, "sc_icmp",                                              \
	  "second chance: frag-needed / too-big about a flow not here, sent on to a hop") \
	X(SC_MALFORMED, "sc_malformed",                                    \
	  "second chance: a block not as version 1 writes it, decapsulated") \
	X(SC_OFF, "sc_off",                                                \
	  "second chance: a block arrived while it is off here: decapsulated") \
	X(SC_NO_HOP, "sc_no_hop",                                          \
	  "second chance: flow not here, but no hop listed: decapsulated")  \
	X(SC_SELF, "sc_self",                                              \
	  "second chance: flow not here, every hop is this host: decapsulated") \
	X(SC_TTL, "sc_ttl",                                                \
	  "second chance: flow not here, outer TTL/hop limit 1: decapsulated") \
	X(SC_NO_ROUTE, "sc_no_route",                                      \
	  "second chance: flow not here, no route or forwarding to the hop: decapsulated") \
	X(SC_CARRIED, "sc_carried",                                        \
	  "second chance: a GUE frame with a valid hop block, held here or sent on")

enum mlv_decap_counter {
#define MLV_DECAP_CTR_ENUM(name, text, help) MLV_DECAP_CTR_##name,
	MLV_DECAP_COUNTERS(MLV_DECAP_CTR_ENUM)
#undef MLV_DECAP_CTR_ENUM
	MLV_DECAP_CTR__COUNT,
	/* the exclusive outcomes: counters [0, this) */
	MLV_DECAP_CTR__OUTCOMES = MLV_DECAP_CTR_ABORTED + 1
};

#endif
