/* SPDX-License-Identifier: BSD-3-Clause */
/* The validated in-memory configuration model and its loader.
 *
 * mlv_config_load() reads a YAML file with libyaml, validates all of it and
 * either returns a complete model or collects every error it found as
 * "file:line:col: message" diagnostics; a model is never half-built. The
 * reference for every key is docs/config.md.
 *
 * Threads: the loader and the model are used by the control thread (and by
 * `maglevd --check-config`, tools and tests); nothing here is shared with
 * workers. The generation builder copies what workers need.
 */
#ifndef MLV_CONFIG_H
#define MLV_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "control/base/addr.h"
#include "control/base/error.h"
#include "control/tables/builder.h"
#include "dataplane/packet/flow_fields.h"

#define MLV_NAME_MAX      64    /* VIP, backend and port names, with NUL */
#define MLV_PATH_MAX      256   /* file paths, HTTP paths, device names */
#define MLV_IFNAME_MAX    16    /* kernel interface names, with NUL */
#define MLV_MAX_WORKERS   64
#define MLV_MAX_PORTS     16
#define MLV_MAX_VIPS      65535
#define MLV_CONFIG_MAX_FILE_BYTES (64u << 20) /* refuse larger YAML files */
#define MLV_FLOW_RATE_MAX  100000000u /* new_flows_per_second: 10^8 */
#define MLV_FLOW_BURST_MAX 1000000000u /* new_flows_burst: 10^9 */

enum mlv_forwarding { MLV_FWD_IPIP = 0, MLV_FWD_GUE, MLV_FWD_L2DSR };
enum mlv_health_type { MLV_HEALTH_NONE = 0, MLV_HEALTH_TCP, MLV_HEALTH_HTTP,
		       MLV_HEALTH_UDP, MLV_HEALTH_DNS };
enum mlv_idle_policy { MLV_IDLE_ADAPTIVE = 0, MLV_IDLE_POLL };
/* Where a TCP or HTTP health check goes (docs/health.md, "Checks
 * through the data path"): straight to the backend's address, or
 * encapsulated as the data plane forwards the VIP, to the VIP's
 * address, so that only a backend that serves the VIP answers. */
enum mlv_health_via { MLV_HEALTH_VIA_DIRECT = 0, MLV_HEALTH_VIA_DATA_PATH };
enum mlv_backend_state { MLV_BACKEND_ACTIVE = 0, MLV_BACKEND_DRAIN, MLV_BACKEND_DOWN };
/* What a VIP's address does with an ICMP/ICMPv6 echo request. */
enum mlv_icmp_echo { MLV_ECHO_DROP = 0, MLV_ECHO_REPLY };

/* mss_clamp of a TCP VIP: off, auto (what fits the VIP's mtu_room), or
 * an explicit MSS in MLV_MSS_CLAMP_MIN..MLV_MSS_CLAMP_MAX bytes (used as
 * min(N, auto): an N above what fits is lowered to it). */
#define MLV_MSS_CLAMP_OFF  0u
#define MLV_MSS_CLAMP_AUTO 1u
#define MLV_MSS_CLAMP_MIN  536u     /* RFC 9293's IPv4 default MSS */
#define MLV_MSS_CLAMP_MAX  65495u   /* 65535 - 40 */

/* Where a value came from, for diagnostics raised after parsing. */
struct mlv_src_pos {
	uint32_t line;   /* 1-based; 0 = not from the file (a default) */
	uint32_t col;    /* 1-based */
	uint32_t file;   /* 0: the main file; k: the k-th fragment it
			    includes (mlv_diags_file) */
};

struct mlv_health_config {
	enum mlv_health_type type;
	uint32_t interval_ms;
	uint32_t timeout_ms;
	uint16_t port;             /* 0 = the backend's service port (VIP port) */
	uint8_t rise;
	uint8_t fall;
	enum mlv_health_via via;   /* tcp, http: direct or data_path */
	uint16_t expect_status;    /* http: expected status code */
	char path[MLV_PATH_MAX];   /* http: request path */
	char host[MLV_PATH_MAX];   /* http: Host header; "" = backend address */
	char send[MLV_PATH_MAX];   /* udp: the datagram sent */
	char receive[MLV_PATH_MAX];/* udp: text the reply must contain; "" = any */
	char query[MLV_PATH_MAX];  /* dns: the name asked for (type A) */
};

/* Second chance (docs/second-chance.md): GUE packets carry the other
 * backends where the flow may live, so that a backend without the flow's
 * connection hands a packet on instead of resetting it. */
struct mlv_second_chance_config {
	bool enabled;              /* gue TCP VIPs only */
	uint32_t window_ms;        /* after a table change, slots also carry
				      their previous owner this long */
};

struct mlv_backend_config {
	char name[MLV_NAME_MAX];
	struct mlv_ip address;
	uint32_t weight;           /* default 100; 0 = no new flows */
	enum mlv_backend_state state;
	bool has_mac;
	struct mlv_mac mac;        /* l2dsr: the backend's MAC on the link */
	uint32_t quic_server_id;   /* quic VIPs: the server ID its QUIC
				      connection IDs carry; 0 = none */
	struct mlv_src_pos pos;
};

/* One prefix of a VIP's source ACL and where it was written. */
struct mlv_acl_prefix_config {
	struct mlv_ip_prefix prefix;
	struct mlv_src_pos pos;
};

/* The shortest ipip_source / ipip_source6 prefixes: the flow hash picks
 * at most the last 16 bits of an outer IPv4 source (one word of its
 * header checksum, added per packet) and the last 32 of an IPv6 one. */
#define MLV_IPIP_SOURCE_MIN_LEN 16
#define MLV_IPIP_SOURCE6_MIN_LEN 96

/* Prefixes of one VIP's source ACL at most, allow and deny together. */
#define MLV_VIP_ACL_MAX 1000000u

struct mlv_vip_config {
	char name[MLV_NAME_MAX];
	struct mlv_ip address;
	/* Host byte order. One port: port, and port_last equal to it or 0
	 * (a model built by hand). A range A-B: port A, port_last B
	 * (A < B). `any`: 0 and 65535 (mlv_vip_port_any). */
	uint16_t port;
	uint16_t port_last;
	uint8_t protocol;          /* IPPROTO_TCP or IPPROTO_UDP */
	enum mlv_forwarding forwarding;
	uint16_t gue_port;         /* gue: outer UDP destination port */
	uint32_t table_size;       /* prime */
	struct mlv_health_config health;
	uint32_t n_backends;
	struct mlv_backend_config *backends; /* sorted by name after load */
	struct mlv_src_pos pos;
	enum mlv_table_kind table;  /* which builder fills the table */
	double max_load;           /* bounded loads: 0 = off, else >= 1.0 */
	uint32_t vnodes;           /* ring: points per unit of weight */
	uint32_t min_backends;     /* announce only with this many usable */
	enum mlv_icmp_echo icmp_echo; /* echo requests to the address */
	uint32_t new_flows_per_second;  /* 0 = no limit */
	uint32_t new_flows_burst;  /* 0 = a tenth of a second's worth */
	bool quic;                 /* UDP: route QUIC short headers by the
				      server ID in their connection ID */
	enum mlv_hash_fields hash; /* which key fields choose the slot */
	uint32_t source_prefix6;   /* hash: source, IPv6 source bits kept */
	uint16_t mss_clamp;        /* MLV_MSS_CLAMP_OFF, _AUTO or bytes */
	struct mlv_second_chance_config second_chance;
	/* ipip: the prefix the outer IPv4 / IPv6 source is taken from by
	 * the flow hash (docs/forwarding.md, "Outer sources"); family
	 * MLV_AF_NONE: the transmitting port's address. */
	struct mlv_ip_prefix ipip_source;
	struct mlv_ip_prefix ipip_source6;
	/* Source ACL (docs/forwarding.md, "Source ACLs"): prefixes of the
	 * VIP's family, none in both lists; both empty: no ACL. */
	uint32_t n_allow;
	uint32_t n_deny;
	struct mlv_acl_prefix_config *allow;
	struct mlv_acl_prefix_config *deny;
};

/* Whether a VIP takes every port of its protocol (`port: any`). Pure. */
static inline bool mlv_vip_port_any(const struct mlv_vip_config *v)
{
	return v->port == 0 && v->port_last == 65535;
}

/* Whether a VIP has more than one port (a range or `any`). Pure. */
static inline bool mlv_vip_port_wild(const struct mlv_vip_config *v)
{
	return v->port_last != 0 && v->port_last != v->port;
}

/* A VIP's last port (its only one if it has one). Pure. */
static inline uint16_t mlv_vip_port_last(const struct mlv_vip_config *v)
{
	return v->port_last ? v->port_last : v->port;
}

/* A VIP's port as written: "80", "8000-8100" or "any" in buf (at least
 * 12 bytes). Pure; any thread. */
const char *mlv_vip_port_format(uint16_t port, uint16_t port_last,
				char *buf, size_t len);

/* A bonded port's modes (DPDK net_bonding): one member carries the
 * traffic, another takes over when its link fails; or IEEE 802.3ad
 * (LACP) over all members with a partner switch. */
enum mlv_bond_mode { MLV_BOND_ACTIVE_BACKUP = 0, MLV_BOND_8023AD };

#define MLV_BOND_MAX_MEMBERS 8
#define MLV_BOND_DEVICE_PREFIX "net_bonding"   /* DPDK's driver name */
#define MLV_BOND_NAME_MAX 64    /* DPDK's RTE_ETH_NAME_MAX_LEN, with the NUL */

/* `bond:` of a port: `device` is then the bonded device maglevd creates
 * (a name starting with net_bonding) over the member devices, which the
 * EAL arguments or PCI probing provide. */
struct mlv_bond_config {
	bool enabled;                /* the port has a bond: mapping */
	enum mlv_bond_mode mode;
	uint32_t n_members;          /* 2..MLV_BOND_MAX_MEMBERS */
	char **members;              /* DPDK device names; the first is the
					primary of active-backup */
	bool has_mac;                /* the bond's MAC; else the first
					member's */
	struct mlv_mac mac;
	uint32_t link_monitor_ms;    /* how often member links are polled */
	struct mlv_src_pos pos;
};

struct mlv_port_config {
	char name[MLV_NAME_MAX];
	char device[MLV_PATH_MAX];   /* DPDK port: PCI address or vdev name */
	struct mlv_ip address;       /* outer IPv4 source; family NONE = unset */
	struct mlv_ip address6;      /* outer IPv6 source; family NONE = unset */
	bool next_hop_auto;          /* resolve from the kernel neighbour table */
	struct mlv_mac next_hop;     /* when !next_hop_auto */
	/* IPv6's next hop when it differs (a MAC with a MAC next_hop; with
	 * next_hop: auto each family's comes from the kernel) */
	bool has_next_hop6;
	struct mlv_mac next_hop6;
	char tx_port[MLV_NAME_MAX];  /* two-arm: transmit via this port; "" = self */
	uint16_t mtu;                /* default 1500 */
	bool exception;              /* non-VIP traffic is sent out this port */
	/* The host's own traffic on a port without a kernel interface (a
	 * PCI NIC): a TAP (MLV_HOST_TAP_DEVICE, interface "mlv-<name>")
	 * with this port's MAC and addresses (/host_prefix, /host_prefix6)
	 * gets everything that is not for a VIP, so the kernel answers ARP
	 * and ND, resolves next hops, runs health checks and BGP. */
	bool host_tap;
	uint32_t host_prefix;
	uint32_t host_prefix6;
	/* Set on the port the loader adds for host_tap: the name of the
	 * port it serves; "" on configured ports. */
	char host_for[MLV_NAME_MAX];
	struct mlv_bond_config bond;
	/* 802.1Q: the VLAN the port's frames belong to (1..4094): received
	 * frames must carry its tag (others are counted drops), frames sent
	 * carry it; 0: untagged, any frame taken as today */
	uint16_t vlan;
	struct mlv_src_pos pos;
};

/* The device and interface-name prefix of the host TAP (host_tap). */
#define MLV_HOST_TAP_DEVICE "net_tap_host"
#define MLV_HOST_TAP_IFPREFIX "mlv-"

/* How much one reload may take away before it is refused (unless
 * forced): percentages, 100 = no limit. */
struct mlv_reload_budget {
	uint32_t max_vips_removed_pct;   /* of the running VIPs */
	uint32_t max_backends_lost_pct;  /* of any VIP's usable backends */
	uint32_t max_connections_moved_pct;  /* of any changed VIP's tracked
						connections, re-selected */
};

struct mlv_conntrack_config {
	uint32_t entries_per_worker;
	uint32_t tcp_timeout_ms;
	uint32_t tcp_handshake_timeout_ms;
	uint32_t tcp_closing_timeout_ms;   /* after FIN or RST */
	uint32_t udp_timeout_ms;
};

/* What one slow or idle client can hold of the metrics endpoint
 * (control/metrics/metrics.h). */
struct mlv_metrics_limits {
	uint32_t timeout_ms;           /* for a whole request to arrive */
	uint32_t max_connections;
	uint32_t max_per_address;
};

struct mlv_config {
	char *path;                    /* the file it was loaded from */

	/* dataplane: restart-only */
	uint32_t n_eal_args;
	char **eal_args;
	/* `include:` patterns as written (relative ones are relative to the
	 * main file's directory), for the watch; the files they matched are
	 * the diagnostics' fragments (struct mlv_diags). */
	uint32_t n_includes;
	char **includes;
	uint32_t workers;
	enum mlv_idle_policy idle;
	uint32_t idle_max_sleep_us;
	uint32_t n_ports;
	struct mlv_port_config *ports;
	struct mlv_conntrack_config conntrack;
	uint32_t mbufs;                /* per pool; 0 = automatic (the floor) */
	uint32_t mbuf_size;            /* data room in bytes, headroom
					  included; 0 = automatic */

	/* control */
	char control_socket[MLV_PATH_MAX];
	uint32_t control_socket_mode;  /* e.g. 0660 */
	char metrics_listen[MLV_PATH_MAX]; /* "IP:PORT" or "[IP6]:PORT";
					      "" = no metrics listener */
	struct mlv_metrics_limits metrics_limits;
	bool metrics_backend_series;   /* the per-(VIP, backend) families */
	uint32_t build_threads;    /* table build threads, control thread
				      included (control/tables/build_pool.h) */
	char build_cpus[MLV_PATH_MAX]; /* CPU list for the build helpers
					  ("0-1,4"); "" = the control
					  thread's CPUs */
	char state_file[MLV_PATH_MAX]; /* runtime overrides kept across
					  restarts; "" = beside the socket */
	char socket_group[MLV_NAME_MAX]; /* the socket's group; "" = the
					    daemon's own */
	char admin_group[MLV_NAME_MAX];  /* may change the daemon over the
					    socket; "" = root only */
	struct mlv_reload_budget reload_budget;

	/* announce: reloadable (docs/scale-out.md) */
	uint32_t announce_table;       /* kernel routing table; 0 = off */
	uint32_t announce_drain_ms;    /* forwarding after a stop withdrew */
	char announce_device[MLV_IFNAME_MAX]; /* the device the routes use */

	/* defaults, already applied to every VIP */
	uint32_t default_table_size;
	enum mlv_forwarding default_forwarding;
	struct mlv_health_config default_health;
	enum mlv_table_kind default_table;
	double default_max_load;
	uint32_t default_vnodes;
	uint32_t default_min_backends;
	enum mlv_icmp_echo default_icmp_echo;
	uint32_t default_new_flows_per_second;
	uint32_t default_new_flows_burst;
	enum mlv_hash_fields default_hash;
	uint16_t default_mss_clamp;    /* TCP VIPs only */
	struct mlv_second_chance_config default_second_chance; /* gue TCP VIPs */
	struct mlv_ip_prefix default_ipip_source;   /* ipip VIPs; none: family 0 */
	struct mlv_ip_prefix default_ipip_source6;

	uint32_t n_vips;
	struct mlv_vip_config *vips;   /* in file order */
};

enum mlv_diag_level { MLV_DIAG_ERROR = 0, MLV_DIAG_WARNING };

struct mlv_diag {
	enum mlv_diag_level level;
	struct mlv_src_pos pos;
	char message[256];
};

/* Diagnostics collected while loading. */
struct mlv_diags {
	char *file;              /* the main file's name (positions' file 0) */
	char **fragments;        /* fragments[k - 1]: file k's name */
	uint32_t n_fragments;
	uint32_t n;
	uint32_t n_errors;
	uint32_t cap;
	struct mlv_diag *items;
};

/* The name of a position's file: the main file for 0, else the fragment
 * (never NULL). Any thread holding d. */
const char *mlv_diags_file(const struct mlv_diags *d, uint32_t file);

/* `include:` patterns at most, and fragment files they may match. */
#define MLV_CONFIG_MAX_INCLUDES 16u
#define MLV_CONFIG_MAX_FRAGMENTS 4096u
#define MLV_CONFIG_MAX_INCLUDE_LEN 256u   /* bytes of a pattern, NUL included */

/* An `include:` pattern as a path: as written if absolute (or main_path
 * has no directory), else joined onto main_path's directory. False if it
 * does not fit len. Pure; any thread. */
bool mlv_config_include_path(const char *main_path, const char *pattern,
			     char *buf, size_t len);

/* Whether s holds glob characters (`*`, `?`, `[`). Pure; any thread. */
bool mlv_config_is_glob(const char *s);

/* Load, parse and validate path. On MLV_OK *out is a complete model (free
 * with mlv_config_free) and diags may hold warnings. On MLV_E_CONFIG *out
 * is NULL and diags holds every error found (sorted by position, at most
 * 1000 stored; n_errors counts all); MLV_E_IO if the file cannot be read
 * (diags says why), MLV_E_NOMEM on allocation failure. diags must be
 * initialised with mlv_diags_init and released with mlv_diags_free; it may
 * be reused across loads (diags->file is replaced, items accumulate). */
enum mlv_err mlv_config_load(const char *path, struct mlv_config **out,
			     struct mlv_diags *diags);

/* mlv_config_load on behalf of user uid (a read-level client's dry run
 * of a file of its own): the main file and every fragment it includes
 * are read only if uid could read them too, that is uid is 0, owns the
 * file, or the file is readable by others (o+r); otherwise MLV_E_PERM,
 * and diags names the file and its owner. The check is on the file a
 * link leads to; the directories on its way are not checked. */
enum mlv_err mlv_config_load_for(const char *path, uint32_t uid,
				 struct mlv_config **out,
				 struct mlv_diags *diags);

/* The same for YAML held in memory; name is used in diagnostics. */
enum mlv_err mlv_config_load_buffer(const char *name, const char *data,
				    size_t len, struct mlv_config **out,
				    struct mlv_diags *diags);

void mlv_config_free(struct mlv_config *cfg);

/* Whether two VIPs have the same source ACL: the same prefixes in the
 * same lists, in any order (a prefix listed twice counts once). Pure;
 * any thread holding both. */
bool mlv_vip_acl_equal(const struct mlv_vip_config *a,
		       const struct mlv_vip_config *b);

/* Look-ups by name; NULL if absent. mlv_config_backend is a binary
 * search: the loader leaves each VIP's backends in name order. */
const struct mlv_vip_config *mlv_config_vip(const struct mlv_config *cfg,
					    const char *name);
const struct mlv_backend_config *mlv_config_backend(
	const struct mlv_vip_config *vip, const char *name);
const struct mlv_port_config *mlv_config_port(const struct mlv_config *cfg,
					      const char *name);

void mlv_diags_init(struct mlv_diags *d);
void mlv_diags_free(struct mlv_diags *d);
/* Print each diagnostic as "file:line:col: error: message\n" (or
 * "warning:"); a diagnostic without a position (the file cannot be read,
 * is too large) prints as "file: error: message\n". */
void mlv_diags_print(const struct mlv_diags *d, FILE *f);

/* "500ms", "1s", "5m", "1h" -> milliseconds. False on bad text/overflow. */
bool mlv_parse_duration_ms(const char *text, uint32_t *out_ms);

const char *mlv_forwarding_name(enum mlv_forwarding f);

#endif
