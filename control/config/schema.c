/* SPDX-License-Identifier: BSD-3-Clause */
/* The key tables of the config file. docs/config.md documents exactly
 * these keys, defaults and ranges (the unit tests check that it does). */
#include "control/config/schema_internal.h"

#include <netinet/in.h>

#include "control/tables/build_pool.h"
#include "control/config/validate_internal.h"
#include "control/tables/maglev.h"
#include "control/config/mbuf_size.h"
#include "control/tables/builder.h"
#include "dataplane/packet/quic.h"

#define N_KEYS(a) (unsigned)(sizeof(a) / sizeof((a)[0]))
#define FIELD(st, f) .offset = offsetof(st, f), .size = sizeof(((st *)0)->f)

static const struct mlv_cfg_enum health_type_names[] = {
	{ "none", MLV_HEALTH_NONE },
	{ "tcp", MLV_HEALTH_TCP },
	{ "http", MLV_HEALTH_HTTP },
	{ "udp", MLV_HEALTH_UDP },
	{ "dns", MLV_HEALTH_DNS },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum idle_names[] = {
	{ "poll", MLV_IDLE_POLL },
	{ "adaptive", MLV_IDLE_ADAPTIVE },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum state_names[] = {
	{ "active", MLV_BACKEND_ACTIVE },
	{ "drain", MLV_BACKEND_DRAIN },
	{ "down", MLV_BACKEND_DOWN },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum icmp_echo_names[] = {
	{ "drop", MLV_ECHO_DROP },
	{ "reply", MLV_ECHO_REPLY },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum table_names[] = {
#define TABLE_NAME(name, text) { text, MLV_TABLE_##name },
	MLV_TABLE_KINDS(TABLE_NAME)
#undef TABLE_NAME
	{ NULL, 0 },
};

/* max_load in thousandths: 1.0 .. MLV_MAX_LOAD_LIMIT (0 = off). */
#define LOAD_MIN 1000
#define LOAD_MAX ((int64_t)(MLV_MAX_LOAD_LIMIT * 1000))

static const struct mlv_cfg_enum protocol_names[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum hash_names[] = {
	{ "5tuple", MLV_HASH_5TUPLE },
	{ "3tuple", MLV_HASH_3TUPLE },
	{ "source", MLV_HASH_SOURCE },
	{ NULL, 0 },
};

static const struct mlv_cfg_enum health_via_names[] = {
	{ "direct", MLV_HEALTH_VIA_DIRECT },
	{ "data_path", MLV_HEALTH_VIA_DATA_PATH },
	{ NULL, 0 },
};

#define HC struct mlv_health_config
static const struct mlv_cfg_key health_keys[] = {
	{ .name = "type", .type = MLV_CT_ENUM, FIELD(HC, type),
	  .def = "none", .sub = health_type_names },
	{ .name = "interval", .type = MLV_CT_DURATION, FIELD(HC, interval_ms),
	  .min = 100, .max = 3600000, .def = "1s" },
	{ .name = "timeout", .type = MLV_CT_DURATION, FIELD(HC, timeout_ms),
	  .min = 10, .max = 3600000, .def = "500ms" },
	{ .name = "port", .type = MLV_CT_UINT, FIELD(HC, port),
	  .min = 1, .max = 65535, .doc_default = "the VIP port" },
	{ .name = "path", .type = MLV_CT_STRING, FIELD(HC, path),
	  .min = 1, .def = "/" },
	{ .name = "expect", .type = MLV_CT_UINT, FIELD(HC, expect_status),
	  .min = 100, .max = 599, .def = "200" },
	{ .name = "host", .type = MLV_CT_STRING, FIELD(HC, host),
	  .doc_default = "the backend address" },
	{ .name = "send", .type = MLV_CT_STRING, FIELD(HC, send),
	  .doc_default = "empty" },
	{ .name = "receive", .type = MLV_CT_STRING, FIELD(HC, receive),
	  .doc_default = "empty (any reply)" },
	{ .name = "query", .type = MLV_CT_STRING, FIELD(HC, query),
	  .min = 1, .doc_default = "none (required for dns)" },
	{ .name = "via", .type = MLV_CT_ENUM, FIELD(HC, via),
	  .def = "direct", .sub = health_via_names },
	{ .name = "rise", .type = MLV_CT_UINT, FIELD(HC, rise),
	  .min = 1, .max = 100, .def = "2" },
	{ .name = "fall", .type = MLV_CT_UINT, FIELD(HC, fall),
	  .min = 1, .max = 100, .def = "3" },
};
#undef HC

static const struct mlv_cfg_map health_map = {
	.what = "a health check", .doc_name = "health",
	.keys = health_keys, .n_keys = N_KEYS(health_keys),
	.finish = mlv_cfg_finish_health,
};

#define SC struct mlv_second_chance_config
static const struct mlv_cfg_key second_chance_keys[] = {
	{ .name = "enabled", .type = MLV_CT_BOOL, FIELD(SC, enabled),
	  .def = "false" },
	{ .name = "window", .type = MLV_CT_DURATION, FIELD(SC, window_ms),
	  .min = 1000, .max = 86400000, .def = "5m" },
};
#undef SC

static const struct mlv_cfg_map second_chance_map = {
	.what = "second_chance", .doc_name = "second_chance",
	.keys = second_chance_keys, .n_keys = N_KEYS(second_chance_keys),
};

#define CT struct mlv_conntrack_config
static const struct mlv_cfg_key conntrack_keys[] = {
	{ .name = "entries_per_worker", .type = MLV_CT_UINT,
	  FIELD(CT, entries_per_worker), .min = 1024, .max = 16777216,
	  .def = "1048576" },
	{ .name = "tcp_timeout", .type = MLV_CT_DURATION, FIELD(CT, tcp_timeout_ms),
	  .min = 1000, .max = 86400000, .def = "300s" },
	{ .name = "tcp_handshake_timeout", .type = MLV_CT_DURATION,
	  FIELD(CT, tcp_handshake_timeout_ms), .min = 1000, .max = 3600000,
	  .def = "5s" },
	{ .name = "tcp_closing_timeout", .type = MLV_CT_DURATION,
	  FIELD(CT, tcp_closing_timeout_ms), .min = 1000, .max = 3600000,
	  .def = "10s" },
	{ .name = "udp_timeout", .type = MLV_CT_DURATION, FIELD(CT, udp_timeout_ms),
	  .min = 1000, .max = 86400000, .def = "30s" },
};
#undef CT

static const struct mlv_cfg_map conntrack_map = {
	.what = "conntrack", .keys = conntrack_keys,
	.n_keys = N_KEYS(conntrack_keys),
};

static const struct mlv_cfg_enum bond_mode_names[] = {
	{ "active-backup", MLV_BOND_ACTIVE_BACKUP },
	{ "802.3ad", MLV_BOND_8023AD },
	{ NULL, 0 },
};

#define BC_ struct mlv_bond_config
static const struct mlv_cfg_key bond_keys[] = {
	{ .name = "members", .type = MLV_CT_STRING_LIST, FIELD(BC_, members),
	  .aux = offsetof(BC_, n_members), .max = MLV_BOND_MAX_MEMBERS,
	  .required = true },
	{ .name = "mode", .type = MLV_CT_ENUM, FIELD(BC_, mode),
	  .def = "active-backup", .sub = bond_mode_names },
	{ .name = "mac", .type = MLV_CT_MAC, FIELD(BC_, mac),
	  .aux = offsetof(BC_, has_mac), .doc_default = "the first member's" },
	{ .name = "link_monitor", .type = MLV_CT_DURATION,
	  FIELD(BC_, link_monitor_ms), .min = 10, .max = 10000, .def = "100ms" },
};
#undef BC_

static const struct mlv_cfg_map bond_map = {
	.what = "bond", .doc_name = NULL, .keys = bond_keys,
	.n_keys = N_KEYS(bond_keys), .finish = mlv_cfg_finish_bond,
};

#define PC struct mlv_port_config
static const struct mlv_cfg_key port_keys[] = {
	{ .name = "name", .type = MLV_CT_NAME, FIELD(PC, name), .min = 1,
	  .required = true },
	{ .name = "device", .type = MLV_CT_STRING, FIELD(PC, device), .min = 1,
	  .required = true },
	{ .name = "address", .type = MLV_CT_IP, FIELD(PC, address),
	  .min = MLV_AF_INET, .doc_default = "none" },
	{ .name = "address6", .type = MLV_CT_IP, FIELD(PC, address6),
	  .min = MLV_AF_INET6, .doc_default = "none" },
	{ .name = "next_hop", .type = MLV_CT_NEXT_HOP, FIELD(PC, next_hop_auto),
	  .aux = offsetof(PC, next_hop), .def = "auto" },
	{ .name = "next_hop6", .type = MLV_CT_MAC, FIELD(PC, next_hop6),
	  .aux = offsetof(PC, has_next_hop6), .doc_default = "next_hop" },
	{ .name = "tx_port", .type = MLV_CT_NAME, FIELD(PC, tx_port),
	  .min = 1, .doc_default = "the port itself" },
	{ .name = "mtu", .type = MLV_CT_UINT, FIELD(PC, mtu),
	  .min = 576, .max = 9216, .def = "1500" },
	{ .name = "exception", .type = MLV_CT_BOOL, FIELD(PC, exception),
	  .def = "false" },
	{ .name = "host_tap", .type = MLV_CT_BOOL, FIELD(PC, host_tap),
	  .def = "false" },
	{ .name = "host_prefix", .type = MLV_CT_UINT, FIELD(PC, host_prefix),
	  .min = 1, .max = 32, .def = "24" },
	{ .name = "host_prefix6", .type = MLV_CT_UINT, FIELD(PC, host_prefix6),
	  .min = 1, .max = 128, .def = "64" },
	{ .name = "bond", .type = MLV_CT_MAP, FIELD(PC, bond),
	  .doc_default = "none", .sub = &bond_map },
	{ .name = "vlan", .type = MLV_CT_UINT, FIELD(PC, vlan),
	  .min = 1, .max = 4094, .doc_default = "none (untagged)" },
};
#undef PC

static const struct mlv_cfg_map port_map = {
	.what = "a port", .keys = port_keys, .n_keys = N_KEYS(port_keys),
};

static const struct mlv_cfg_list port_list = {
	.item = "port", .items = "ports",
	.elem_size = sizeof(struct mlv_port_config),
	.pos_offset = offsetof(struct mlv_port_config, pos),
	.max = MLV_MAX_PORTS, .elem = &port_map,
};

#define RB struct mlv_reload_budget
static const struct mlv_cfg_key budget_keys[] = {
	{ .name = "vips_removed", .type = MLV_CT_UINT,
	  FIELD(RB, max_vips_removed_pct), .min = 0, .max = 100, .def = "25" },
	{ .name = "backends_lost", .type = MLV_CT_UINT,
	  FIELD(RB, max_backends_lost_pct), .min = 0, .max = 100, .def = "50" },
	{ .name = "connections_moved", .type = MLV_CT_UINT,
	  FIELD(RB, max_connections_moved_pct), .min = 0, .max = 100,
	  .def = "50" },
};
#undef RB

static const struct mlv_cfg_map budget_map = {
	.what = "control.reload_budget", .keys = budget_keys,
	.n_keys = N_KEYS(budget_keys),
};

#define CF struct mlv_config
static const struct mlv_cfg_key dataplane_keys[] = {
	{ .name = "eal_args", .type = MLV_CT_STRING_LIST, FIELD(CF, eal_args),
	  .aux = offsetof(CF, n_eal_args), .max = MLV_CFG_MAX_EAL_ARGS,
	  .doc_default = "[]" },
	{ .name = "workers", .type = MLV_CT_UINT, FIELD(CF, workers),
	  .min = 1, .max = MLV_MAX_WORKERS, .def = "1" },
	{ .name = "idle", .type = MLV_CT_ENUM, FIELD(CF, idle),
	  .def = "adaptive", .sub = idle_names },
	{ .name = "idle_max_sleep_us", .type = MLV_CT_UINT,
	  FIELD(CF, idle_max_sleep_us), .min = 0, .max = 100000, .def = "100" },
	{ .name = "ports", .type = MLV_CT_LIST, FIELD(CF, ports),
	  .aux = offsetof(CF, n_ports), .required = true, .sub = &port_list },
	{ .name = "conntrack", .type = MLV_CT_MAP, FIELD(CF, conntrack),
	  .sub = &conntrack_map },
	/* 0: sized by the daemon (dataplane/worker/port.c); the finish hook checks
	 * mbuf_size against the ports' MTUs */
	{ .name = "mbufs", .type = MLV_CT_UINT, FIELD(CF, mbufs),
	  .min = 0, .max = MLV_CFG_MAX_MBUFS, .def = "0" },
	{ .name = "mbuf_size", .type = MLV_CT_UINT, FIELD(CF, mbuf_size),
	  .min = 0, .max = MLV_MBUF_MAX_SIZE, .def = "0" },
};

static const struct mlv_cfg_map dataplane_map = {
	.what = "dataplane", .keys = dataplane_keys,
	.n_keys = N_KEYS(dataplane_keys), .finish = mlv_cfg_finish_dataplane,
};

static const struct mlv_cfg_key control_keys[] = {
	{ .name = "socket", .type = MLV_CT_STRING, FIELD(CF, control_socket),
	  .min = 1, .max = MLV_CFG_SOCKET_PATH_MAX,
	  .def = "/run/maglevd/maglevd.sock" },
	{ .name = "socket_mode", .type = MLV_CT_FILE_MODE,
	  FIELD(CF, control_socket_mode), .def = "0660" },
	{ .name = "metrics_listen", .type = MLV_CT_HOST_PORT,
	  FIELD(CF, metrics_listen), .def = "127.0.0.1:9478" },
	{ .name = "metrics_timeout", .type = MLV_CT_DURATION,
	  FIELD(CF, metrics_limits.timeout_ms), .min = 1000, .max = 300000,
	  .def = "5s" },
	{ .name = "metrics_max_connections", .type = MLV_CT_UINT,
	  FIELD(CF, metrics_limits.max_connections), .min = 1, .max = 65536,
	  .def = "4096" },
	/* the finish hook checks it against metrics_max_connections */
	{ .name = "metrics_max_connections_per_address", .type = MLV_CT_UINT,
	  FIELD(CF, metrics_limits.max_per_address), .min = 1, .max = 65536,
	  .def = "2048" },
	{ .name = "metrics_backend_series", .type = MLV_CT_BOOL,
	  FIELD(CF, metrics_backend_series), .def = "true" },
	{ .name = "build_threads", .type = MLV_CT_UINT,
	  FIELD(CF, build_threads), .min = 1, .max = MLV_BUILD_MAX_THREADS,
	  .def = "1" },
	/* the finish hook parses the list */
	{ .name = "build_cpus", .type = MLV_CT_STRING, FIELD(CF, build_cpus),
	  .min = 1, .doc_default = "the control thread's CPUs" },
	{ .name = "socket_group", .type = MLV_CT_STRING,
	  FIELD(CF, socket_group), .min = 1,
	  .doc_default = "the daemon's group (root)" },
	{ .name = "admin_group", .type = MLV_CT_STRING, FIELD(CF, admin_group),
	  .min = 1, .doc_default = "none: root only" },
	{ .name = "reload_budget", .type = MLV_CT_MAP,
	  FIELD(CF, reload_budget), .sub = &budget_map },
	{ .name = "state_file", .type = MLV_CT_STRING, FIELD(CF, state_file),
	  .min = 1, .doc_default = "the socket's path + \".state\"" },
};

static const struct mlv_cfg_map control_map = {
	.what = "control", .keys = control_keys, .n_keys = N_KEYS(control_keys),
	.finish = mlv_cfg_finish_control,
};

static const struct mlv_cfg_key announce_keys[] = {
	{ .name = "table", .type = MLV_CT_UINT, FIELD(CF, announce_table),
	  .min = 0, .max = UINT32_MAX, .def = "0" },
	{ .name = "drain_time", .type = MLV_CT_DURATION,
	  FIELD(CF, announce_drain_ms), .min = 0, .max = 600000, .def = "2s" },
	{ .name = "device", .type = MLV_CT_NAME, FIELD(CF, announce_device),
	  .min = 1, .max = MLV_IFNAME_MAX - 1, .def = "maglevd-vips" },
};

static const struct mlv_cfg_map announce_map = {
	.what = "announce", .keys = announce_keys,
	.n_keys = N_KEYS(announce_keys), .finish = mlv_cfg_finish_announce,
};

static const struct mlv_cfg_key defaults_announce_keys[] = {
	{ .name = "min_backends", .type = MLV_CT_UINT,
	  FIELD(CF, default_min_backends), .min = 0,
	  .max = MLV_MAGLEV_MAX_BACKENDS, .def = "1" },
};

static const struct mlv_cfg_map defaults_announce_map = {
	.what = "defaults.announce", .keys = defaults_announce_keys,
	.n_keys = N_KEYS(defaults_announce_keys),
};

static const struct mlv_cfg_key defaults_keys[] = {
	{ .name = "table_size", .type = MLV_CT_TABLE_SIZE,
	  FIELD(CF, default_table_size), .def = "65537" },
	{ .name = "forwarding", .type = MLV_CT_ENUM,
	  FIELD(CF, default_forwarding), .def = "ipip",
	  .sub = mlv_cfg_forwarding_names },
	{ .name = "health", .type = MLV_CT_MAP, FIELD(CF, default_health),
	  .sub = &health_map },
	{ .name = "table", .type = MLV_CT_ENUM, FIELD(CF, default_table),
	  .def = "maglev", .sub = table_names },
	{ .name = "max_load", .type = MLV_CT_LOAD_FACTOR,
	  FIELD(CF, default_max_load), .min = LOAD_MIN, .max = LOAD_MAX,
	  .def = "0" },
	{ .name = "vnodes", .type = MLV_CT_UINT, FIELD(CF, default_vnodes),
	  .min = 1, .max = MLV_RING_MAX_VNODES, .def = "10" },
	{ .name = "mss_clamp", .type = MLV_CT_MSS_CLAMP,
	  FIELD(CF, default_mss_clamp), .min = MLV_MSS_CLAMP_MIN,
	  .max = MLV_MSS_CLAMP_MAX, .def = "auto" },
	{ .name = "announce", .type = MLV_CT_MAP, .offset = 0,
	  .sub = &defaults_announce_map },
	{ .name = "icmp_echo", .type = MLV_CT_ENUM,
	  FIELD(CF, default_icmp_echo), .def = "drop", .sub = icmp_echo_names },
	{ .name = "new_flows_per_second", .type = MLV_CT_UINT,
	  FIELD(CF, default_new_flows_per_second), .min = 0,
	  .max = MLV_FLOW_RATE_MAX, .def = "0" },
	{ .name = "new_flows_burst", .type = MLV_CT_UINT,
	  FIELD(CF, default_new_flows_burst), .min = 0,
	  .max = MLV_FLOW_BURST_MAX, .def = "0" },
	{ .name = "hash", .type = MLV_CT_ENUM, FIELD(CF, default_hash),
	  .def = "5tuple", .sub = hash_names },
	{ .name = "second_chance", .type = MLV_CT_MAP,
	  FIELD(CF, default_second_chance), .sub = &second_chance_map },
	{ .name = "ipip_source", .type = MLV_CT_PREFIX,
	  FIELD(CF, default_ipip_source), .min = MLV_AF_INET,
	  .max = MLV_IPIP_SOURCE_MIN_LEN, .doc_default = "none" },
	{ .name = "ipip_source6", .type = MLV_CT_PREFIX,
	  FIELD(CF, default_ipip_source6), .min = MLV_AF_INET6,
	  .max = MLV_IPIP_SOURCE6_MIN_LEN, .doc_default = "none" },
};

static const struct mlv_cfg_map defaults_map = {
	.what = "defaults", .keys = defaults_keys,
	.n_keys = N_KEYS(defaults_keys),
};

#define BC struct mlv_backend_config
static const struct mlv_cfg_key backend_keys[] = {
	{ .name = "name", .type = MLV_CT_NAME, FIELD(BC, name), .min = 1,
	  .required = true },
	{ .name = "address", .type = MLV_CT_IP, FIELD(BC, address),
	  .required = true },
	{ .name = "weight", .type = MLV_CT_UINT, FIELD(BC, weight),
	  .min = 0, .max = MLV_MAGLEV_MAX_WEIGHT, .def = "100" },
	{ .name = "state", .type = MLV_CT_ENUM, FIELD(BC, state),
	  .def = "active", .sub = state_names },
	{ .name = "mac", .type = MLV_CT_MAC, FIELD(BC, mac),
	  .aux = offsetof(BC, has_mac), .doc_default = "none" },
	{ .name = "quic_server_id", .type = MLV_CT_UINT,
	  FIELD(BC, quic_server_id), .min = 1, .max = MLV_QUIC_SERVER_ID_MAX,
	  .doc_default = "none" },
};
#undef BC

static const struct mlv_cfg_map backend_map = {
	.what = "a backend", .keys = backend_keys, .n_keys = N_KEYS(backend_keys),
};

static const struct mlv_cfg_list backend_list = {
	.item = "backend", .items = "backends",
	.elem_size = sizeof(struct mlv_backend_config),
	.pos_offset = offsetof(struct mlv_backend_config, pos),
	.max = MLV_MAGLEV_MAX_BACKENDS, .elem = &backend_map,
};

#define VC struct mlv_vip_config
static const struct mlv_cfg_key vip_announce_keys[] = {
	{ .name = "min_backends", .type = MLV_CT_UINT, FIELD(VC, min_backends),
	  .min = 0, .max = MLV_MAGLEV_MAX_BACKENDS,
	  .doc_default = "defaults.announce.min_backends" },
};

static const struct mlv_cfg_map vip_announce_map = {
	.what = "a VIP's announce",
	.keys = vip_announce_keys, .n_keys = N_KEYS(vip_announce_keys),
};

static const struct mlv_cfg_key vip_keys[] = {
	{ .name = "name", .type = MLV_CT_NAME, FIELD(VC, name), .min = 1,
	  .required = true },
	{ .name = "address", .type = MLV_CT_IP, FIELD(VC, address),
	  .required = true },
	{ .name = "port", .type = MLV_CT_PORT_SPEC, FIELD(VC, port),
	  .aux = offsetof(VC, port_last), .required = true },
	{ .name = "protocol", .type = MLV_CT_ENUM, FIELD(VC, protocol),
	  .required = true, .sub = protocol_names },
	{ .name = "forwarding", .type = MLV_CT_ENUM, FIELD(VC, forwarding),
	  .doc_default = "defaults.forwarding", .sub = mlv_cfg_forwarding_names },
	{ .name = "gue_port", .type = MLV_CT_UINT, FIELD(VC, gue_port),
	  .min = 1, .max = 65535, .def = "6080" },
	{ .name = "table_size", .type = MLV_CT_TABLE_SIZE, FIELD(VC, table_size),
	  .doc_default = "defaults.table_size" },
	{ .name = "health", .type = MLV_CT_MAP, FIELD(VC, health),
	  .doc_default = "defaults.health", .sub = &health_map },
	{ .name = "table", .type = MLV_CT_ENUM, FIELD(VC, table),
	  .doc_default = "defaults.table", .sub = table_names },
	{ .name = "max_load", .type = MLV_CT_LOAD_FACTOR, FIELD(VC, max_load),
	  .min = LOAD_MIN, .max = LOAD_MAX, .doc_default = "defaults.max_load" },
	{ .name = "vnodes", .type = MLV_CT_UINT, FIELD(VC, vnodes),
	  .min = 1, .max = MLV_RING_MAX_VNODES,
	  .doc_default = "defaults.vnodes" },
	{ .name = "announce", .type = MLV_CT_MAP, .offset = 0,
	  .sub = &vip_announce_map },
	{ .name = "icmp_echo", .type = MLV_CT_ENUM, FIELD(VC, icmp_echo),
	  .doc_default = "defaults.icmp_echo", .sub = icmp_echo_names },
	{ .name = "new_flows_per_second", .type = MLV_CT_UINT,
	  FIELD(VC, new_flows_per_second), .min = 0, .max = MLV_FLOW_RATE_MAX,
	  .doc_default = "defaults.new_flows_per_second" },
	{ .name = "new_flows_burst", .type = MLV_CT_UINT,
	  FIELD(VC, new_flows_burst), .min = 0, .max = MLV_FLOW_BURST_MAX,
	  .doc_default = "defaults.new_flows_burst" },
	{ .name = "quic", .type = MLV_CT_BOOL, FIELD(VC, quic), .def = "false" },
	{ .name = "hash", .type = MLV_CT_ENUM, FIELD(VC, hash),
	  .doc_default = "defaults.hash", .sub = hash_names },
	{ .name = "source_prefix6", .type = MLV_CT_UINT,
	  FIELD(VC, source_prefix6), .min = 0, .max = 128, .def = "128" },
	/* TCP VIPs only: the VIP's finish hook refuses it on UDP ones */
	{ .name = "mss_clamp", .type = MLV_CT_MSS_CLAMP, FIELD(VC, mss_clamp),
	  .min = MLV_MSS_CLAMP_MIN, .max = MLV_MSS_CLAMP_MAX,
	  .doc_default = "defaults.mss_clamp" },
	/* gue TCP VIPs only: the VIP's finish hook refuses it elsewhere */
	{ .name = "second_chance", .type = MLV_CT_MAP, FIELD(VC, second_chance),
	  .doc_default = "defaults.second_chance", .sub = &second_chance_map },
	/* ipip VIPs only: the VIP's finish hook refuses them elsewhere */
	{ .name = "ipip_source", .type = MLV_CT_PREFIX, FIELD(VC, ipip_source),
	  .min = MLV_AF_INET, .max = MLV_IPIP_SOURCE_MIN_LEN,
	  .doc_default = "defaults.ipip_source" },
	{ .name = "ipip_source6", .type = MLV_CT_PREFIX, FIELD(VC, ipip_source6),
	  .min = MLV_AF_INET6, .max = MLV_IPIP_SOURCE6_MIN_LEN,
	  .doc_default = "defaults.ipip_source6" },
	{ .name = "allow", .type = MLV_CT_PREFIX_LIST, FIELD(VC, allow),
	  .aux = offsetof(VC, n_allow), .max = MLV_VIP_ACL_MAX,
	  .doc_default = "[]" },
	{ .name = "deny", .type = MLV_CT_PREFIX_LIST, FIELD(VC, deny),
	  .aux = offsetof(VC, n_deny), .max = MLV_VIP_ACL_MAX,
	  .doc_default = "[]" },
	/* Last: its checks (in the VIP's finish hook) read the keys above. */
	{ .name = "backends", .type = MLV_CT_LIST, FIELD(VC, backends),
	  .aux = offsetof(VC, n_backends), .doc_default = "[]",
	  .sub = &backend_list },
};
#undef VC

static const struct mlv_cfg_map vip_map = {
	.what = "a VIP", .keys = vip_keys, .n_keys = N_KEYS(vip_keys),
	.finish = mlv_cfg_finish_vip,
};

static const struct mlv_cfg_list vip_list = {
	.item = "VIP", .items = "VIPs",
	.elem_size = sizeof(struct mlv_vip_config),
	.pos_offset = offsetof(struct mlv_vip_config, pos),
	.max = MLV_MAX_VIPS, .elem = &vip_map, .init = mlv_cfg_init_vip,
};

/* Order matters: dataplane (ports) and defaults are converted before
 * vips, whose checks and inherited values depend on them. The dataplane,
 * control and defaults sections live directly in struct mlv_config, so
 * their offset is 0. */
static const struct mlv_cfg_key root_keys[] = {
	{ .name = "dataplane", .type = MLV_CT_MAP, .offset = 0,
	  .required = true, .restart_only = true, .sub = &dataplane_map },
	{ .name = "control", .type = MLV_CT_MAP, .offset = 0,
	  .restart_only = true, .sub = &control_map },
	{ .name = "announce", .type = MLV_CT_MAP, .offset = 0,
	  .sub = &announce_map },
	{ .name = "defaults", .type = MLV_CT_MAP, .offset = 0,
	  .sub = &defaults_map },
	{ .name = "include", .type = MLV_CT_STRING_LIST, FIELD(CF, includes),
	  .aux = offsetof(CF, n_includes), .max = MLV_CONFIG_MAX_INCLUDES,
	  .doc_default = "[]" },
	{ .name = "vips", .type = MLV_CT_LIST, FIELD(CF, vips),
	  .aux = offsetof(CF, n_vips), .doc_default = "[]", .sub = &vip_list },
};
#undef CF

const struct mlv_cfg_map mlv_cfg_root = {
	.what = "the top level", .keys = root_keys, .n_keys = N_KEYS(root_keys),
	.finish = mlv_cfg_finish_root,
};

_Static_assert(N_KEYS(vip_keys) <= MLV_CFG_MAX_KEYS, "raise MLV_CFG_MAX_KEYS");
_Static_assert(N_KEYS(defaults_keys) <= MLV_CFG_MAX_KEYS, "raise MLV_CFG_MAX_KEYS");
_Static_assert(N_KEYS(health_keys) <= MLV_CFG_MAX_KEYS, "raise MLV_CFG_MAX_KEYS");
_Static_assert(N_KEYS(port_keys) <= MLV_CFG_MAX_KEYS, "raise MLV_CFG_MAX_KEYS");
_Static_assert(N_KEYS(dataplane_keys) <= MLV_CFG_MAX_KEYS, "raise MLV_CFG_MAX_KEYS");
