/* SPDX-License-Identifier: BSD-3-Clause */
/* A packet-test scenario: the load balancer's configuration (port, VIPs,
 * backends) and the list of input frames, each with the outcome the spec
 * (docs/forwarding.md, docs/flow-hash.md) says it must have.
 *
 * Scenarios are deterministic: building one twice gives byte-identical
 * frames, so the generator writes them and the checker rebuilds them
 * instead of passing expectations through a side file. The expected
 * backend is not stored: the checker derives it from the flow key and its
 * own Maglev table (expect.h), independently of the daemon's state.
 *
 * Single-threaded test code; every function may exit the process with a
 * message on allocation failure or a scenario bug (they are test bugs).
 */
#ifndef PKT_SCENARIO_H
#define PKT_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/packet/counters.h"
#include "dataplane/packet/flow_key.h"
#include "tests/packet/frame.h"

#define SC_MAX_VIPS      16
#define SC_MAX_BACKENDS  8
#define SC_NAME_MAX      32

enum sc_fwd { SC_FWD_IPIP = 0, SC_FWD_GUE, SC_FWD_L2DSR };

struct sc_backend {
	char name[SC_NAME_MAX];
	uint8_t family;
	uint8_t addr[16];
	uint32_t weight;
	bool drain;
	bool down;               /* state: down (keeps its slots, no flows) */
	bool has_mac;
	uint8_t mac[6];
	uint32_t quic_server_id; /* quic VIPs: 0 = none */
};

/* One prefix of a VIP's source ACL (scenario_acl.c). */
struct sc_acl_rule {
	uint8_t addr[16];        /* the VIP's family; host bits clear */
	uint8_t len;
	bool allow;
};

struct sc_vip {
	char name[SC_NAME_MAX];
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
	uint8_t proto;
	enum sc_fwd fwd;
	uint16_t gue_port;
	uint32_t table_size;
	uint8_t table;           /* enum mlv_table_kind; 0 = maglev */
	double max_load;         /* bounded loads; 0 = off */
	uint32_t vnodes;         /* ring only; 0 = the default */
	uint32_t new_flows_per_second;   /* 0 = no limit */
	uint32_t new_flows_burst;        /* 0 = not written (the default) */
	bool echo_reply;         /* icmp_echo: reply */
	bool quic;               /* QUIC connection-ID routing */
	uint16_t port_last;      /* a range's last port; 0: one port. `any`:
				    port 0, port_last 65535 */
	uint8_t hash;            /* 0 5tuple, 1 3tuple, 2 source */
	uint8_t prefix6;         /* source_prefix6; 0 = the default (128) */
	const char *mss_clamp;   /* YAML value; NULL = not written (auto) */
	bool second_chance;      /* second_chance: {enabled: true} (gue TCP) */
	const char *ipip_source; /* ipip: outer IPv4 source prefix, "A/L";
				    NULL = not written (the port's address) */
	const char *ipip_source6; /* the same for outer IPv6 */
	uint32_t n_acl;          /* source ACL: allow / deny prefixes */
	const struct sc_acl_rule *acl;   /* owned by the scenario file */
	uint32_t n_backends;
	struct sc_backend backends[SC_MAX_BACKENDS];
};

/* The one DPDK port every scenario uses (one-arm: in and out). */
struct sc_port {
	uint8_t mac[6];          /* net_pcap's own MAC (see scenario.c) */
	uint8_t next_hop[6];
	uint8_t addr4[4];
	uint8_t addr6[16];
	uint16_t mtu;
	uint16_t vlan;           /* the port's `vlan`; 0 = not written */
	uint16_t tx_vlan;        /* nonzero: a second port "p1", VLAN tx_vlan of
				    the same device, is p0's tx_port (a trunk:
				    clients on vlan, backends on tx_vlan) */
};

enum sc_outcome {
	SC_FORWARD = 0,          /* encapsulated (or MAC-rewritten) to a backend */
	SC_ICMP_TOO_BIG,         /* answered with ICMP frag-needed / PTB */
	SC_DROP,                 /* counted under drop */
	SC_ICMP_ECHO_REPLY,      /* an echo request answered by the daemon */
	SC_MAY_LIMIT,            /* a new flow to a VIP with a new-flow limit:
				    forwarded like SC_FORWARD, or dropped as
				    new_flow_limit; how many are forwarded is
				    checked against the rate (check_rate.c) */
};

/* The QUIC counter a frame to a quic VIP counts in (none for anything
 * else: long headers, non-QUIC payloads, fragments, other VIPs). */
enum sc_quic { SC_QUIC_NONE = 0, SC_QUIC_ROUTED, SC_QUIC_UNKNOWN_ID,
	       SC_QUIC_NO_ID };

struct sc_expect {
	enum sc_outcome outcome;
	uint16_t vip;            /* FORWARD, ICMP_TOO_BIG: index in vips[] */
	uint32_t group;          /* nonzero: all frames of the group must reach
				    one backend (a flow, a fragmented datagram
				    and the ICMP errors about it) */
	struct mlv_flow_key key; /* FORWARD: the key whose hash picks the slot */
	enum mlv_drop_reason drop;
	uint16_t icmp_mtu;       /* ICMP_TOO_BIG: MTU the reply must report */
	/* FORWARD: nonzero = the backend (index + 1) the frame must reach
	 * whatever its key hashes to (QUIC connection-ID routing); 0 = the
	 * one the key selects */
	uint8_t to_backend;
	uint8_t quic;            /* enum sc_quic */
	uint16_t mss;            /* FORWARD: 0 = the inner packet is the input
				    as is; else its TCP MSS option(s) above
				    this value carry this value (mss_clamp) */
	char what[64];           /* for failure messages */
};

struct sc_frame {
	uint8_t *data;
	uint32_t len;
	uint16_t l3_off;         /* IP packet offset in the frame */
	uint16_t l3_len;         /* IP packet length (without Ethernet padding) */
	uint32_t at_ms;          /* paced scenarios: when to feed it, from the
				    start (pkt-pace) */
	struct sc_expect exp;
};

struct scenario {
	char name[SC_NAME_MAX];
	const char *summary;
	struct sc_port port;
	uint32_t ct_entries;     /* conntrack entries per worker */
	uint32_t n_vips;
	struct sc_vip vips[SC_MAX_VIPS];
	/* Reload storms alternate between vips[] and alt_vips[] ("config B");
	 * n_alt_vips == 0 for scenarios without reloads. Same VIPs in the
	 * same order, different backend sets. */
	uint32_t n_alt_vips;
	struct sc_vip alt_vips[SC_MAX_VIPS];
	/* Check that the backend distribution follows the weights. */
	bool check_distribution;
	/* Check that every backend that can take flows received some: the
	 * scenario relies on it to exercise each encapsulation. */
	bool check_coverage;
	/* The scenario has more concurrent flows than the connection table
	 * holds: the daemon must report evictions (else re-selection after
	 * eviction was not exercised). */
	bool expect_evictions;
	/* Paced: fed by pkt-pace at each frame's at_ms, and the SC_MAY_LIMIT
	 * frames (new flows to vips[rate_vip]) checked against that VIP's
	 * new_flows_per_second over the window pkt-pace measured. */
	bool paced;
	uint16_t rate_vip;

	uint32_t n_frames;
	uint32_t cap_frames;
	struct sc_frame *frames;

	uint64_t rng;            /* deterministic generator state */
	uint32_t next_id;        /* unique payload ids */
	uint32_t next_group;
};

/* A flow as the generator thinks of it. */
struct sc_flow {
	uint8_t family;
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint8_t proto;
};

/* Per-packet knobs on top of a flow. */
struct sc_opts {
	bool vlan;
	uint16_t vlan_tci;       /* with vlan: the tag; 0 = VLAN 100, priority 0 */
	uint8_t tos;
	uint8_t ttl;             /* 0 = 64 */
	bool df;
	uint8_t v4_opt_len;
	uint8_t n_v6_ext;
	uint8_t v6_ext[4];
	uint8_t tcp_flags;
	const uint8_t *tcp_opts;  /* TCP options (pkt_l4) */
	uint8_t tcp_opts_len;
	uint32_t payload_len;
};

/* Build scenario `name` into *sc (zeroed by the callee). Returns false if
 * there is no such scenario. Free with sc_free. */
bool sc_build(const char *name, struct scenario *sc);
void sc_free(struct scenario *sc);
/* Names of all scenarios, NULL-terminated, for usage messages. */
const char *const *sc_names(void);

/* ---- helpers for scenario definitions (scenario_*.c) ---- */

/* Parse an IPv4/IPv6 literal; exits on a bad literal (a test bug). */
uint8_t sc_addr(const char *text, uint8_t out[16]);
void sc_mac(const char *text, uint8_t out[6]);

struct sc_vip *sc_add_vip(struct scenario *sc, const char *name,
			  const char *addr, uint16_t port, uint8_t proto,
			  enum sc_fwd fwd);
struct sc_backend *sc_add_backend(struct sc_vip *vip, const char *name,
				  const char *addr, uint32_t weight);
/* Index of vip in sc->vips. */
uint16_t sc_vip_index(const struct scenario *sc, const struct sc_vip *vip);

/* Largest inner IP packet that fits the port MTU after the VIP's
 * encapsulation, taking the worst case over its backends. */
uint16_t sc_mtu_room(const struct scenario *sc, const struct sc_vip *vip);

/* Uniform random integer in [0, n). */
uint32_t sc_rand(struct scenario *sc, uint32_t n);
uint32_t sc_new_group(struct scenario *sc);

/* Client n of a family: 4 -> 198.18.x.y, 6 -> 2001:db8:c1::x:y. */
void sc_client_addr(uint8_t family, uint32_t n, uint8_t out[16]);
/* A flow from client n (source port sport) to vip. */
struct sc_flow sc_flow_to_vip(const struct sc_vip *vip, uint32_t client,
			      uint16_t sport);

/* The flow key the spec says the daemon hashes: the 5-tuple, or the
 * 3-tuple (ports zero) for fragments. */
struct mlv_flow_key sc_key(const struct sc_flow *f, bool with_ports);

/* Append a frame carrying one packet of flow f (not fragmented), with a
 * unique payload; returns it so the caller can corrupt it. The
 * expectation is left zeroed (outcome FORWARD to vip 0): set it with
 * sc_expect_* below. */
struct sc_frame *sc_emit(struct scenario *sc, const struct sc_flow *f,
			 const struct sc_opts *o);

/* sc_emit with the UDP/TCP payload given (len bytes, 0 allowed) instead
 * of a generated one. */
struct sc_frame *sc_emit_payload(struct scenario *sc, const struct sc_flow *f,
				 const struct sc_opts *o, const uint8_t *payload,
				 uint32_t len);

/* Append raw bytes as a frame (for non-IP and hand-made frames). */
struct sc_frame *sc_emit_raw(struct scenario *sc, const uint8_t *data,
			     uint32_t len);

/* Append the fragments of one datagram of flow f (unique payload of
 * o->payload_len bytes), cut at multiples of frag_size bytes of
 * upper-layer data, in the order given by order[] (indices of fragments;
 * n_order must equal the number of fragments). Each one is expected to be
 * forwarded to vip with the 3-tuple key, in group. */
void sc_emit_fragments(struct scenario *sc, const struct sc_flow *f,
		       const struct sc_opts *o, uint32_t frag_size,
		       const uint32_t *order, uint32_t n_order,
		       uint16_t vip, uint32_t group, const char *what);

/* Append an ICMP frag-needed (IPv4) / packet-too-big (IPv6) with MTU mtu
 * from a router on the client's side to vip, quoting a packet of flow f
 * on its way back (VIP -> client). The expectation is left zeroed. */
struct sc_frame *sc_emit_icmp_error(struct scenario *sc,
				    const struct sc_vip *vip,
				    const struct sc_flow *f, uint16_t mtu,
				    bool vlan);

void sc_expect_forward(struct sc_frame *fr, uint16_t vip,
		       const struct mlv_flow_key *key, uint32_t group,
		       const char *what);
void sc_expect_drop(struct sc_frame *fr, enum mlv_drop_reason reason,
		    const char *what);
void sc_expect_icmp(struct sc_frame *fr, uint16_t vip, uint16_t mtu,
		    const char *what);
void sc_expect_echo_reply(struct sc_frame *fr, uint16_t vip, const char *what);
/* A new flow to a limited VIP: forwarded (as sc_expect_forward would
 * expect) or dropped as new_flow_limit. */
void sc_expect_may_limit(struct sc_frame *fr, uint16_t vip,
			 const struct mlv_flow_key *key, uint32_t group,
			 const char *what);

/* Scenario definitions, one per file. */
void sc_def_basic4(struct scenario *sc);
void sc_def_basic6(struct scenario *sc);
void sc_def_fragments(struct scenario *sc);
void sc_def_icmp(struct scenario *sc);
void sc_def_malformed(struct scenario *sc);
void sc_def_flows(struct scenario *sc);
void sc_def_storm(struct scenario *sc);
void sc_def_tables(struct scenario *sc);
void sc_def_quic(struct scenario *sc);
void sc_def_ports(struct scenario *sc);
void sc_def_affinity(struct scenario *sc);
void sc_def_mss(struct scenario *sc);
void sc_def_ratelimit(struct scenario *sc);
void sc_def_acl(struct scenario *sc);
void sc_def_second_chance(struct scenario *sc);
void sc_def_vlan(struct scenario *sc);
void sc_def_vlan_trunk(struct scenario *sc);

#endif
