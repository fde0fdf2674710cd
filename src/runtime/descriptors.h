// The runtime's own file descriptors (the profile, the per-thread perf events), kept out of the
// program's way: moved to high numbers, invisible to the program's close, close_range and
// closefrom, handed over when the program dup2s onto one of their numbers (interpose.cc).
// Raw system calls get past all this: owners check a descriptor's identity before using it.
#pragma once

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

}  // namespace hotline::rt
