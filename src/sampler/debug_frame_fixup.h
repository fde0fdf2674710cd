// fpc 3.2 writes its .debug_frame FDEs with an 8-byte CIE pointer although the entries are
// 32-bit DWARF, and separates its units' entries with zero words. elfutils reads neither, so a
// stack sampled in Free Pascal code would stop at its first frame. ReadableCfiFile gives the
// unwinder a copy of such a file whose .debug_frame says the same thing in standard form,
// entry for entry at the same offsets: each FDE's address and range move up over the extra
// pointer half and its instructions end in DW_CFA_nop padding, and each zero word becomes
// padding of the entry before it.
#pragma once

#include <string>

namespace hotline::sampler {

// `path` itself when its .debug_frame (if any) is standard, else a file of the recorder's own
// (/proc/self/fd/N) holding the corrected copy. Made once per path. Not thread-safe.
std::string ReadableCfiFile(const std::string& path);

}  // namespace hotline::sampler
