// specbench: the in-process cost of what oci-rlimit-runtime does to a
// bundle's config.json on create/run, without process start-up, file I/O or
// fsync: parse, merge process.rlimits, dump (the wrapper), and the hook's
// lean read of process.rlimits (SpecRlimitsOnly). Also makes the big spec the
// process-level benchmark uses.
//
// usage: specbench --inflate IN OUT BYTES
//          writes OUT, compact as containerd and podman write it: the spec IN
//          plus env entries, mounts and annotations, about BYTES long
//        specbench [--runs N] [--warmup N] SPEC
//          times each step on SPEC and prints a markdown table
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/oci/spec.h"
#include "formats/rlimit.h"

namespace {

using ocirlimit::Json;
using Clock = std::chrono::steady_clock;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Adds what a large real spec carries (long env lists, many mounts, big
// annotations) in equal shares until the dump reaches `bytes`.
int Inflate(const std::string& in, const std::string& out, size_t bytes) {
  auto spec = ocirlimit::ParseJsonObject(ReadAll(in), in);
  if (!spec) {
    std::cerr << "specbench: " << spec.error().Text() << "\n";
    return 1;
  }
  Json& env = (*spec)["process"]["env"];
  Json& mounts = (*spec)["mounts"];
  Json& annotations = (*spec)["annotations"];
  if (annotations.is_null()) annotations = Json::object();
  size_t size = spec->dump().size();
  for (int i = 0; size < bytes; ++i) {
    std::string n = std::to_string(i);
    std::string e = "BENCH_VARIABLE_" + n;
    e += "=/opt/vendor/lib/" + n;
    e += ":/usr/local/lib/" + n;
    Json m = {{"destination", "/mnt/volume-" + n},
              {"type", "bind"},
              {"source", "/var/lib/kubelet/pods/" + n + "/volumes/kubernetes.io~configmap/v"},
              {"options", {"rbind", "rprivate", "ro"}}};
    std::string key = "io.kubernetes.bench/annotation-" + n;
    std::string value(64, static_cast<char>('a' + i % 26));
    size += e.size() + m.dump().size() + key.size() + value.size() + 12;
    env.push_back(std::move(e));
    mounts.push_back(std::move(m));
    annotations[key] = value;
  }
  std::ofstream file(out, std::ios::binary);
  file << spec->dump();
  if (!file.flush()) {
    std::cerr << "specbench: cannot write " << out << "\n";
    return 1;
  }
  return 0;
}

struct Step {
  const char* name;
  std::vector<double> micros;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

int Time(const std::string& path, int runs, int warmup) {
  const std::string text = ReadAll(path);
  auto limits = ocirlimit::ParseRlimitList({"memlock=4M:8M"});
  if (!limits) return 1;
  Step parse{"ParseJsonObject (ordered_json DOM)", {}}, merge{"MergeSpecRlimits", {}},
      dump{"dump", {}}, total{"parse + merge + dump (the wrapper's edit)", {}},
      lean{"SpecRlimitsOnly: the hook's read of process.rlimits", {}};
  size_t out_size = 0;
  for (int r = 0; r < warmup + runs; ++r) {
    auto t0 = Clock::now();
    auto spec = ocirlimit::ParseJsonObject(text, path);
    const double p = Since(t0);
    if (!spec) {
      std::cerr << "specbench: " << spec.error().Text() << "\n";
      return 1;
    }
    auto t1 = Clock::now();
    if (auto st = ocirlimit::MergeSpecRlimits(*spec, *limits); !st) {
      std::cerr << "specbench: " << st.error().Text() << "\n";
      return 1;
    }
    const double m = Since(t1);
    auto t2 = Clock::now();
    std::string out = spec->dump();
    const double d = Since(t2);
    out_size = out.size();
    auto t3 = Clock::now();
    auto rlimits = ocirlimit::SpecRlimitsOnly(text, path);
    const double x = Since(t3);
    if (!rlimits) {
      std::cerr << "specbench: " << rlimits.error().Text() << "\n";
      return 1;
    }
    if (r < warmup) continue;
    lean.micros.push_back(x);
    parse.micros.push_back(p);
    merge.micros.push_back(m);
    dump.micros.push_back(d);
    total.micros.push_back(p + m + d);
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("| step (%zu KiB in, %zu KiB out, %d runs) | median | min–max |\n|---|---|---|\n",
              text.size() / 1024, out_size / 1024, runs);
  for (const Step* s : {&parse, &merge, &dump, &total, &lean}) {
    auto [lo, hi] = std::minmax_element(s->micros.begin(), s->micros.end());
    std::printf("| %s | %.2f ms | %.2f–%.2f ms |\n", s->name, Median(s->micros) / 1000, *lo / 1000,
                *hi / 1000);
  }
  std::printf("\nPeak RSS of this process (text, one full DOM and one dump at a time): %ld KiB\n",
              ru.ru_maxrss);
  return 0;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 4 && args[0] == "--inflate") {
    return Inflate(args[1], args[2], std::stoul(args[3]));
  }
  int runs = 50, warmup = 5;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--runs" && i + 1 < args.size()) {
      runs = std::stoi(args[++i]);
    } else if (args[i] == "--warmup" && i + 1 < args.size()) {
      warmup = std::stoi(args[++i]);
    } else {
      file = args[i];
    }
  }
  if (file.empty() || runs < 1) {
    std::cerr << "usage: specbench --inflate IN OUT BYTES | specbench [--runs N] [--warmup N] "
                 "SPEC\n";
    return 2;
  }
  return Time(file, runs, warmup);
}

}  // namespace

int main(int argc, char** argv) {
  // A bad number (std::stoi) is a usage error with one line, not an abort.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "specbench: " << e.what() << "\n";
    return 2;
  }
}
