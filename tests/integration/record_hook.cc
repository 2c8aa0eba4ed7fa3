// A stand-in OCI hook for tests: records its argv, environment and stdin
// next to its own executable (EXE.argv, EXE.env: NUL-separated; EXE.stdin:
// raw bytes) and exits 0. Tests copy it where they need it, because
// /proc/self/exe resolves symlinks and the copy's path names the records.
// With a file EXE.exec naming a program, it is a tap instead: it records,
// then execs that program with the same argv and the recorded stdin.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

extern char** environ;

namespace {

bool Save(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  return static_cast<bool>(out);
}

std::string Joined(char** list) {
  std::string out;
  for (char** p = list; *p != nullptr; ++p) out.append(*p).push_back('\0');
  return out;
}

}  // namespace

int main(int /*argc*/, char** argv) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return 1;
  const std::string exe(buf, static_cast<size_t>(n));
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  if (!Save(exe + ".argv", Joined(argv)) || !Save(exe + ".env", Joined(environ)) ||
      !Save(exe + ".stdin", input)) {
    std::perror("record_hook: save");
    return 1;
  }
  std::ifstream exec_file(exe + ".exec");
  std::string target;
  if (!std::getline(exec_file, target)) return 0;
  int fd = open((exe + ".stdin").c_str(), O_RDONLY);
  if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) return 1;
  execv(target.c_str(), argv);
  std::perror(("record_hook: exec " + target).c_str());
  return 1;
}
