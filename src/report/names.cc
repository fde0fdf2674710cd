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

// Template arguments nested deeper than `keep` levels become "…": 0 collapses them all
// (std::vector<…>::push_back), 1 keeps the outermost (std::vector<std::pair<…>>::push_back).
std::string CollapseTemplates(const std::string& name, int keep) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size();) {
    if (size_t op = OperatorAt(name, i); op) {
      if (depth <= keep) out.append(name, i, op);
      i += op;
      continue;
    }
    char c = name[i++];
    if (c == '<') {
      ++depth;
      if (depth <= keep) out += '<';
      if (depth == keep + 1) out += std::string("<") + kEllipsis;
    } else if (c == '>' && depth > 0) {
      if (depth <= keep + 1) out += '>';
      --depth;
    } else if (depth <= keep) {
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

// Drops the return type the demangler writes before a function template's name
// ("void std::vector<…>::_M_realloc_insert<…>(…)"); conversion operators and
// "operator new" keep their spaces, "(anonymous namespace)" is a scope.
std::string DropReturnType(const std::string& name) {
  size_t space = std::string::npos;
  int parens = 0, angles = 0;  // angles: <…> and {lambda at …} alike
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '(' && parens == 0 && angles == 0 && i > 0 && name[i - 1] != ' ' &&
        name.compare(i, 21, "(anonymous namespace)") != 0)
      break;  // the parameter list
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (c == '<' || c == '{') ++angles;
    if (c == '>' || c == '}') --angles;
    if (c == ' ' && parens == 0 && angles == 0) {
      if (name.compare(0, i, "operator") == 0 || name.substr(0, i).ends_with("::operator") ||
          name.substr(0, i).ends_with(" operator"))
        return name;
      space = i;
    }
  }
  if (space == std::string::npos || name.find("operator") < space) return name;
  return name.substr(space + 1);
}

}  // namespace

std::string ShortName(const std::string& name, bool keep_parameters) {
  // C names, and the pseudo-functions ([kernel], [unknown]...), stay as they are.
  if (name.empty() || name[0] == '[' || name.find_first_of("<(:") == std::string::npos) return name;
  std::string collapsed = DropReturnType(CollapseTemplates(name, 0));
  return keep_parameters ? collapsed : DropParameters(collapsed);
}

namespace {

// The ever longer spellings of a name, until the whole: without parameters, with them, then
// with one, two and three levels of template arguments.
constexpr int kLevels = 6;
std::string Spelling(const std::string& name, int level) {
  if (level == 0) return ShortName(name, false);
  if (level == 1) return ShortName(name, true);
  if (level < kLevels - 1) return DropReturnType(CollapseTemplates(name, level - 1));
  return name;
}

}  // namespace

std::vector<std::string> ShortNames(const model::Profile& profile) {
  // Each function starts at its shortest spelling; functions that would look alike (overloads,
  // instantiations of one template) are spelt longer together until they differ.
  std::vector<int> level(profile.functions.size(), 0);
  std::vector<std::string> names(profile.functions.size());
  for (size_t i = 0; i < names.size(); ++i) names[i] = Spelling(profile.functions[i].name, 0);
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, std::set<std::string>> full_names;  // spelling → the full names
    for (size_t i = 0; i < names.size(); ++i)
      full_names[names[i]].insert(profile.functions[i].name);
    for (size_t i = 0; i < names.size(); ++i) {
      if (full_names[names[i]].size() < 2 || level[i] == kLevels - 1) continue;
      names[i] = Spelling(profile.functions[i].name, ++level[i]);
      changed = true;
    }
  }
  return names;
}

}  // namespace hotline::report
