#include "symbolize/variables.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstring>
#include <memory>

namespace hotline::symbolize {
namespace {

const char* Name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

bool EndsWithPath(const std::string& path, const std::string& suffix) {
  if (suffix.empty() || path.size() < suffix.size()) return false;
  if (path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  return path.size() == suffix.size() || path[path.size() - suffix.size() - 1] == '/';
}

// The variable's fixed address: a location that is exactly DW_OP_addr.
bool FixedAddress(Dwarf_Die* die, uint64_t* address) {
  Dwarf_Attribute attr;
  if (!dwarf_attr(die, DW_AT_location, &attr)) return false;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation(&attr, &ops, &count) != 0 || count != 1 || ops[0].atom != DW_OP_addr)
    return false;
  *address = ops[0].number;
  return true;
}

struct Candidate {
  Variable variable;
  std::string problem;  // why it cannot be watched, or empty
};

// Reads the type of `die` into `v`; returns the reason it cannot be watched, or "".
std::string ReadType(Dwarf_Die* die, Variable* v) {
  Dwarf_Attribute attr;
  Dwarf_Die type;
  if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type))
    return "has no type in the debug information";
  std::string qualifiers;
  for (int depth = 0; depth < 32; ++depth) {
    int tag = dwarf_tag(&type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
        tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
      break;
    if (tag == DW_TAG_typedef && v->type_name.empty() && Name(&type)) v->type_name = Name(&type);
    Dwarf_Die next;
    if (!dwarf_attr(&type, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &next))
      return "has a type without a size (void)";
    type = next;
  }
  Dwarf_Word size = 0;
  int tag = dwarf_tag(&type);
  const char* name = Name(&type);
  if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
      tag == DW_TAG_rvalue_reference_type) {
    v->kind = VariableKind::kPointer;
    size = 8;
    if (v->type_name.empty()) v->type_name = "pointer";
  } else if (tag == DW_TAG_base_type) {
    Dwarf_Word encoding = 0;
    if (!dwarf_attr(&type, DW_AT_encoding, &attr) || dwarf_formudata(&attr, &encoding) != 0)
      return "has a base type without an encoding";
    switch (encoding) {
      case DW_ATE_signed:
      case DW_ATE_signed_char:
        v->kind = VariableKind::kSigned;
        break;
      case DW_ATE_unsigned:
      case DW_ATE_unsigned_char:
      case DW_ATE_UTF:
        v->kind = VariableKind::kUnsigned;
        break;
      case DW_ATE_float:
        v->kind = VariableKind::kFloat;
        break;
      case DW_ATE_boolean:
        v->kind = VariableKind::kBool;
        break;
      default:
        return std::string("is of type ") + (name ? name : "?") + ", not a scalar";
    }
    if (v->type_name.empty() && name) v->type_name = name;
  } else if (tag == DW_TAG_enumeration_type) {
    v->kind = VariableKind::kEnum;
    if (v->type_name.empty()) v->type_name = std::string("enum ") + (name ? name : "(anonymous)");
    Dwarf_Die child;
    if (dwarf_child(&type, &child) == 0) {
      do {
        if (dwarf_tag(&child) != DW_TAG_enumerator) continue;
        Dwarf_Sword value = 0;
        if (!dwarf_attr(&child, DW_AT_const_value, &attr) || dwarf_formsdata(&attr, &value) != 0)
          continue;
        v->enumerators.emplace_back(value, Name(&child) ? Name(&child) : "?");
      } while (dwarf_siblingof(&child, &child) == 0);
    }
  } else {
    const char* what = tag == DW_TAG_structure_type ? "a struct"
                       : tag == DW_TAG_class_type   ? "a class"
                       : tag == DW_TAG_union_type   ? "a union"
                       : tag == DW_TAG_array_type   ? "an array"
                                                    : "not a scalar";
    return std::string("is ") + what + ": only a scalar (integer, float, pointer, enum, bool) " +
           "can be watched";
  }
  if (tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type &&
      tag != DW_TAG_rvalue_reference_type) {
    if (!dwarf_attr(&type, DW_AT_byte_size, &attr) || dwarf_formudata(&attr, &size) != 0)
      return "has a type without a size";
  }
  v->size = size;
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return "is " + std::to_string(size) + " bytes (" + v->type_name +
           "): a watchpoint covers 1, 2, 4 or 8 bytes";
  if (v->address % size != 0)
    return "is not aligned to its size (" + std::to_string(size) + " bytes)";
  return "";
}

// Walks the DIEs below `parent` (a unit or a namespace), collecting variables named `name`.
void Collect(Dwarf_Die* parent, const std::string& prefix, const std::string& name,
             const std::string& file_filter, const std::string& unit_name,
             std::vector<Candidate>* found) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    const char* own = Name(&child);
    if (tag == DW_TAG_namespace) {
      Collect(&child, prefix + (own ? own : "(anonymous namespace)") + "::", name, file_filter,
              unit_name, found);
      continue;
    }
    if (tag != DW_TAG_variable || !own || prefix + own != name) continue;
    uint64_t address = 0;
    if (!FixedAddress(&child, &address)) continue;  // a declaration, or thread-local
    const char* decl = dwarf_decl_file(&child);
    std::string decl_file = decl ? decl : "";
    if (!file_filter.empty() && !EndsWithPath(unit_name, file_filter) &&
        !EndsWithPath(decl_file, file_filter))
      continue;
    Candidate c;
    c.variable.address = address;
    c.variable.file = unit_name;
    int line = 0;
    if (dwarf_decl_line(&child, &line) == 0) c.variable.line = uint32_t(line);
    c.problem = ReadType(&child, &c.variable);
    found->push_back(std::move(c));
  } while (dwarf_siblingof(&child, &child) == 0);
}

struct DwflCloser {
  void operator()(Dwfl* d) const { dwfl_end(d); }
};

}  // namespace

Expected<Variable> FindVariable(const std::string& program, const std::string& spec) {
  std::string file_filter, name = spec;
  // `file.c:name`, but not `ns::name`.
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != ':') continue;
    if (i + 1 < spec.size() && spec[i + 1] == ':') {
      ++i;
      continue;
    }
    file_filter = spec.substr(0, i);
    name = spec.substr(i + 1);
    break;
  }
  if (name.empty()) return Status::Error("--watch " + spec + ": no variable name");
  static char debuginfo_path[] = ":.debug:/usr/lib/debug";
  static char* debuginfo_path_ptr = debuginfo_path;
  static const Dwfl_Callbacks callbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                           dwfl_offline_section_address, &debuginfo_path_ptr};
  std::unique_ptr<Dwfl, DwflCloser> dwfl(dwfl_begin(&callbacks));
  if (!dwfl) return Status::Error(program + ": cannot start libdwfl");
  dwfl_report_begin(dwfl.get());
  Dwfl_Module* mod = dwfl_report_elf(dwfl.get(), "main", program.c_str(), -1, 0, true);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (!mod) return Status::Error(program + ": not a usable ELF file (" + dwfl_errmsg(-1) + ")");
  Dwarf_Addr bias = 0;
  Dwarf* dwarf = dwfl_module_getdwarf(mod, &bias);
  if (!dwarf)
    return Status::Error(program + ": no debug information (build with -g) to find " + spec);
  std::vector<Candidate> found;
  Dwarf_CU* cu = nullptr;
  Dwarf_Half version;
  uint8_t unit_type;
  Dwarf_Die cu_die;
  while (dwarf_get_units(dwarf, cu, &cu, &version, &unit_type, &cu_die, nullptr) == 0) {
    if (dwarf_tag(&cu_die) != DW_TAG_compile_unit) continue;
    const char* unit = Name(&cu_die);
    Collect(&cu_die, "", name, file_filter, unit ? unit : "", &found);
  }
  // One definition seen from several units (C++ inline variables, COMDAT) is one variable.
  for (size_t i = 0; i < found.size(); ++i)
    for (size_t j = found.size(); j-- > i + 1;)
      if (found[j].variable.address == found[i].variable.address) found.erase(found.begin() + j);
  if (found.empty())
    return Status::Error("--watch " + spec + ": no global or static variable " + name +
                         (file_filter.empty() ? "" : " in " + file_filter) + " in " + program);
  if (found.size() > 1) {
    std::string files;
    for (const Candidate& c : found) files += (files.empty() ? "" : ", ") + c.variable.file;
    return Status::Error("--watch " + spec + ": " + name + " is defined in several files (" +
                         files + "): name one as FILE:" + name);
  }
  Candidate& c = found.front();
  if (!c.problem.empty()) return Status::Error("--watch " + spec + ": " + name + " " + c.problem);
  c.variable.address += bias;  // Dwfl's placement (0 here) back to ELF virtual addresses
  c.variable.name = spec;
  return std::move(c.variable);
}

}  // namespace hotline::symbolize
