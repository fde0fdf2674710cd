#include "model/system_code.h"

namespace hotline::model {

bool IsSystemSource(std::string_view path) {
  for (std::string_view dir : {"/usr/include/", "/usr/lib/", "/usr/local/include/"})
    if (path.starts_with(dir)) return true;
  return false;
}

bool IsSystemModule(std::string_view path) {
  for (std::string_view dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"})
    if (path.starts_with(dir)) return true;
  return path.starts_with('[');
}

bool IsStartupFunction(std::string_view name) {
  return name == "_start" || name == "__libc_start_main" || name == "__libc_start_main_impl" ||
         name == "__libc_start_call_main";
}

}  // namespace hotline::model
