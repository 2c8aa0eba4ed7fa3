// Where the policy goes: every write error is an error, and none leaves a
// partial policy for `kubectl apply -f` to read. A full disk is RLIMIT_FSIZE
// (EFBIG) in a child process; tests/admission/output_test.sh also runs the
// real command against /dev/full, a closed stdout and a small tmpfs.
#include "cli/admission/admission_output.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/admission/admission_args.h"

namespace ocirlimit::cli {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/admission-output-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    DIR* d = opendir(path_.c_str());
    while (const dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    }
    closedir(d);
    return out;
  }

 private:
  std::string path_;
};

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs `body` in a child whose files may grow to at most `max_bytes`; its
// exit status: 0 when body returned true.
int InChildWithFileLimit(rlim_t max_bytes, const std::function<bool()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{max_bytes, max_bytes};
    setrlimit(RLIMIT_FSIZE, &lim);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

const std::string kPolicy(64 * 1024, 'y');

TEST(WriteOutput, MakesANewFileWholeWithMode0644) {
  TempDir dir;
  const std::string out = dir.path() + "/p.yaml";
  const mode_t old_mask = umask(077);
  ASSERT_TRUE(WriteOutput(out, kPolicy).ok());
  umask(old_mask);
  EXPECT_EQ(Read(out), kPolicy);
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644U);
}

TEST(WriteOutput, AFullDiskLeavesNoNewFile) {
  TempDir dir;
  const std::string out = dir.path() + "/p.yaml";
  EXPECT_EQ(InChildWithFileLimit(4096, [&] { return !WriteOutput(out, kPolicy).ok(); }), 0);
  EXPECT_EQ(dir.Names(), std::vector<std::string>{}) << "no empty file, no temp file";
}

TEST(WriteOutput, AFullDiskLeavesTheOldFileAsItWas) {
  TempDir dir;
  const std::string out = dir.path() + "/p.yaml";
  Write(out, "old policy\n");
  EXPECT_EQ(InChildWithFileLimit(4096,
                                 [&] {
                                   auto st = WriteOutput(out, kPolicy);
                                   return !st.ok() && st.error().Text().rfind(
                                                          "--output \"" + out + "\": ", 0) == 0;
                                 }),
            0);
  EXPECT_EQ(Read(out), "old policy\n");
  EXPECT_EQ(dir.Names(), std::vector<std::string>{"p.yaml"});
}

TEST(WriteOutput, DashIsStdout) {
  TempDir dir;
  const std::string captured = dir.path() + "/stdout";
  EXPECT_EQ(InChildWithFileLimit(RLIM_INFINITY,
                                 [&] {
                                   const int fd =
                                       open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
                                   return fd >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO &&
                                          chdir(dir.path().c_str()) == 0 &&
                                          WriteOutput("-", "policy\n").ok();
                                 }),
            0);
  EXPECT_EQ(Read(captured), "policy\n");
  EXPECT_EQ(dir.Names(), std::vector<std::string>{"stdout"}) << "no file named -";
}

TEST(WriteAllTo, DevFullIsAnError) {
  const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto st = WriteAllTo(fd, "policy\n");
  close(fd);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, ENOSPC);
}

TEST(WriteAllTo, AClosedFdIsAnError) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  close(fds[1]);
  auto st = WriteAllTo(fds[1], "policy\n");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EBADF);
}

TEST(WriteAllTo, ARegularFileIsCutBackWhereTheWriteBegan) {
  TempDir dir;
  const std::string out = dir.path() + "/redirected";
  Write(out, "before\n");
  EXPECT_EQ(InChildWithFileLimit(4096,
                                 [&] {
                                   const int fd = open(out.c_str(), O_WRONLY | O_APPEND);
                                   return fd >= 0 && !WriteAllTo(fd, kPolicy).ok();
                                 }),
            0);
  EXPECT_EQ(Read(out), "before\n") << "no truncated policy after what was there";
}

TEST(ConfigFound, SaysSoWhenTheDefaultPathIsAbsent) {
  TempDir dir;
  const std::string path = dir.path() + "/config.toml";
  auto st = ConfigFound({path, false});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().Text().rfind("no config found: \"" + path + "\" does not exist", 0), 0U)
      << st.error().Text();
  EXPECT_TRUE(ConfigFound({path, true}).ok()) << "a named config's absence is the loader's error";
  mkdir((dir.path() + "/config.d").c_str(), 0755);
  Write(dir.path() + "/config.d/10-fleet.toml", "[requests]\n");
  EXPECT_TRUE(ConfigFound({path, false}).ok()) << "a drop-in is a config";
  Write(path, "");
  EXPECT_TRUE(ConfigFound({path, false}).ok());
}

}  // namespace
}  // namespace ocirlimit::cli
