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
            "std::__invoke_impl<…>");
  EXPECT_EQ(ShortName("analytics::crunch(std::map<int, int> const&) const", false),
            "analytics::crunch");
  EXPECT_EQ(ShortName("(anonymous namespace)::helper(int)", false),
            "(anonymous namespace)::helper");
  // A function template's return type goes; operators keep their words.
  EXPECT_EQ(ShortName("double std::accumulate<double*, double>(double*, double*, double)", false),
            "std::accumulate<…>");
  EXPECT_EQ(ShortName("operator new(unsigned long)", false), "operator new");
  EXPECT_EQ(ShortName("Foo::operator char const*() const", false), "Foo::operator char const*");
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
  EXPECT_EQ(names[0], "run<…>(main::{lambda(int)#1}, int)");

  // Alike even with their parameters: their template arguments, as few levels as tell them
  // apart.
  model::Profile r;
  for (const char* name :
       {"std::vector<std::pair<int, long>, std::allocator<std::pair<int, long> > "
        ">::~vector()",
        "std::vector<Record, std::allocator<Record> >::~vector()"}) {
    model::Function f;
    f.name = name;
    r.functions.push_back(f);
  }
  names = ShortNames(r);
  EXPECT_EQ(names[0], "std::vector<std::pair<…>, std::allocator<…> >::~vector()");
  EXPECT_EQ(names[1], "std::vector<Record, std::allocator<…> >::~vector()");

  model::Profile q;
  for (const char* name : {"int f<int>(int)", "int f<long>(int)"}) {
    model::Function f;
    f.name = name;
    q.functions.push_back(f);
  }
  names = ShortNames(q);
  EXPECT_EQ(names[0], "f<int>(int)");
  EXPECT_EQ(names[1], "f<long>(int)");
}

}  // namespace
}  // namespace hotline::report
