// Loss CSV reading: the accepted forms and a clear error for every bad input.

#include <catch2/catch.hpp>

#include <string>

#include "budget/error.hpp"
#include "budget/scaling_data.hpp"

using budget::LossData;
using budget::parse_loss_csv;
using Catch::Matchers::Contains;

namespace {
/// The error message parse_loss_csv throws for `text` ("" if none).
std::string csv_error(const std::string& text) {
  try {
    parse_loss_csv(text, "data.csv");
  } catch (const budget::Error& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("scaling CSV: columns in any order, F form, optional S and domain", "[scaling][csv]") {
  const LossData data = parse_loss_csv(
      "loss,D,F,cell,arch,S,domain\n"
      "2.5,2e10,6e8,c1,base,0.85,\n"
      "2.25,3e10,6e8,c1,base,0.85,web\n",
      "data.csv");
  REQUIRE(data.points.size() == 2);
  const auto& p = data.points[0];
  CHECK(p.arch == "base");
  CHECK(p.cell == "c1");
  CHECK(p.F == 6e8);
  CHECK(p.S == 0.85);
  CHECK(p.D == 2e10);
  CHECK(p.loss == 2.5);
  CHECK(p.domain.empty());
  CHECK(p.line == 2);
  CHECK(data.points[1].domain == "web");
  CHECK(data.sparsity_column);
  CHECK(data.domain_column);
  CHECK_FALSE(data.parameters_column);
}

TEST_CASE("scaling CSV: N instead of F gives F = 6N, S = 0 when absent", "[scaling][csv]") {
  const LossData data = parse_loss_csv("arch,cell,N,D,loss\nchin,p1,1e9,2e10,2.3\n", "data.csv");
  REQUIRE(data.points.size() == 1);
  CHECK(data.points[0].F == 6e9);
  CHECK(data.points[0].S == 0.0);
  CHECK(data.parameters_column);
  CHECK_FALSE(data.sparsity_column);
}

TEST_CASE("scaling CSV: CRLF, byte-order mark, comments, blank lines, spaces and quotes", "[scaling][csv]") {
  const LossData data = parse_loss_csv(
      "\xEF\xBB\xBF# a comment before the header\r\n"
      "arch , cell, F ,D,loss\r\n"
      "\r\n"
      "\"my, arch\", \"cell \"\"1\"\"\" ,6e8, 2e10 ,+2.5\r\n"
      "  # an indented comment\r\n"
      "b,c2,1e9,3e10,2.4",
      "data.csv");
  REQUIRE(data.points.size() == 2);
  CHECK(data.points[0].arch == "my, arch");
  CHECK(data.points[0].cell == "cell \"1\"");
  CHECK(data.points[0].loss == 2.5);
  CHECK(data.points[0].line == 4);
  CHECK(data.points[1].arch == "b");
  CHECK(data.points[1].line == 6);
}

TEST_CASE("scaling CSV: empty file and header-only file", "[scaling][csv]") {
  CHECK_THAT(csv_error(""), Contains("data.csv: the file is empty; expected a header line"));
  CHECK_THAT(csv_error("# only a comment\n\n"), Contains("the file is empty"));
  CHECK_THAT(csv_error("arch,cell,F,D,loss\r\n"), Contains("data.csv: the file has a header but no data rows"));
}

TEST_CASE("scaling CSV: header errors name the column and what is allowed", "[scaling][csv]") {
  CHECK_THAT(csv_error("arch,cell,F,D,loss,sparsity\n"),
             Contains("data.csv: line 1: unknown column \"sparsity\"") && Contains("allowed columns: arch, cell"));
  CHECK_THAT(csv_error("arch,cell,F,D,los\n"), Contains("unknown column \"los\" (did you mean \"loss\"?)"));
  CHECK_THAT(csv_error("arch,cell,F,D\n"), Contains("line 1: the header has no column \"loss\""));
  CHECK_THAT(csv_error("arch,cell,D,loss\n"), Contains("neither F (per-token training FLOPs) nor N"));
  CHECK_THAT(csv_error("arch,cell,F,N,D,loss\n"), Contains("both F and N"));
  CHECK_THAT(csv_error("arch,cell,F,D,loss,D\n"), Contains("column \"D\" appears twice"));
  CHECK_THAT(csv_error("arch,cell,,F,D,loss\n"), Contains("header column 3 has no name"));
}

TEST_CASE("scaling CSV: bad rows name the line, the column, the value and what is allowed", "[scaling][csv]") {
  const std::string header = "arch,cell,F,S,D,loss\n";
  const std::string good = "a,c1,6e8,0.85,2e10,2.5\n";
  CHECK_THAT(csv_error(header + good + "a,c1,6e8,0.85,2e10,abc\n"),
             Contains("data.csv: line 3: column 'loss': value \"abc\" is not a number; allowed: a loss in [1e-6, 1e6]"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.85,2e10,nan\n"), Contains("line 2: column 'loss': value nan is not allowed"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.85,2e10,0\n"), Contains("column 'loss': value 0 is not allowed"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.85,2e10,-1.5\n"), Contains("column 'loss': value -1.5 is not allowed"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.85,0,2.5\n"),
             Contains("column 'D': value 0 is not allowed; allowed: a number in (0, 1e30] (training tokens)"));
  CHECK_THAT(csv_error(header + "a,c1,-6e8,0.85,2e10,2.5\n"), Contains("column 'F': value -6e8 is not allowed"));
  CHECK_THAT(csv_error(header + "a,c1,inf,0.85,2e10,2.5\n"), Contains("column 'F': value inf is not allowed"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,1,2e10,2.5\n"),
             Contains("column 'S': value 1 is not allowed; allowed: a number in [0, 1)"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,,2e10,2.5\n"), Contains("column 'S': the value is empty"));
  CHECK_THAT(csv_error(header + "a,c1,6e8 x,0.5,2e10,2.5\n"), Contains("column 'F': value \"6e8 x\" is not a number"));
  CHECK_THAT(csv_error(header + ",c1,6e8,0.5,2e10,2.5\n"), Contains("line 2: column 'arch': the value is empty"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.5,2e10\n"),
             Contains("line 2: the row has 5 fields but the header has 6 columns"));
  CHECK_THAT(csv_error(header + "a,c1,6e8,0.5,2e10,2.5,\n"), Contains("the row has 7 fields"));
  CHECK_THAT(csv_error(header + "\"a,c1,6e8,0.5,2e10,2.5\n"), Contains("line 2: a quoted field is not closed"));
  CHECK_THAT(csv_error(header + "\"a\"x,c1,6e8,0.5,2e10,2.5\n"), Contains("unexpected text after the closing quote"));
}

TEST_CASE("scaling CSV: a missing file is an error naming it", "[scaling][csv]") {
  CHECK_THROWS_WITH(budget::read_loss_csv("/nonexistent/losses.csv"), Contains("/nonexistent/losses.csv: "));
}

TEST_CASE("scaling CSV: selections by architecture, domain and cell", "[scaling][csv]") {
  const LossData data = parse_loss_csv(
      "arch,cell,F,D,loss,domain\n"
      "x,c1,6e8,2e10,2.5,\n"
      "y,c1,6e8,2e10,2.4,\n"
      "x,c2,1e9,2e10,2.3,web\n"
      "x,c1,6e8,3e10,2.2,\n",
      "data.csv");
  CHECK(budget::architectures(data.points) == std::vector<std::string>{"x", "y"});
  CHECK(budget::domains(data.points) == std::vector<std::string>{"web"});
  const auto x = budget::points_of_arch(data.points, "x", "data.csv");
  CHECK(x.size() == 3);
  CHECK(budget::cells(x) == std::vector<std::string>{"c1", "c2"});
  CHECK(budget::points_of_domain(x, "").size() == 2);
  CHECK(budget::points_of_domain(x, "web").size() == 1);
  CHECK_THROWS_WITH(budget::points_of_arch(data.points, "z", "data.csv"),
                    Contains("data.csv: no points of architecture \"z\"; the data has: x, y"));
}

TEST_CASE("scaling CSV: the Chinchilla test data loads", "[scaling][csv]") {
  const LossData data = budget::read_loss_csv(std::string(BUDGET_TEST_DATA_DIR) + "/chinchilla_epoch.csv");
  REQUIRE(data.points.size() == 245);
  CHECK(data.parameters_column);
  // First row of Epoch's file: N = 6795600349.289497, FLOP = 9.993852799709755e18.
  CHECK(data.points[0].F == Approx(6.0 * 6795600349.289497).epsilon(1e-15));
  CHECK(data.points[0].F * data.points[0].D == Approx(9.993852799709755e18).epsilon(1e-14));
}
