// Calibration profile format v1 (docs/calibration.md): round trips, the PyTorch .jsonl source,
// and malformed profiles rejected with the file, the JSON pointer, the value and what is allowed.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"

using namespace budget;

namespace {

const std::string torch_jsonl = std::string(BUDGET_TEST_DATA_DIR) + "/h200_torch_ops.jsonl";

CalibrationProfile small_profile() {
  CalibrationProfile p;
  p.device = {"NVIDIA H200", "9.0", "580.65", "13.0", "13.1.0", "9.14.0", 132, 139.8, 1980, 3201};
  p.peaks = {760.5, 4157.0};
  p.source = {"test", "hand-written", "2026-11-30T18:00:00Z", "a fixture", "", "", {}};
  CalibrationRow g{ProfileOp::gemm, "forward", {{"M", 8192}, {"K", 1024}, {"N", 4096}}, "", "", "", false, 0.2, 6.87e10, 8e7, "", ""};
  CalibrationRow e{ProfileOp::expert_gemms, "weight_grad",
                   {{"E", 64}, {"tokens_per_expert", 4096}, {"H", 1024}, {"expert_dim", 512}, {"top_k", 8}, {"tokens", 32768}},
                   "down", "skewed", "cublaslt-grouped", false, 1.25, 1e12, 0, "", ""};
  CalibrationRow a{ProfileOp::attention, "forward+backward",
                   {{"docs", 8}, {"doc_len", 4096}, {"tokens", 32768}, {"num_heads", 16}, {"num_kv_heads", 4},
                    {"head_dim", 84}},
                   "", "", "cudnn", true, 0, 3e12, 0, "", ""};
  CalibrationRow a2 = a;
  a2.backend = "fallback-math";
  a2.refused = false;
  a2.ms = 12.5;
  a2.shape["v_head_dim"] = 64;
  CalibrationRow n{ProfileOp::rms_norm, "forward+backward", {{"tokens", 32768}, {"H", 2048}}, "", "", "", false, 0.31, 0, 6.7e8, "", ""};
  CalibrationRow r{ProfileOp::router_softmax_topk, "forward", {{"tokens", 32768}, {"E", 64}, {"top_k", 8}}, "", "", "", false, 0.05, 0, 1e7, "", ""};
  p.rows = {g, e, a, a2, n, r};
  return p;
}

/// The small profile's JSON with `from` replaced by `to` (exactly one occurrence).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = calibration_profile_to_json(small_profile());
  const auto at = text.find(from);
  INFO(from << " in " << text);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

/// Parsing `text` fails with an error at `path` whose message contains `words`.
void expect_error(const std::string& text, const std::string& path, const std::string& words) {
  try {
    (void)parse_calibration_profile(text, "bad.json");
    FAIL("accepted a malformed profile; expected an error at " << path);
  } catch (const Error& e) {
    CHECK(e.source() == "bad.json");
    CHECK(e.path() == path);
    CHECK_THAT(e.message(), Catch::Contains(words));
  }
}

}  // namespace

TEST_CASE("calibration profile: write then read gives the same profile", "[calibration]") {
  const CalibrationProfile p = small_profile();
  const std::string text = calibration_profile_to_json(p);
  const CalibrationProfile back = parse_calibration_profile(text, "mem");
  CHECK(back == p);
  CHECK(calibration_profile_to_json(back) == text);  // stable rendering
  // Header pretty-printed, one row a line.
  CHECK_THAT(text, Catch::Contains("\"schema\": \"budget.calibration\""));
  CHECK_THAT(text, Catch::Contains("\n    {\"op\":\"gemm\",\"pass\":\"forward\",\"M\":8192,\"K\":1024,\"N\":4096,"));

  const auto path = (std::filesystem::temp_directory_path() / "budget_calibration_roundtrip.json").string();
  write_calibration_profile(p, path);
  CHECK(load_calibration_profile(path) == p);
  std::remove(path.c_str());
}

TEST_CASE("calibration profile: writing to an unwritable path is an error naming it", "[calibration]") {
  CHECK_THROWS_WITH(write_calibration_profile(small_profile(), "/nonexistent-dir/p.json"),
                    Catch::Contains("/nonexistent-dir/p.json"));
}

TEST_CASE("calibration profile: writes replace the file whole, never partly", "[calibration]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "budget_calibration_atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "p.json").string();
  {
    std::ofstream old(path);
    old << "old contents";
  }
  write_calibration_profile(small_profile(), path);
  CHECK(load_calibration_profile(path) == small_profile());
  // Only the target is left: the temporary ".p.json.XXXXXX" was renamed over it.
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  // Targets that are not regular files are refused before anything is written.
  CHECK_THROWS_WITH(write_calibration_profile(small_profile(), dir.string()),
                    Catch::Contains("exists and is not a regular file"));
  CHECK_THROWS_WITH(write_calibration_profile(small_profile(), "/dev/full"),
                    Catch::Contains("/dev/full") && Catch::Contains("not a regular file"));
  // A profile that fails validation leaves the file as it was.
  CalibrationProfile bad = small_profile();
  bad.rows[0].ms = -1;
  CHECK_THROWS(write_calibration_profile(bad, path));
  CHECK(load_calibration_profile(path) == small_profile());
  fs::remove_all(dir);
}

TEST_CASE("calibration profile: profiles built in code are validated before writing", "[calibration]") {
  CalibrationProfile p = small_profile();
  p.rows[0].ms = std::numeric_limits<double>::quiet_NaN();
  try {
    (void)calibration_profile_to_json(p);
    FAIL("wrote a NaN time");
  } catch (const Error& e) {
    CHECK(e.path() == "/rows/0/ms");
  }
  p = small_profile();
  p.rows[1].shape.erase("top_k");
  CHECK_THROWS_WITH(calibration_profile_to_json(p), Catch::Contains("/rows/1/top_k"));
  p = small_profile();
  p.rows[0].shape["E"] = 8;  // gemm has no E
  CHECK_THROWS_WITH(calibration_profile_to_json(p), Catch::Contains("unknown key \"E\" for op \"gemm\""));
}

TEST_CASE("calibration profile: the PyTorch-eager .jsonl file loads with one row per attention backend",
          "[calibration]") {
  const CalibrationProfile p = load_calibration_profile(torch_jsonl);
  CHECK(p.device.name == "NVIDIA H200");
  CHECK(p.device.cuda_runtime == "13.0");
  CHECK(p.device.cudnn == "9.19.0");  // 91900
  CHECK(p.peaks.bf16_gemm_tflops == Approx(760.4572285708635));
  CHECK(p.peaks.copy_gbytes_per_s == Approx(4157.020513148296));
  CHECK(p.source.tool == "pytorch-eager (torch 2.11.0+cu130)");
  CHECK(p.source.method == "CUDA events, median of 9 after 3 warm-ups");
  // 1980 lines besides the device: 900 gemm, 720 expert_gemms, 120 attention (× default, flash,
  // cudnn = 360 rows), 60 each of four memory-bound ops.
  std::map<std::string, int> count;
  int refused = 0;
  for (const auto& r : p.rows) {
    ++count[std::string(to_string(r.op)) + (r.op == ProfileOp::attention ? "/" + r.backend : "")];
    if (r.refused) {
      ++refused;
      CHECK(r.backend == "cudnn");
      CHECK(r.shape.at("head_dim") % 8 != 0);
    }
  }
  CHECK(count["gemm"] == 900);
  CHECK(count["expert_gemms"] == 720);
  CHECK(count["attention/default"] == 120);
  CHECK(count["attention/flash"] == 120);
  CHECK(count["attention/cudnn"] == 120);
  CHECK(count["rms_norm"] == 60);
  CHECK(count["combine_scatter_add"] == 60);
  CHECK(refused == 59);
  // The file's first attention line (the shape is measured twice; the first comes first):
  // flops = 3.5 × flops_forward for forward+backward.
  const auto first_flash = std::find_if(p.rows.begin(), p.rows.end(), [](const CalibrationRow& r) {
    return r.op == ProfileOp::attention && r.backend == "flash";
  });
  REQUIRE(first_flash != p.rows.end());
  CHECK(first_flash->shape.at("head_dim") == 68);
  CHECK(first_flash->ms == Approx(1.5231679677963257));
  CHECK(first_flash->flops == Approx(3.5 * 36542873600.0));
  // Converted profiles round-trip through the profile JSON.
  CHECK(parse_calibration_profile(calibration_profile_to_json(p), "x") == p);
}

TEST_CASE("calibration profile: malformed .jsonl lines are errors naming the line and field", "[calibration]") {
  const std::string device =
      R"({"op": "device", "name": "G", "gemm_8192_bf16_tflops": 700, "copy_tb_per_s": 4})";
  const auto fails = [](const std::string& text, const std::string& path, const std::string& words) {
    try {
      (void)parse_torch_measurements(text, "m.jsonl");
      FAIL("accepted malformed lines");
    } catch (const Error& e) {
      CHECK(e.source() == "m.jsonl");
      CHECK(e.path() == path);
      CHECK_THAT(e.message(), Catch::Contains(words));
    }
  };
  fails(R"({"op": "gemm", "pass": "forward", "M": 8, "K": 8, "N": 8, "ms": 0.1})", "", "no \"op\": \"device\" line");
  fails(device + "\n{\"op\": \"gemm\", \"pass\": \"forward\", \"M\": 8, \"K\": 8, \"ms\": 1}", "line 2/N",
        "required key is missing");
  fails(device + "\n{\"op\": \"attention\", \"pass\": \"forward+backward\", \"docs\": 1, \"doc_len\": 8, \"tokens\": 8, "
                 "\"num_heads\": 2, \"num_kv_heads\": 1, \"head_dim\": 76, \"ms_by_backend\": {\"cudnn\": \"no\"}}",
        "line 2/ms_by_backend/cudnn", "\"refused\"");
  // Found by fuzz_calibration_torch: an attention "pass" that is not a string escaped as
  // nlohmann's type_error.302.
  fails(device + "\n{\"op\": \"attention\", \"pass\": 8, \"docs\": 1, \"doc_len\": 8, \"tokens\": 8, "
                 "\"num_heads\": 2, \"num_kv_heads\": 1, \"head_dim\": 64, \"ms_default\": 1.5}",
        "line 2/pass", "expected a string");
  fails(device + "\n{not json", "line 2", "not valid JSON");
  fails(device + "\n" + device, "line 2/op", "second");
  fails(R"({"op": "device", "name": "G", "gemm_8192_bf16_tflops": 0, "copy_tb_per_s": 4})", "line 1/gemm_8192_bf16_tflops",
        "allowed: a number in [0.001, 100000]");
}

TEST_CASE("calibration profile: malformed profiles are errors naming the file, pointer, value and allowed",
          "[calibration]") {
  expect_error("", "", "empty");
  expect_error("[1, 2]", "/", "expected a JSON object");
  expect_error(edited("\"schema\": \"budget.calibration\"", "\"schema\": \"budget.grid\""), "/schema",
               "allowed: \"budget.calibration\"");
  expect_error(edited("\"schema_version\": 1", "\"schema_version\": 2"), "/schema_version", "version 2 is not supported");
  expect_error(edited("\"schema_version\": 1", "\"schema_version\": 1, \"extra\": 3"), "/extra", "unknown key \"extra\"");
  expect_error(edited("\"sm_count\": 132", "\"sm_cont\": 132"), "/device/sm_cont", "did you mean \"sm_count\"");
  expect_error(edited("\"bf16_gemm_tflops\": 760.5", "\"bf16_gemm_tflops\": -1.0"), "/peaks/bf16_gemm_tflops",
               "out of range");
  expect_error(edited("\"copy_gbytes_per_s\": 4157.0", "\"copy_gbytes_per_s\": 0"), "/peaks/copy_gbytes_per_s", "allowed: a number in [0.001, 1000000]");
  expect_error(edited("\"tool\": \"test\"", "\"tool\": \"\""), "/source/tool", "non-empty");
  expect_error(edited("\"op\":\"gemm\"", "\"op\":\"gem\""), "/rows/0/op", "did you mean \"gemm\"");
  expect_error(edited("\"op\":\"gemm\",\"pass\":\"forward\"", "\"op\":\"gemm\",\"pass\":\"backward\""), "/rows/0/pass",
               "allowed: \"forward\", \"input_grad\", \"weight_grad\"");
  expect_error(edited("\"M\":8192,", ""), "/rows/0/M", "required key is missing");
  expect_error(edited("\"M\":8192", "\"M\":0"), "/rows/0/M", "allowed: an integer in [1,");
  expect_error(edited("\"M\":8192", "\"M\":81.5"), "/rows/0/M", "not an integer");
  expect_error(edited("\"ms\":0.2,", "\"ms\":0,"), "/rows/0/ms", "allowed: a number in [1e-06, 1000000000]");
  expect_error(edited("\"ms\":0.2,", "\"ms\":\"fast\","), "/rows/0/ms", "expected a number");
  expect_error(edited("\"ms\":0.2,", ""), "/rows/0/ms", "required key is missing");
  expect_error(edited("\"K\":1024,", "\"K\":1024,\"E\":3,"), "/rows/0/E", "unknown key \"E\" for op \"gemm\"");
  expect_error(edited("\"matrix\":\"down\"", "\"matrix\":\"dwn\""), "/rows/1/matrix", "did you mean \"down\"");
  expect_error(edited("\"routing\":\"skewed\"", "\"routing\":\"zipf\""), "/rows/1/routing",
               "allowed: \"balanced\", \"skewed\"");
  expect_error(edited("\"backend\":\"cudnn\"", "\"backend\":\"xformers\""), "/rows/2/backend", "fallback-<name>");
  expect_error(edited("\"backend\":\"cudnn\",\"refused\":true", "\"backend\":\"cudnn\",\"refused\":true,\"ms\":1"),
               "/rows/2/ms", "a refused row has no time");
  expect_error(edited("\"num_heads\":16,\"num_kv_heads\":4,\"head_dim\":84,\"backend\":\"cudnn\"",
                      "\"num_heads\":16,\"num_kv_heads\":5,\"head_dim\":84,\"backend\":\"cudnn\""),
               "/rows/2/num_kv_heads", "does not divide");
  expect_error(edited("\"flops\":0.0,\"bytes\":670000000.0", "\"flops\":-1,\"bytes\":670000000.0"), "/rows/4/flops",
               "out of range");
  expect_error(edited("\"rows\": [", "\"rows\": {\"a\": ["), "", "not valid JSON");
}

TEST_CASE("calibration profile: an empty row list and a missing header are errors", "[calibration]") {
  CalibrationProfile p = small_profile();
  p.rows.clear();
  CHECK_THROWS_WITH(calibration_profile_to_json(p), Catch::Contains("no rows"));
  const std::string text = calibration_profile_to_json(small_profile());
  const auto peaks = text.find("  \"peaks\"");
  const auto source = text.find("  \"source\"");
  expect_error(text.substr(0, peaks) + text.substr(source), "/peaks", "required key is missing");
}

TEST_CASE("calibration profile: row ops are the ProfileOp enum, named through one table", "[calibration]") {
  // calibration_ops() lists the enumerators in declaration order, each name reading back as its op.
  const auto& names = calibration_ops();
  REQUIRE(names.size() == profile_op_count);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto op = static_cast<ProfileOp>(i);
    CHECK(to_string(op) == names[i]);
    CHECK(profile_op_named(names[i]) == op);
  }
  CHECK(to_string(ProfileOp::expert_gemms) == "expert_gemms");
  CHECK_FALSE(profile_op_named("device").has_value());  // the torch files' header line is no row op
  CHECK_FALSE(profile_op_named("Gemm").has_value());
  CHECK_FALSE(profile_op_named("").has_value());
  // A cast integer outside the enum is refused like an unknown name in a file.
  CalibrationProfile p = small_profile();
  p.rows[0].op = static_cast<ProfileOp>(profile_op_count);
  try {
    (void)calibration_profile_to_json(p);
    FAIL("wrote a row of no op");
  } catch (const Error& e) {
    CHECK(e.path() == "/rows/0/op");
    CHECK_THAT(e.what(), Catch::Contains("unknown op \"?\"; allowed: \"gemm\", \"expert_gemms\""));
  }
}

TEST_CASE("calibration profile: the shipped profiles read and write back byte for byte", "[calibration]") {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(entry.path().string());
    CHECK(calibration_profile_to_json(parse_calibration_profile(text, entry.path().string())) == text);
    ++files;
  }
  CHECK(files == 8);  // the measured H200 eager profile and seven published-kernel profiles
}
