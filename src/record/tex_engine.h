// The profiling pdfTeX (frontends/tex, docs/tex.md) as `hotline tex` uses it: built on first use
// by frontends/tex/build-pdftex.sh into the build folder, with the formats it needs (made by
// that engine from Debian's texlive-base and texlive-latex-base) cached beside it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::record {

struct TexEngine {
  std::string binary;       // the profiling pdftex
  std::string formats_dir;  // where its formats are cached
  std::string key;          // what it was built from: formats made by another key are stale
};

// What a TeX command line names: pdflatex, pdftex (plain with e-TeX), tex (Knuth's plain).
struct TexFormatSpec {
  std::string name;      // the format's (and kpathsea's program) name
  std::string ini_file;  // what -ini reads
  std::string package;   // the Debian package that has it
  std::vector<std::string> ini_args;
};

// The format a command's first word asks for, or nullptr when hotline does not know it.
const TexFormatSpec* FindTexFormat(const std::string& command);
// The command names FindTexFormat knows, for messages.
std::string KnownTexCommands();

// Builds the engine when missing or out of date (build-pdftex.sh decides, in a second when
// nothing changed) and returns it. Its progress goes to stderr.
Expected<TexEngine> EnsureTexEngine();

// The format file for `spec`, made by `engine` on first use.
Expected<std::string> EnsureTexFormat(const TexEngine& engine, const TexFormatSpec& spec);

// Runs the engine: `args` are the user's (after the command name); `env` is added to the
// environment. Returns the exit status as a shell reports it (128+N for a death by signal N).
int RunTexEngine(const TexEngine& engine, const TexFormatSpec& spec, const std::string& format,
                 const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env);

}  // namespace hotline::record
