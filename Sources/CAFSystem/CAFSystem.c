#include "CAFSystem.h"

#include <stdlib.h>  /* defines __GLIBC__ under glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cafsys_open_route_change_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void cafsys_trim_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

extern char **environ;

char **cafsys_environment(void) {
    return environ;
}
