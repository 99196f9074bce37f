/* raw_sockets — no raw, packet, netlink or exotic socket families: with no
 * network, nothing but local TCP/UDP/Unix sockets may be created. AF_VSOCK
 * would reach the hypervisor, AF_ALG the kernel crypto API, AF_NETLINK the
 * kernel's configuration interfaces. */
#include "probe.h"

#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

static long a_socket(long spec)
{
	int fam = (int)(spec >> 32), type = (int)((spec >> 16) & 0xffff), proto = (int)(spec & 0xffff);
	return socket(fam, type, proto);
}

#define SPEC(f, t, p) (((long)(f) << 32) | ((long)(t) << 16) | (long)(p))

int main(void)
{
	char params[256];
	probe_params(params, sizeof params);
	attempt("socket(AF_PACKET, SOCK_RAW, ETH_P_ALL)", a_socket, SPEC(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
	attempt("socket(AF_PACKET, SOCK_DGRAM)", a_socket, SPEC(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)));
	attempt("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", a_socket, SPEC(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	attempt("socket(AF_INET, SOCK_RAW, IPPROTO_RAW)", a_socket, SPEC(AF_INET, SOCK_RAW, IPPROTO_RAW));
	attempt("socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6)", a_socket, SPEC(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
	attempt("socket(AF_NETLINK, NETLINK_ROUTE)", a_socket, SPEC(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
	attempt("socket(AF_NETLINK, NETLINK_AUDIT)", a_socket, SPEC(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT));
	attempt("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", a_socket, SPEC(AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT));
	attempt("socket(AF_NETLINK, NETLINK_NETFILTER)", a_socket, SPEC(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER));
	attempt("socket(AF_NETLINK, NETLINK_GENERIC)", a_socket, SPEC(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC));
	attempt("socket(AF_VSOCK, SOCK_STREAM)", a_socket, SPEC(40 /* AF_VSOCK */, SOCK_STREAM, 0));
	attempt("socket(AF_ALG, SOCK_SEQPACKET)", a_socket, SPEC(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
	attempt("socket(AF_KEY, SOCK_RAW)", a_socket, SPEC(15 /* AF_KEY */, SOCK_RAW, 2));
	attempt("socket(AF_BLUETOOTH, SOCK_RAW)", a_socket, SPEC(31 /* AF_BLUETOOTH */, SOCK_RAW, 1));
	attempt("socket(AF_CAN, SOCK_RAW)", a_socket, SPEC(29 /* AF_CAN */, SOCK_RAW, 1));
	attempt("socket(AF_XDP, SOCK_RAW)", a_socket, SPEC(44 /* AF_XDP */, SOCK_RAW, 0));
	attempt("socket(AF_TIPC, SOCK_RDM)", a_socket, SPEC(30 /* AF_TIPC */, SOCK_RDM, 0));
	attempt("socket(AF_RDS, SOCK_SEQPACKET)", a_socket, SPEC(21 /* AF_RDS */, SOCK_SEQPACKET, 0));
	return finish();
}
