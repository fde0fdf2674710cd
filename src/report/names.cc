#include "report/names.h"

#include <map>
#include <set>

namespace hotline::report {
namespace {

constexpr const char* kEllipsis = "…";

// The length of the operator's token at `at` ("operator<<", "operator()"...), 0 if none.
size_t OperatorAt(const std::string& name, size_t at) {
  static const char* kSymbols[] = {
      "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "[]", "<", ">"};
  if (name.compare(at, 8, "operator") != 0) return 0;
  size_t after = at + 8;
  for (const char* symbol : kSymbols) {
    size_t n = std::char_traits<char>::length(symbol);
    if (name.compare(after, n, symbol) == 0) return 8 + n;
  }
  return 8;
}

std::string CollapseTemplates(const std::string& name) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size();) {
    if (size_t op = OperatorAt(name, i); op) {
      if (depth == 0) out.append(name, i, op);
      i += op;
      continue;
    }
    char c = name[i++];
    if (c == '<') {
      if (depth++ == 0) out += std::string("<") + kEllipsis;
    } else if (c == '>' && depth > 0) {
      if (--depth == 0) out += '>';
    } else if (depth == 0) {
      out += c;
    }
  }
  return depth == 0 ? out : name;  // unbalanced: leave it as it was
}

// Drops the trailing parameter list (and the qualifiers after it).
std::string DropParameters(const std::string& name) {
  size_t close = name.rfind(')');
  if (close == std::string::npos) return name;
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) {
      // "(anonymous namespace)" at the start is a scope, and "operator()" a name: neither is
      // a parameter list.
      if (i == 0 || (i >= 8 && name.compare(i - 8, 8, "operator") == 0)) return name;
      return name.substr(0, i);
    }
  }
  return name;
}

}  // namespace

std::string ShortName(const std::string& name, bool keep_parameters) {
  // C names, and the pseudo-functions ([kernel], [unknown]...), stay as they are.
  if (name.empty() || name[0] == '[' || name.find_first_of("<(:") == std::string::npos) return name;
  std::string collapsed = CollapseTemplates(name);
  return keep_parameters ? collapsed : DropParameters(collapsed);
}

std::vector<std::string> ShortNames(const model::Profile& profile) {
  std::vector<std::string> names;
  names.reserve(profile.functions.size());
  std::map<std::string, std::set<std::string>> full_names;  // short name → the full ones
  for (const model::Function& f : profile.functions) {
    names.push_back(ShortName(f.name, false));
    full_names[names.back()].insert(f.name);
  }
  // Overloads that would look alike keep their parameter lists; instantiations of one template
  // that still look alike (run<…>(int) for two lambdas) keep their whole names.
  std::map<std::string, std::set<std::string>> with_parameters;
  for (size_t i = 0; i < names.size(); ++i)
    if (full_names[names[i]].size() > 1) {
      names[i] = ShortName(profile.functions[i].name, true);
      with_parameters[names[i]].insert(profile.functions[i].name);
    }
  for (size_t i = 0; i < names.size(); ++i)
    if (auto it = with_parameters.find(names[i]);
        it != with_parameters.end() && it->second.size() > 1)
      names[i] = profile.functions[i].name;
  return names;
}

}  // namespace hotline::report
