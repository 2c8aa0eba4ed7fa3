// spawnbench: times whole processes, interleaving the cases round by round so
// that machine noise lands on every case alike, and reports each case as a
// ratio to the first (the baseline measured in the same run).
//
// Peak RSS is the child's ru_maxrss. posix_spawn's child shares our address
// space until it execs, and the kernel counts that address space's high-water
// mark in the child's ru_maxrss, so our own RSS is a floor under every figure:
// no iostreams here (they cost ~1 MiB of RSS in a static libstdc++), and the
// floor is printed at the end.
//
// usage: spawnbench [--runs N] [--warmup N] [--json] CASES_FILE
// CASES_FILE: one case per line, `NAME<TAB>STDIN_FILE or -<TAB>ARGV...` where
// ARGV is split on spaces. The first case is the baseline. `{n}` anywhere in
// ARGV becomes a number unique to each spawn in the whole run, for commands
// that need a fresh name every time (`runc run bench-{n}`). Leading
// NAME=VALUE words, as with env(1), are added to that case's environment.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

struct Case {
  std::string name;
  std::string stdin_file;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE, replacing the same NAME in ours
  std::vector<double> micros;
  long max_rss_kib = 0;
};

// Words separated by blanks.
std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = s.find_first_not_of(" \t", at)) != std::string::npos) {
    const size_t end = s.find_first_of(" \t", at);
    out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

// NAME=VALUE, NAME an environment variable name.
bool IsAssignment(const std::string& word) {
  const size_t eq = word.find('=');
  if (eq == 0 || eq == std::string::npos || std::isdigit(static_cast<unsigned char>(word[0]))) {
    return false;
  }
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

// Every `{n}` in arg replaced by n.
std::string Substitute(std::string arg, long n) {
  const std::string num = std::to_string(n);
  for (size_t at = arg.find("{n}"); at != std::string::npos;
       at = arg.find("{n}", at + num.size())) {
    arg.replace(at, 3, num);
  }
  return arg;
}

// One run: posix_spawn, wait4. Returns microseconds, or -1 on failure.
// The argv is built before the clock starts.
double RunOnce(Case& c, long spawn_no) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(
      &fa, 0, c.stdin_file.empty() ? "/dev/null" : c.stdin_file.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args;
  for (const auto& a : c.argv) args.push_back(Substitute(a, spawn_no));
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    const bool replaced = std::any_of(c.env.begin(), c.env.end(), [&](const std::string& o) {
      const size_t eq = o.find('=');
      return var.substr(0, eq + 1) == std::string_view(o).substr(0, eq + 1);
    });
    if (!replaced) env.push_back(*e);
  }
  for (auto& o : c.env) env.push_back(o.data());
  env.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    std::fprintf(stderr, "spawnbench: %s: spawn %s: %s\n", c.name.c_str(), argv[0], strerror(rc));
    return -1;
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "spawnbench: %s: exited with status %d\n", c.name.c_str(), status);
    return -1;
  }
  c.max_rss_kib = std::max(c.max_rss_kib, ru.ru_maxrss);
  return std::chrono::duration<double, std::micro>(end - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 100, warmup = 10;
  bool json = false;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::stoi(argv[++i]);
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::stoi(argv[++i]);
    } else if (a == "--json") {
      json = true;
    } else {
      file = a;
    }
  }
  FILE* in = file.empty() ? nullptr : std::fopen(file.c_str(), "r");
  if (in == nullptr) {
    std::fputs("usage: spawnbench [--runs N] [--warmup N] [--json] CASES_FILE\n", stderr);
    return 2;
  }
  std::vector<Case> cases;
  char* buf = nullptr;
  size_t cap = 0;
  for (ssize_t len; (len = getline(&buf, &cap, in)) >= 0;) {
    std::string line(buf, static_cast<size_t>(len));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    Case c;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos) {
      std::fprintf(stderr, "spawnbench: \"%s\": want NAME<TAB>STDIN<TAB>COMMAND\n", line.c_str());
      return 2;
    }
    c.name = line.substr(0, tab1);
    c.stdin_file = line.substr(tab1 + 1, tab2 - tab1 - 1);
    if (c.stdin_file == "-") c.stdin_file.clear();
    for (const auto& w : Words(line.substr(tab2 + 1))) {
      if (c.argv.empty() && IsAssignment(w)) {
        c.env.push_back(w);
      } else {
        c.argv.push_back(w);
      }
    }
    if (c.argv.empty()) {
      std::fprintf(stderr, "spawnbench: case \"%s\" has no command\n", c.name.c_str());
      return 2;
    }
    cases.push_back(std::move(c));
  }
  std::free(buf);
  std::fclose(in);
  long spawn_no = 0;
  for (int r = 0; r < warmup + runs; ++r) {
    for (auto& c : cases) {
      double us = RunOnce(c, spawn_no++);
      if (us < 0) return 1;
      if (r >= warmup) c.micros.push_back(us);
    }
  }
  const double base = Median(cases[0].micros);
  for (const auto& c : cases) {
    double med = Median(c.micros);
    auto [lo, hi] = std::minmax_element(c.micros.begin(), c.micros.end());
    if (json) {
      std::printf(
          "{\"name\":\"%s\",\"runs\":%d,\"median_us\":%.1f,\"min_us\":%.1f,\"max_us\":%.1f,"
          "\"ratio\":%.3f,\"over_baseline_us\":%.1f,\"max_rss_kib\":%ld}\n",
          c.name.c_str(), runs, med, *lo, *hi, med / base, med - base, c.max_rss_kib);
    } else {
      std::printf("| %s | %.2f ms | %.2f–%.2f ms | %.2fx | %+.2f ms | %ld KiB |\n", c.name.c_str(),
                  med / 1000, *lo / 1000, *hi / 1000, med / base, (med - base) / 1000,
                  c.max_rss_kib);
    }
  }
  struct rusage self {};
  getrusage(RUSAGE_SELF, &self);
  if (json) {
    std::printf("{\"rss_floor_kib\":%ld}\n", self.ru_maxrss);
  } else {
    std::printf("\nPeak RSS floor (spawnbench's own, counted in every child's): %ld KiB\n",
                self.ru_maxrss);
  }
  return 0;
}
