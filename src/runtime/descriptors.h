// The runtime's own file descriptors (the profile, the per-thread perf events), kept out of the
// program's way: moved to high numbers, invisible to the program's close, close_range and
// closefrom, handed over when the program dup2s onto one of their numbers (interpose.cc).
// Raw system calls get past all this: owners check a descriptor's identity before using it.
#pragma once

#include <sys/types.h>

#include <cerrno>

namespace hotline::rt {

// Called before the program takes an owned descriptor's number (dup2/dup3 onto it), with the
// descriptor still open and already forgotten: the owner may keep a duplicate (adopting it).
using DescriptorLost = void (*)(int fd);

// Moves `fd` to a number well above the ones programs use, marks it the runtime's and returns
// the new number (`fd` itself when it cannot be moved).
int AdoptDescriptor(int fd, DescriptorLost lost);
// Closes one of the runtime's own descriptors for real.
void CloseOwnDescriptor(int fd);
// Forgets ownership without closing.
void ForgetDescriptor(int fd);
bool IsOwnDescriptor(int fd);
// True when an owned descriptor lies in [first, last].
bool OwnDescriptorIn(unsigned first, unsigned last);
// Before the program's dup2/dup3 onto `fd`: tells the owner (see DescriptorLost).
void HandOverDescriptor(int fd);
// close_range(2) for the program: closes [first, last] except the runtime's descriptors.
int CloseRangeExceptOwn(unsigned first, unsigned last, int flags);

// A descriptor the runtime creates sits, for an instant, at the lowest free number, which the
// program may be about to name from another thread: its dup2 onto that number would take the
// descriptor over (the runtime then writing into the program's file, and closing it), its close
// would close it (a shell then fails to dup2 from a descriptor it still had). So the runtime
// creates descriptors and moves them high while holding CreatingDescriptor, and the program's
// close, dup2, dup3, close_range and closefrom wait for it (ProgramDescriptorCall). The
// program's own opens do not wait: one of them may get the next number up instead.
class CreatingDescriptor {
 public:
  CreatingDescriptor();
  ~CreatingDescriptor();
  CreatingDescriptor(const CreatingDescriptor&) = delete;
  CreatingDescriptor& operator=(const CreatingDescriptor&) = delete;

 private:
  bool locked_;
};
class ProgramDescriptorCall {
 public:
  ProgramDescriptorCall();
  ~ProgramDescriptorCall();
  ProgramDescriptorCall(const ProgramDescriptorCall&) = delete;
  ProgramDescriptorCall& operator=(const ProgramDescriptorCall&) = delete;

 private:
  bool locked_;
};
// A forked child starts with nothing held (another thread may have held it at the fork).
void ResetDescriptorLockAfterFork();

// `create()` (which returns a new descriptor or -1 with errno) run as above, its descriptor
// moved high and owned. Close it with CloseOwnDescriptor.
template <typename Create>
int CreateOwned(Create create, DescriptorLost lost) {
  CreatingDescriptor hold;
  int fd = create();
  if (fd < 0) return fd;
  int err = errno;
  fd = AdoptDescriptor(fd, lost);
  errno = err;
  return fd;
}
// open(2) (with O_CLOEXEC) as CreateOwned.
int OpenOwned(const char* path, int flags, mode_t mode = 0);

}  // namespace hotline::rt
