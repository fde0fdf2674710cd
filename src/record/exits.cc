#include "record/exits.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hotline::record {
namespace {

// The connector's request: the operation, and (Linux 6.6 on) which events to tell; an older
// kernel reads the operation alone and tells every event.
struct ConnectorRequest {
  proc_cn_mcast_op operation;
  uint32_t events;
};

// Every process and thread of the machine is reported, and a burst (a test suite's 2,000 short
// threads) overflowed the socket's default buffer, losing exits: a larger one, and exits only.
constexpr int kReceiveBuffer = 8 << 20;

// Asks the process-events connector to start (PROC_CN_MCAST_LISTEN) or stop telling `fd`.
bool SendOperation(int fd, proc_cn_mcast_op operation) {
  ConnectorRequest request{operation, uint32_t(proc_event::PROC_EVENT_EXIT)};
  alignas(NLMSG_ALIGNTO) char buffer[NLMSG_SPACE(sizeof(cn_msg) + sizeof request)] = {};
  auto* header = reinterpret_cast<nlmsghdr*>(buffer);
  header->nlmsg_len = NLMSG_LENGTH(sizeof(cn_msg) + sizeof request);
  header->nlmsg_type = NLMSG_DONE;
  auto* message = static_cast<cn_msg*>(NLMSG_DATA(header));
  message->id.idx = CN_IDX_PROC;
  message->id.val = CN_VAL_PROC;
  message->len = sizeof request;
  std::memcpy(message->data, &request, sizeof request);
  return send(fd, buffer, header->nlmsg_len, 0) == ssize_t(header->nlmsg_len);
}

}  // namespace

ExitListener::ExitListener() {
  int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) return;
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  address.nl_pid = 0;  // the kernel picks a port
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return;
  }
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kReceiveBuffer, sizeof kReceiveBuffer) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof kReceiveBuffer);
  if (!SendOperation(fd, PROC_CN_MCAST_LISTEN)) {
    close(fd);
    return;
  }
  fd_ = fd;
}

ExitListener::~ExitListener() {
  if (fd_ < 0) return;
  SendOperation(fd_, PROC_CN_MCAST_IGNORE);
  close(fd_);
}

void ExitListener::drain() {
  if (fd_ < 0) return;
  alignas(NLMSG_ALIGNTO) char buffer[8192];
  for (;;) {
    ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    // Events were lost (the /proc reading remains for them); those after them are there.
    if (n < 0 && errno == ENOBUFS) continue;
    if (n <= 0) return;  // nothing more now
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, size_t(n));
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != NLMSG_DONE || h->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg))) continue;
      const auto* message = static_cast<const cn_msg*>(NLMSG_DATA(h));
      if (message->len < sizeof(proc_event)) continue;
      proc_event event;
      std::memcpy(&event, message->data, sizeof event);
      if (event.what != proc_event::PROC_EVENT_EXIT) continue;
      // Every thread's exit is reported; the last one's status is the process's (in a group
      // exit all of them carry it, and a first thread that left early reports 0 first).
      statuses_[event.event_data.exit.process_tgid] = int(event.event_data.exit.exit_code);
    }
  }
}

int ExitListener::statusOf(pid_t pid) const {
  auto it = statuses_.find(pid);
  return it == statuses_.end() ? -1 : it->second;
}

}  // namespace hotline::record
