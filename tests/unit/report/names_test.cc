// The names the tables show: C++ names shortened, C names as they are.
#include "report/names.h"

#include <gtest/gtest.h>

namespace hotline::report {
namespace {

TEST(ShortName, CollapsesTemplatesAndDropsParameters) {
  EXPECT_EQ(ShortName("std::vector<int, std::allocator<int> >::push_back(int const&)", false),
            "std::vector<…>::push_back");
  EXPECT_EQ(ShortName("void std::__invoke_impl<void, main::{lambda()#1}>(std::__invoke_other, "
                      "main::{lambda()#1}&&)",
                      false),
            "void std::__invoke_impl<…>");
  EXPECT_EQ(ShortName("analytics::crunch(std::map<int, int> const&) const", false),
            "analytics::crunch");
  EXPECT_EQ(ShortName("(anonymous namespace)::helper(int)", false),
            "(anonymous namespace)::helper");
  EXPECT_EQ(ShortName("std::vector<int>::push_back(int const&)", true),
            "std::vector<…>::push_back(int const&)");
}

TEST(ShortName, LeavesOperatorsCAndPseudoNamesAlone) {
  EXPECT_EQ(ShortName("operator()", false), "operator()");
  EXPECT_EQ(ShortName("Widget::operator()(int) const", false), "Widget::operator()");
  EXPECT_EQ(ShortName("operator<<(std::ostream&, Point const&)", false), "operator<<");
  EXPECT_EQ(ShortName("Point::operator<(Point const&) const", false), "Point::operator<");
  EXPECT_EQ(ShortName("burn_cpu", false), "burn_cpu");
  EXPECT_EQ(ShortName("[libc.so.6]", false), "[libc.so.6]");
  EXPECT_EQ(ShortName("main::{lambda at threads.cc:13:28}", false),
            "main::{lambda at threads.cc:13:28}");
}

TEST(ShortNames, OverloadsKeepTheirParameters) {
  model::Profile p;
  for (const char* name : {"area(Circle const&)", "area(Square const&)", "draw(Circle const&)"}) {
    model::Function f;
    f.name = name;
    p.functions.push_back(f);
  }
  std::vector<std::string> names = ShortNames(p);
  EXPECT_EQ(names[0], "area(Circle const&)");
  EXPECT_EQ(names[1], "area(Square const&)");
  EXPECT_EQ(names[2], "draw");
}

// Two instantiations of one template are told apart by what differs between them.
TEST(ShortNames, InstantiationsAreToldApart) {
  model::Profile p;
  for (const char* name : {"void run<main::{lambda(int)#1}>(main::{lambda(int)#1}, int)",
                           "void run<main::{lambda(int)#2}>(main::{lambda(int)#2}, int)"}) {
    model::Function f;
    f.name = name;
    p.functions.push_back(f);
  }
  std::vector<std::string> names = ShortNames(p);
  EXPECT_NE(names[0], names[1]);
  EXPECT_EQ(names[0], "void run<…>(main::{lambda(int)#1}, int)");

  // Alike even with their parameters: the whole names.
  model::Profile q;
  for (const char* name : {"int f<int>(int)", "int f<long>(int)"}) {
    model::Function f;
    f.name = name;
    q.functions.push_back(f);
  }
  names = ShortNames(q);
  EXPECT_EQ(names[0], "int f<int>(int)");
  EXPECT_EQ(names[1], "int f<long>(int)");
}

}  // namespace
}  // namespace hotline::report
