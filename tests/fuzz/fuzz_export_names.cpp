// Every export of a config whose name is the fuzzer's bytes (issue 33: a newline in a name ran as
// bash in the Megatron export, which the docs say to `source`). Two configs carry the name: the
// paper baseline (GQA: torchtitan's qwen3 model) and a small MLA model (torchtitan's deepseek_v3).
// For each, every target must export (a name never makes an export fail), and:
//  - megatron: no NUL byte; every line before `MODEL_ARGS=(` is a `#` comment; the lines that are
//    not comments are those of the same config named "x" (the name is never code); and bash, made
//    to `source` the file in an empty directory, defines MODEL_ARGS with that many words and leaves
//    the directory as it was (nothing ran);
//  - torchtitan, torch: valid UTF-8 without NUL, and Python's ast of the module equals the ast of
//    the "x" export once every string constant is blanked (the name changes no code);
//  - hf: JSON that parses, whose _name_or_path is the name (invalid UTF-8 replaced);
//  - native: reads back to the config with the same name.
// The bash and Python checks run as child processes (posix_spawnp, no shell) when bash and python3
// are found; the in-process checks always run. (The "x" exports are the reference the name may not
// change: a word of an argument line is one bash word, as the export writes no quoted space.)
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget/export.hpp"
#include "fuzz_harness.hpp"

extern char** environ;

namespace {

constexpr const char* target = "fuzz_export_names";

budget::ArchConfig mla_config() {
  return budget::parse_arch_config(
      R"({"name": "mla", "hidden_size": 512, "num_layers": 4, "vocab_size": 1024,
          "attention": {"num_heads": 8, "mla": {"q_lora_rank": 128, "kv_lora_rank": 64, "qk_nope_head_dim": 32,
                                                "qk_rope_head_dim": 16, "v_head_dim": 32}},
          "ffn": {"num_experts": 16, "top_k": 2, "expert_dim": 128, "router_bias": true, "num_shared_experts": 1,
                  "shared_expert_dim": 128, "first_dense_layers": 1, "dense_dim": 1024}})",
      "<mla>");
}

/// Runs argv (no shell) with stdout into `out`; the exit status, or -1 when it could not start.
int run(const std::vector<std::string>& args, std::string& out) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return -1;
  }
  // libFuzzer's -timeout arms SIGALRM once a second, and its handler interrupts a blocking read or
  // waitpid (EINTR): both are retried, or a slow child's output would be cut short (a false finding
  // that CI met on a loaded machine).
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) == -1 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool have(const char* program) {
  std::string out;
  return run({program, "-c", "exit 0"}, out) == 0;
}

/// An empty scratch directory of this process, made once.
const std::string& scratch() {
  static const std::string dir = [] {
    std::string pattern = "/tmp/budget-fuzz-export-names-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    return std::string(made != nullptr ? made : "/tmp");
  }();
  return dir;
}

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
    ::closedir(d);
  }
  return n;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The lines of `text` that are not `#` comments, and whether every line before MODEL_ARGS=( is one.
std::vector<std::string> code_lines(const std::string& text, bool& header_is_comments) {
  std::vector<std::string> code;
  header_is_comments = true;
  bool in_array = false;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line == "MODEL_ARGS=(") in_array = true;
    if (!line.empty() && line[0] == '#') continue;
    if (!in_array) header_is_comments = false;
    code.push_back(line);
  }
  return code;
}

void check_megatron(const std::string& text, const std::string& reference) {
  budget::fuzz::require(text.find('\0') == std::string::npos, target, "a NUL byte in the Megatron export");
  bool header_ok = false, reference_ok = false;
  const std::vector<std::string> code = code_lines(text, header_ok);
  budget::fuzz::require(header_ok, target, "a Megatron header line that is not a comment (code from a name)");
  budget::fuzz::require(code == code_lines(reference, reference_ok), target,
                        "the Megatron export's code differs from the same config named \"x\"");
  static const bool bash = have("bash");
  if (!bash) return;
  const std::string file = scratch() + "/args.sh";
  write(file, text);
  std::string out;
  const int status = run({"bash", "--noprofile", "--norc", "-c",
                          "cd \"$1\" && source ./args.sh && printf '%s' \"${#MODEL_ARGS[@]}\"", "bash", scratch()},
                         out);
  std::size_t expected = 0;  // the words of the argument lines between MODEL_ARGS=( and )
  for (std::size_t i = 1; i + 1 < code.size(); ++i) {
    bool in_word = false;
    for (const char ch : code[i]) {
      const bool space = ch == ' ';
      if (!space && !in_word) ++expected;
      in_word = !space;
    }
  }
  budget::fuzz::require(status == 0 && out == std::to_string(expected), target,
                        "bash could not source the Megatron export, or MODEL_ARGS is not its argument lines");
  budget::fuzz::require(entries(scratch()) == 1, target, "sourcing the Megatron export created a file");
  ::unlink(file.c_str());
}

void check_python(const std::string& text, const std::string& reference, const char* what) {
  budget::fuzz::require(text.find('\0') == std::string::npos, target, "a NUL byte in a Python export");
  static const bool python = have("python3");
  if (!python) return;
  const std::string file = scratch() + "/module.py", ref = scratch() + "/reference.py";
  write(file, text);
  write(ref, reference);
  // The ast with every str constant blanked: equal for both, whatever the name holds.
  const char* script =
      "import ast, sys\n"
      "def shape(path):\n"
      "    tree = ast.parse(open(path, encoding='utf-8').read())\n"
      "    for node in ast.walk(tree):\n"
      "        if isinstance(node, ast.Constant) and isinstance(node.value, str): node.value = ''\n"
      "    return ast.dump(tree)\n"
      "sys.exit(0 if shape(sys.argv[1]) == shape(sys.argv[2]) else 3)\n";
  std::string out;
  const int status = run({"python3", "-c", script, file, ref}, out);
  if (status != 0) std::fprintf(stderr, "%s export: python3 exit %d\n", what, status);
  budget::fuzz::require(status == 0, target, "the Python export does not parse, or its code differs from \"x\"'s");
  ::unlink(file.c_str());
  ::unlink(ref.c_str());
}

void check_config(budget::ArchConfig config, const std::string& name) {
  using namespace budget;
  ArchConfig reference = config;
  reference.name = "x";
  config.name = name;
  const auto exported = [](const ArchConfig& c, ExportTarget t) { return export_config(c, t, {}).text; };
  fuzz::must_succeed(target, "every export of a hostile name", [&] {
    check_megatron(exported(config, ExportTarget::megatron), exported(reference, ExportTarget::megatron));
    check_python(exported(config, ExportTarget::torchtitan), exported(reference, ExportTarget::torchtitan), "torchtitan");
    check_python(exported(config, ExportTarget::torch), exported(reference, ExportTarget::torch), "torch");
    const nlohmann::json hf = nlohmann::json::parse(exported(config, ExportTarget::hf));
    const std::string shown = nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    fuzz::require(hf.at("_name_or_path") == nlohmann::json::parse(shown), target, "hf's _name_or_path is not the name");
    const ArchConfig back = parse_arch_config(exported(config, ExportTarget::native), "<native>");
    fuzz::require(back.name == nlohmann::json::parse(shown).get<std::string>(), target, "native export lost the name");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  if (size == 0 || size > 4096) return 0;  // a name; the empty name is the reference's case
  const std::string name(fuzz::as_text(data, size));
  fuzz::expect_value_or_error(target, [&] {
    check_config(fuzz::paper_baseline(), name);
    static const ArchConfig mla = mla_config();
    check_config(mla, name);
  });
  return 0;
}
